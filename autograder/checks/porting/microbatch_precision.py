"""q2_microbatch: the float64 problem computed in float64 (``low-precision``, blind round zg).

The contract asks the float64 problem's answer to be computed in float64, not only returned
as float64. ``F.binary_cross_entropy_with_logits((Xj @ w).float(), yj.float())`` ("BCE wants
float logits"), a loss cast with ``.float()``, a share made as ``torch.tensor(b_j / B)``
(float32 by default): each rounds part of the computation to float32 and comes back float64,
off by ~1e-8 relative, well inside the float32 problems' tolerance (rtol 1e-4). A right
answer in any style (mean losses weighted, summed losses over B, the softplus form,
torch.split or narrow, a stale grad cleared) is within ~1e-15 of the float64 reference, so the
float64 problem is judged at ``RTOL, ATOL`` here, on answers the float32 tolerance passed.

A failing answer is named when its error is of float32 size: no more than ``FACTOR`` times the
error of the grader's replay in float32 (the closed form with ``w``, ``X`` and ``y`` cast to
float32, cast back), and the answer at a second draw (``w`` halved and negated, the sizes in
reverse order) is too; one that fits a share rounded to 5-8 decimals is ``weights-rounded``
instead (``microbatch_rounded``: its replay in float64 is exact to this tolerance, where a float32
computation's error is not). Independent float32 roundings do not agree digit for digit, so the fit
is on the size of the error, not on its values. Only a failing answer costs the second call.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from ..result import Verdict
from .common import allclose, call_named, judge_tensor
from .microbatch_rounded import FINE_WAYS, rounded

NAME = "low-precision"
#: The float64 problem's tolerance: right answers in every style stay within ~1e-15.
RTOL, ATOL = 1e-9, 1e-12
#: How many times the float32 replay's error an answer's error may be and still be named
#: (float32 computations cast back measured up to ~4; a share rounded to 5 decimals, ~30-300).
FACTOR = 8.0

ADVICE = ("The inputs were float64 here (w, X and y), and so must the computation be: part of "
          "yours ran in float32 (a .float() on the logits, the targets or the loss, or a "
          "float32 tensor such as torch.tensor(b_j / B) mixed in) and was cast back, so the "
          "answer is float64 with float32's ~7 significant digits. Cast nothing: the inputs' "
          "dtype is the computation's (F.binary_cross_entropy_with_logits takes float64 "
          "logits and targets as they are).")


def in_float32(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The full-batch mean gradient computed in float32, cast back to float64."""
    X32, w32, y32 = X.float(), w.detach().float(), y.float()
    return (X32.T @ (torch.sigmoid(X32 @ w32) - y32) / X.shape[0]).double()


def _error(got: torch.Tensor, expected: torch.Tensor) -> float:
    return float((got.detach().double().reshape(-1) - expected.reshape(-1)).abs().max())


def float32_sized(got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                  reference: Callable[..., torch.Tensor]) -> bool:
    """Whether ``got`` (float64) misses the float64 tolerance by an error of float32 size."""
    if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64):
        return False
    right = reference(w, X, y)
    if got.shape != right.shape or allclose(got.detach(), right, RTOL, ATOL):
        return False
    replay = max(_error(in_float32(w, X, y), right), 1e-12)
    return _error(got, right) <= FACTOR * replay


def precise(verdict: Verdict, accumulated_grad: Callable, got: Any, w: torch.Tensor,
            X: torch.Tensor, y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
            reference: Callable[..., torch.Tensor], means: Callable[..., list[torch.Tensor]],
            shown: str, inputs: dict) -> Verdict:
    """``verdict`` on the float64 problem (``w``: its values before the call; ``X``, ``y``:
    the grader's copies; ``stale``: the stale grad it arrived with), judged again at the
    float64 tolerance when it passed: a miss there fails, named ``weights-rounded`` when it
    fits a share cut to 5-8 decimals (``microbatch_rounded.FINE_WAYS``, exact to float64's
    tolerance), else ``low-precision`` when it and a second draw's are of float32 size."""
    if not verdict.ok:
        return verdict
    strict = judge_tensor(got, reference(w, X, y), shown, dtype=torch.float64, rtol=RTOL,
                          atol=ATOL, inputs=inputs)
    if strict.ok:
        return verdict
    message = (f"{strict.message} The float64 problem is judged at float64's tolerance: its "
               "answer must be computed in float64, not only returned as float64.")
    strict = dataclasses.replace(strict, message=message)
    cut = rounded(strict, accumulated_grad, got, w, X, y, sizes, stale, means, RTOL, ATOL,
                  FINE_WAYS)
    if cut.misconception is not None or not float32_sized(got, w, X, y, reference):
        return cut
    w2, sizes2 = (-0.5 * w.detach()).requires_grad_(), list(reversed(sizes))
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2, X.clone(), y.clone(),
                          list(sizes2))
    if not float32_sized(again, w2, X, y, reference):
        return strict
    return dataclasses.replace(strict, misconception=NAME, message=(
        f"{message} Its error is of float32's size (about the grader's own computation in "
        f"float32, cast back), again at a second w with the sizes in reverse order. {ADVICE}"))
