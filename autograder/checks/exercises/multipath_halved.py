"""q3_multipath: a split_path_grads whose square path's gradient is half the right one while
the product path's is right: x0 shared out between the two leaves (``a = b = x0 / 2``), or the
square written ``b ** 2 / 2``. The same numbers come from both, so the message tells both;
named only when another point shows it too (``confirmed_halved``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..describing import fmt
from ..result import Verdict
from .multipath_repeated import elsewhere

HALVED = "square-path-halved"


def _fits(got: tuple[float, float], x0: float, y0: float, atol: np.ndarray) -> bool:
    """a.grad right (y0) and b.grad x0, half of 2 * x0, told apart from it (x0 not ~0)."""
    return (abs(got[0] - y0) <= atol[0] and abs(got[1] - x0) <= atol[1]
            and abs(x0) > 2 * atol[1])


def halved(got: tuple[float, float], x0: float, y0: float,
           atol: np.ndarray) -> tuple[str, str] | None:
    """``(HALVED, why)`` when ``got`` is ``(y0, x0)`` for ``split_path_grads(x0, y0)``."""
    if not _fits(got, x0, y0, atol):
        return None
    return HALVED, (
        f"a.grad is right and b.grad is {fmt(got[1])}, x0: half the square path's gradient "
        "2 * x0. The gradient of b ** 2 is 2 * b, so b held x0 / 2: x0 was shared out between "
        "the two leaves (a = b = x0 / 2, or b = x0 - a). A leaf stands for the whole x on its "
        "own path, so both start at x0: a = torch.tensor(float(x0), requires_grad=True), and b "
        "the same way. Or the square was written b ** 2 / 2 (0.5 * b ** 2), which halves its "
        "gradient: w is a * y + b ** 2.")


def confirmed_halved(verdict: Verdict, fn: Callable, name: str, x0: Any, y0: Any,
                     judge: Callable[..., Verdict], reference: Callable,
                     atol_at: Callable) -> Verdict:
    """``verdict`` (named ``HALVED`` at ``(x0, y0)``) kept when another point gives
    ``(y0, x0)`` too; else the answer judged again with that reading left out."""
    return elsewhere(verdict, fn, name, (x0, y0),
                     lambda other, point: _fits(other, *point, atol_at(*point)), reference,
                     "the square path's gradient half the right one at another point",
                     lambda: judge(tuple(verdict.evidence.got), x0, y0, halving=False))
