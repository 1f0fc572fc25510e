"""q4_vjp: the weights handed to backward transposed (``weights-transposed``).

``v.backward(weights.T)`` (or ``v.t().backward(weights)``, ``grad_outputs=weights.t()``) is
right for 1-D x, where a transpose changes nothing; on a square 2-D x it pairs each v[i, j]
with weights[j, i], and on a non-square one torch refuses the weights ("Mismatch in shape").
A wrong answer on a square x is matched against ``2 * x * weights.T`` (``patterns``, for the
diagnosis in ``vjp``); a call that raised on a non-square 2-D x is named only when a call on a
square x of its own, with the same dtype, answers ``2 * x * weights.T`` (``confirmed``): the
error text alone names nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

TRANSPOSED = "weights-transposed"
#: The seed of the confirming call's square input: fixed, so that feedback is the same every run.
CONFIRM_SEED = 20262
HINT = ("backward(weights) takes weights of the output's shape, one per entry of v: "
        "v.backward(weights) already computes the vector-Jacobian product v^T J, each v[i, j] "
        "counted weights[i, j] times, so no transpose is needed. Transposed weights pair "
        "v[i, j] with weights[j, i] on a square x and do not fit a non-square x at all: pass "
        "the weights as they are, v.backward(weights).")


def patterns(xs: np.ndarray, ws: np.ndarray) -> list[tuple[str, Any, str]]:
    """``2 * x * weights.T`` for a square 2-D input (the only shape where it is an answer)."""
    if ws.ndim != 2 or ws.shape[0] != ws.shape[1]:
        return []
    return [(TRANSPOSED, 2.0 * xs * ws.T,
             f"This is 2 * x * weights.T: each entry got the weight of its transposed "
             f"position. {HINT}")]


def _square(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(CONFIRM_SEED)
    n = max(2, min(x.shape))
    xs, ws = rng.uniform(-5.0, 5.0, (n, n)), rng.uniform(-3.0, 3.0, (n, n))
    return torch.from_numpy(xs).to(x.dtype), torch.from_numpy(ws).to(x.dtype)


def confirmed(verdict: Verdict, vjp_square: Callable, x: torch.Tensor,
              tolerances: dict) -> Verdict:
    """``verdict`` (a call on ``x`` that raised) named ``TRANSPOSED`` when x is 2-D and not
    square and one call on a square x of the same dtype answers ``2 * x * weights.T``, not the
    right VJP; else ``verdict`` as it was."""
    if (verdict.ok or verdict.misconception != "raised" or x.dim() != 2
            or x.shape[0] == x.shape[1] or x.dtype not in tolerances):
        return verdict
    sx, sw = _square(x)
    got, failure = call(vjp_square, "vjp_square", sx.clone(), sw.clone())
    if failure is not None or not isinstance(got, torch.Tensor) or got.shape != sx.shape:
        return verdict
    values = got.detach().cpu().double().numpy()
    xs, ws = sx.double().numpy(), sw.double().numpy()
    rtol, atol = tolerances[x.dtype]
    transposed, right = 2.0 * xs * ws.T, 2.0 * xs * ws
    if not arrays_close(values, transposed, rtol, atol) or arrays_close(values, right, rtol,
                                                                        atol):
        return verdict
    probe = {"id": TRANSPOSED, "established": "a square x answered 2 * x * weights.T",
             "calls": [recorded_call("square x", (sx, sw), right.tolist(), values.tolist())]}
    return dataclasses.replace(
        verdict, misconception=TRANSPOSED,
        message=(f"{verdict.message.rstrip()} On a square x {tuple(sx.shape)} of the same dtype "
                 f"it returned {short(values)}, which is 2 * x * weights.T, not 2 * x * weights "
                 f"{short(right)}: the weights were transposed, and a non-square x's transposed "
                 f"weights no longer have v's shape. {HINT}"),
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]))
