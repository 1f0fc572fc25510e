"""q3_gradcheck: ``A`` taken as a matrix norm of a 2-D ``x`` (blind round zh).

``A = sum(|x|)`` is the L1 norm of a vector, so ``torch.linalg.norm(x, 1)`` (or NumPy's
``np.linalg.norm(x, 1)``) looks like it. It is, for a 1-D ``x`` (the lesson's, the public
test's); for a 2-D ``x`` it is the MATRIX 1-norm, the largest column sum of ``|x|``, and for
a 0-d ``x`` it raises. The shaped checks ask at a 2-D ``x`` before the 0-d one
(``gradcheck_shapes``): a failure there is ``matrix-norm`` when the student's forward at that
``x`` is ``S / (1 + A')`` with ``A'`` one of the matrix norms below and not the right value.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from ..result import Verdict
from .gradcheck_mistakes import MATCH_ATOL, MATCH_RTOL

NAME = "matrix-norm"
#: ``(what the student likely wrote, what it is for a 2-D x, the norm)``
_NORMS: tuple[tuple[str, str, Callable[[torch.Tensor], torch.Tensor]], ...] = (
    ("torch.linalg.norm(x, 1)", "the matrix 1-norm, the largest column sum of |x|",
     lambda x: torch.linalg.matrix_norm(x, 1)),
    ("torch.linalg.norm(x, float('inf'))", "the matrix inf-norm, the largest row sum of |x|",
     lambda x: torch.linalg.matrix_norm(x, float("inf"))),
    ("torch.linalg.norm(x)", "the Frobenius norm, the square root of the sum of x**2",
     lambda x: torch.linalg.matrix_norm(x, "fro")),
    ("torch.linalg.norm(x, 2)", "the spectral norm, the largest singular value of x",
     lambda x: torch.linalg.matrix_norm(x, 2)),
)


def matrix_norm(verdict: Verdict, x: torch.Tensor, forward: Callable[[], Any],
                what: str) -> Verdict:
    """``verdict`` (a failure at the shaped ``x``), named ``matrix-norm`` when ``x`` is 2-D and
    the student's ``forward()`` value there is ``S / (1 + A')`` for a matrix norm ``A'``."""
    if verdict.ok or x.dim() != 2 or verdict.misconception in ("raised", NAME):
        return verdict
    got = forward()
    if not (isinstance(got, torch.Tensor) and got.numel() == 1):
        return verdict
    got = got.detach().double().reshape(())
    xd = x.detach().double()
    S, A = (xd ** 3).sum(), xd.abs().sum()
    right = S / (1 + A)
    for written, meaning, norm in _NORMS:
        value = S / (1 + norm(xd))
        if _close(got, value) and not _close(right, value):
            raises = " (and, with an ord given, it raises for a 0-d x)" if ", " in written else ""
            return dataclasses.replace(verdict, misconception=NAME, message=(
                f"{verdict.message.rstrip()} {what} at this 2-D x of shape {tuple(x.shape)} is "
                f"sum(x**3) / (1 + A') with A' = {float(norm(xd)):.6g}, {meaning}, where "
                f"A = sum(|x|) over all entries is {float(A):.6g}. For a 2-D x, {written} is a "
                f"matrix norm, not the sum of |x| over all entries{raises}: use x.abs().sum() "
                "(or torch.linalg.vector_norm(x, 1)), the same for every shape."))
    return verdict


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.isclose(a, b, rtol=MATCH_RTOL, atol=MATCH_ATOL))
