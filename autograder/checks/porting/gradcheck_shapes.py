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

from ..raised_hints import gradient_shape_kind, gradient_shapes
from ..result import Verdict

NAME = "only-1d-input"


def shaped_xs(rng: np.random.Generator) -> list[torch.Tensor]:
    """A 2-D ``x`` (2 or 3 rows of 2-4 columns), then, when that one is square, a non-square
    2-D one (``non_square``), then a 0-d one; float64, with |x| in [0.2, 3] and both signs in
    the 2-D ones (``gradcheck.draw_x``'s values). The square x stays the seed's own (a
    transposed gradient is accepted by autograd there and seen in its values); the added one
    is drawn after the others, so every earlier draw stays as it was."""
    rows, cols = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    matrix = _matrix(rng, rows, cols)
    scalar = float(rng.uniform(0.2, 3.0) * rng.choice([-1.0, 1.0]))
    matrices = [matrix, non_square(rng)] if rows == cols else [matrix]
    return [*(torch.tensor(m, dtype=torch.float64) for m in matrices),
            torch.tensor(scalar, dtype=torch.float64)]


def non_square(rng: np.random.Generator) -> np.ndarray:
    """A 2-D x of 2 or 3 rows and another number of columns (2-4): at a square x a gradient
    laid out in x's sizes reversed (``g.reshape(x.shape[::-1])``, ``g.view(x.shape[::-1])``)
    is the right one, so every seed asks at a non-square x as well."""
    rows, cols = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    return _matrix(rng, rows, cols + 1 if cols >= rows else cols)


def _matrix(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    signs = rng.permutation(np.resize([-1.0, 1.0], rows * cols))
    return (rng.uniform(0.2, 3.0, rows * cols) * signs).reshape(rows, cols)


def only_1d(verdict: Verdict, x: torch.Tensor, flat_ok: Callable[[torch.Tensor], bool],
            what: str) -> Verdict:
    """``verdict`` (a failure at the shaped ``x``), named ``only-1d-input`` when it raised and
    the same check at ``x.reshape(-1)`` (``flat_ok``) passes."""
    if verdict.ok or verdict.misconception != "raised" or x.dim() == 1:
        return verdict
    shapes = gradient_shapes(verdict.message)  # a gradient refused: named here if flat only
    if shapes is not None and gradient_shape_kind(*shapes) != "flat" \
            or not flat_ok(x.reshape(-1)):
        return verdict
    shape = f"{x.dim()}-D" if x.dim() else "0-d"
    return dataclasses.replace(verdict, misconception=NAME, message=(
        f"{verdict.message.rstrip()} {what} is right at the same values flattened to 1-D but "
        f"raises for this {shape} x of shape {tuple(x.shape)}: f sums over all entries, so x "
        f"may have any shape (1-D, 2-D, 3-D, 0-d). {_what_raised(verdict.message)}"))


#: What raised, told by torch's own words (round zf: a flattened gradient; zg: a 0-d x
#: iterated), each with the way to write it for every shape.
_CAUSES = (
    (("1D tensors expected", "need to be at least 1D", "shapes cannot be multiplied"),
     "torch.dot (and np.dot-style products such as torch.vdot or x @ x) takes only 1-D "
     "tensors: write the sums as (x ** 3).sum() and x.abs().sum(), which work for every shape."),
    (("iteration over a 0-d tensor", "len() of a 0-d tensor", "invalid index of a 0-dim",
      "tensor has no dimensions"),
     "Iterating over x's entries (for v in x, len(x), x[i], unbind) needs a dimension, and a "
     "0-d x has none: compute with whole-tensor ops (x ** 2, torch.sign(x), sums), which work "
     "for every shape, 0-d included."),
    (("invalid gradient",),
     "backward returned a gradient of another shape than x's (a flattened one): autograd "
     "needs the gradient in x's own shape. Keep x's shape in forward and backward (no "
     "reshape(-1) or flatten of what you save), or give the gradient back as .reshape(x.shape)."),
)


def _what_raised(message: str) -> str:
    """The hint for the raise in ``message``, by torch's words; a general one otherwise."""
    for words, hint in _CAUSES:
        if any(w in message for w in words):
            return hint
    return ("Something in it works only for a 1-D x (torch.dot, iterating over entries, "
            "a flatten): write it with whole-tensor ops, (x ** 3).sum(), x.abs().sum(), "
            "torch.sign(x), which work for every shape.")
