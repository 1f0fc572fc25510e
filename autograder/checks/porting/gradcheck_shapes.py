"""q3_gradcheck: ``x`` of any shape (blind round zb).

The op sums over all entries of ``x``, so the contract's ``x`` may be 1-D, 2-D or 0-d. An op
written with ``torch.dot`` (``S = torch.dot(x, x * x)``, ``A = torch.dot(x.abs(),
ones_like(x))``, the NumPy series' ``np.dot``), ``torch.vdot`` or ``x @ x``, is
right for a 1-D ``x`` (the lesson's, the public test's) and raises for any other shape. The
checks ask last (their earlier inputs stay the seed's own) at a 2-D and a 0-d ``x``; an
answer that raises there and is right at the same values flattened to 1-D is
``only-1d-input``.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import torch

from ..result import Verdict

NAME = "only-1d-input"


def shaped_xs(rng: np.random.Generator) -> list[torch.Tensor]:
    """A 2-D ``x`` (2 or 3 rows of 2-4 columns) and a 0-d one, float64, with |x| in
    [0.2, 3] and both signs in the 2-D one (``gradcheck.draw_x``'s values)."""
    rows, cols = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    signs = rng.permutation(np.resize([-1.0, 1.0], rows * cols))
    matrix = (rng.uniform(0.2, 3.0, rows * cols) * signs).reshape(rows, cols)
    scalar = float(rng.uniform(0.2, 3.0) * rng.choice([-1.0, 1.0]))
    return [torch.tensor(matrix, dtype=torch.float64), torch.tensor(scalar, dtype=torch.float64)]


def only_1d(verdict: Verdict, x: torch.Tensor, flat_ok: Callable[[torch.Tensor], bool],
            what: str) -> Verdict:
    """``verdict`` (a failure at the shaped ``x``), named ``only-1d-input`` when it raised and
    the same check at ``x.reshape(-1)`` (``flat_ok``) passes."""
    if verdict.ok or verdict.misconception != "raised" or x.dim() == 1 \
            or not flat_ok(x.reshape(-1)):
        return verdict
    shape = f"{x.dim()}-D" if x.dim() else "0-d"
    return dataclasses.replace(verdict, misconception=NAME, message=(
        f"{verdict.message.rstrip()} {what} is right at the same values flattened to 1-D but "
        f"raises for this {shape} x of shape {tuple(x.shape)}: f sums over all entries, so x "
        "may have any shape (1-D, 2-D, 0-d). torch.dot (and np.dot-style products such as "
        "torch.vdot or x @ x) takes only 1-D tensors: write the sums as (x ** 3).sum() and "
        "x.abs().sum(), which work for every shape."))
