"""q4_vjp: a pullback that lost x's signs before the square, right wherever every entry of x
is >= 0 (the lesson's are). The leaf built from the magnitudes (``x.abs()``, ``sqrt(x ** 2)``,
"a square only sees the size of x"): ``2 * |x| * weights``; or with x's negative entries
zeroed (``x.clamp(min=0)``, ``relu``): ``2 * relu(x) * weights``. Matched as a pattern on the
failing answer (``sign_patterns``), named ``x-sign-dropped`` only when a second call agrees,
on the same x negated or, where that is all >= 0, on another drawn x (``confirmed``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

X_SIGN = "x-sign-dropped"
FIX = ("The square keeps the sign in its gradient: d(x ** 2)/dx = 2 * x, negative where x is. "
       "Make the leaf from x as it is, leaf = x.detach().clone().requires_grad_(), then "
       "(leaf ** 2).backward(weights).")
HINTS = {
    "abs": ("This is 2*|x|*weights: right where x >= 0, the sign flipped at every negative "
            "entry of x. The leaf was built from x's magnitudes (x.abs(), torch.sqrt(x ** 2)), "
            "so autograd differentiated |x| ** 2 at |x|, not x ** 2 at x. " + FIX),
    "zeroed": ("This is 2*x*weights with the negative entries of x giving 0 (x.clamp(min=0), "
               "torch.relu): the leaf (or what was squared) had x's negative entries set to 0, "
               "so those entries got no gradient. " + FIX),
}


def predictions(xs: np.ndarray, ws: np.ndarray) -> dict[str, np.ndarray]:
    """What each way of losing x's signs returns for ``(xs, ws)``."""
    return {"abs": 2.0 * np.abs(xs) * ws, "zeroed": 2.0 * np.maximum(xs, 0.0) * ws}


def sign_patterns(xs: np.ndarray, ws: np.ndarray) -> list[tuple[str, Any, str]]:
    """For ``first_match``: the two predictions; none where no entry of x is negative."""
    if not (xs < 0).any():
        return []
    return [(X_SIGN, predicted, HINTS[kind]) for kind, predicted in predictions(xs, ws).items()]


def _kind(message: str) -> str:
    return next(kind for kind, hint in HINTS.items() if hint in message)


def _values(got: Any, x: torch.Tensor) -> np.ndarray | None:
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        return None
    return got.detach().cpu().double().numpy()


def _negated(x: torch.Tensor, copy: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``copy(x)`` (x's input class kept) with its values negated."""
    negated = copy(x)
    with torch.no_grad():
        negated.neg_()
    return negated


def confirmed(verdict: Verdict, vjp_square: Callable, x: torch.Tensor, weights: torch.Tensor,
              others: list[tuple[torch.Tensor, torch.Tensor]], tolerances: dict,
              copy: Callable[[torch.Tensor], torch.Tensor],
              rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named ``X_SIGN``) kept when ``vjp_square`` on a second input, x negated
    (or the first of ``others`` where the same loss would show), returns the same kind of
    wrong answer, with that call in its evidence; else ``rejudge()``, the answer judged
    without that name."""
    kind = _kind(verdict.message)
    candidates = [("x negated", _negated(x, copy), weights),
                  *(("another x", copy(ox), ow) for ox, ow in others)]
    for what, ox, ow in candidates:
        xs, ws = ox.detach().double().numpy(), ow.detach().double().numpy()
        expected, predicted = 2.0 * xs * ws, predictions(xs, ws)[kind]
        rtol, atol = tolerances.get(ox.dtype, tolerances[torch.float32])
        if not arrays_close(predicted, expected, rtol, atol):
            break
    else:
        return rejudge()
    shown = ox.detach().clone()
    got, failure = call(vjp_square, "vjp_square", ox, ow.clone())
    values = None if failure is not None else _values(got, shown)
    if values is None or not arrays_close(values, predicted, rtol, atol):
        return rejudge()
    probe = {"id": X_SIGN, "established": f"the same sign loss on {what}", "calls": [
        recorded_call(what, (shown, ow), expected.tolist(), values.tolist())]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} So is vjp_square on {what}, "
                f"{short(xs)}: it returned {short(values)} instead of {short(expected)}.")
