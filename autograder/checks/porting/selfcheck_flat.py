"""q3_gradcheck: ``check_my_op`` that flattens its float64 copy of x (``checked-flattened``,
blind round zm).

``x.detach().double().flatten()`` (or ``reshape(-1)``, ``view(-1)``: "my_op is a function of a
vector") runs gradcheck at a 1-D x even when x is 2-D. For an op whose backward is right at any
x the verdict is the same; for one right for a 1-D input only (S and A summed along the last
dimension, ``sum(-1, keepdim=True)``), the check at the flat x accepts what gradcheck at x
rejects. The checks ask last (earlier draws stay the seed's own) about that op at a 2-D x; a
wrong verdict there that is gradcheck's at ``x.flatten()`` and not at ``x`` is named.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..result import Verdict, with_probe

NAME = "checked-flattened"
#: The stand-in backward right for a 1-D x only (``worker.stand_in``).
ROWS = "rows"


def draw_matrix_x(rng: np.random.Generator) -> torch.Tensor:
    """A 2-D x (2-3 rows of 3-4 entries, both signs, away from 0), float32 or float64."""
    rows, cols = int(rng.integers(2, 4)), int(rng.integers(3, 5))
    values = rng.uniform(0.3, 2.0, (rows, cols)) * rng.choice([-1.0, 1.0], (rows, cols))
    return torch.tensor(values, dtype=torch.float32 if rng.random() < 0.5 else torch.float64)


def flattened(verdict: Verdict, got: Any, expected: bool, x: torch.Tensor,
              verdict_at: Callable[[torch.Tensor], bool]) -> Verdict:
    """``verdict`` on a 2-D x, named ``checked-flattened`` when ``got`` is gradcheck's verdict
    (``verdict_at``) at ``x.flatten()`` and not the one at ``x``."""
    if verdict.ok or verdict.misconception is not None or x.dim() < 2 \
            or not isinstance(got, (bool, np.bool_)) or bool(got) == expected:
        return verdict
    flat = verdict_at(x.reshape(-1))
    if bool(got) != flat:
        return verdict
    return with_probe(verdict, {
        "id": NAME, "established": f"gradcheck at x.flatten() says {flat}, at x {expected}",
        "calls": []}, misconception=NAME, message=(
        f"{verdict.message.rstrip()} Here my_op's backward is right for a 1-D input only, and "
        f"{bool(got)} is gradcheck's verdict at x.flatten(), a 1-D x of "
        f"{x.numel()} entries: gradcheck must run at the x it was given. A flattened copy "
        "(flatten(), reshape(-1), view(-1)) checks another function (one of a 1-D input), "
        f"not my_op at this {tuple(x.shape)} x; keep x's shape: "
        "x.detach().double().requires_grad_()."))
