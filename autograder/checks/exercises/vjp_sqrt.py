"""q4_vjp: pullbacks that lose the weights' signs, right wherever every weight is >= 0 (the
lesson's are). Through their square roots, as in folding them into the square
(``((weights.sqrt() * leaf) ** 2).sum().backward()``, "a weighted sum of squares is a sum of
squares of sqrt(w) * x"): NaN where a weight is negative, named ``weights-through-sqrt`` from
one answer (``at_negative_weights``) and kept only when the same x with the weights negated is
NaN at the other entries (``confirmed``). Their sizes kept or the negative ones zeroed
(``weights.abs()``, ``clamp(min=0)``): ``weights-sign-dropped``, matched as a pattern
(``sign_patterns``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

SQRT = "weights-through-sqrt"
HINT = ("Every entry whose weight is negative is NaN, and every other entry is right: the "
        "weights went through a square root (weights.sqrt(), weights ** 0.5, torch.sqrt), as "
        "when they are folded into the square, (sqrt(weights) * leaf) ** 2. That equals "
        "weights * leaf ** 2 only for non-negative weights: the square root of a negative "
        "number is NaN, and so is everything computed from it. The vector given to backward "
        "can have any sign: v = leaf ** 2, then v.backward(weights).")


SIGN_DROPPED = "weights-sign-dropped"
SIGNED = ("A weight is a coefficient of the sum, not a size: a negative weight makes its v[i] "
          "count negatively, and the gradient there points the other way. Call "
          "v.backward(weights) with the weights as given.")


def sign_patterns(xs: np.ndarray, ws: np.ndarray) -> list[tuple[str, Any, str]]:
    """For ``first_match``: the gradient with the weights' sizes kept and signs dropped, and
    with the negative weights zeroed; none where no weight is negative."""
    if not (ws < 0).any():
        return []
    return [(SIGN_DROPPED, 2.0 * xs * np.abs(ws),
             "This is 2*x*|weights|: right where a weight is positive, the sign flipped "
             "wherever it is negative. The weights' signs were dropped (weights.abs(), "
             f"torch.sqrt(weights ** 2)) before backward. {SIGNED}"),
            (SIGN_DROPPED, 2.0 * xs * np.maximum(ws, 0.0),
             "This is 2*x*weights with the negative weights set to 0 (weights.clamp(min=0), "
             f"torch.relu(weights)): those entries got no gradient. {SIGNED}")]


def at_negative_weights(values: Any, expected: np.ndarray, weights: torch.Tensor,
                        rtol: float, atol: float) -> bool:
    """``values`` NaN exactly where a weight is negative (there is one, and an entry that is
    not) and within tolerance of ``expected`` everywhere else."""
    values = np.asarray(values, dtype=np.float64)
    negative = weights.detach().double().numpy() < 0
    if values.shape != expected.shape or negative.all() or not negative.any():
        return False
    return bool((np.isnan(values) == negative).all()) and arrays_close(
        values[~negative], expected[~negative], rtol, atol)


def confirmed(verdict: Verdict, vjp_square: Callable, copies: tuple[torch.Tensor, torch.Tensor],
              tolerances: dict, rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named ``SQRT``) kept when ``vjp_square`` on ``copies`` (the failing x, and
    its weights negated) is NaN where those are negative and right elsewhere too, with that
    call in its evidence; else ``rejudge()``, the answer judged without that name."""
    x, weights = copies[0].detach().clone(), copies[1].clone()
    got, failure = call(vjp_square, "vjp_square", *copies)
    expected = 2.0 * x.double().numpy() * weights.double().numpy()
    rtol, atol = tolerances.get(x.dtype, tolerances[torch.float32])
    if failure is not None or not isinstance(got, torch.Tensor) or not at_negative_weights(
            got.detach().cpu().double().numpy(), expected, weights, rtol, atol):
        return rejudge()
    values = got.detach().cpu().double().numpy()
    probe = {"id": SQRT, "established": "NaN follows the negative weights", "calls": [
        recorded_call("weights negated", (x, weights), expected.tolist(), values.tolist())]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} With the weights negated, vjp_square(x, -weights) "
                f"returned {short(values)}: the NaN moved to the entries whose weights are now "
                "negative.")
