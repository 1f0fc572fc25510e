"""q4_vjp: answers that depend on earlier calls with the same shape and dtype.

A leaf kept between calls (a module dict keyed by shape and dtype, a global, a default
argument), refilled with x's values and never given a fresh ``.grad``: autograd adds each
call's pullback into the kept ``.grad``, so every call after the first with that key returns
the sum of all those calls' pullbacks (``grad-accumulated-across-calls``). An answer kept per
shape and dtype and returned again, whatever x and weights are, is ``answer-cached``.

The check asks the first case's shape and dtype again with fresh values, last
(``draw_repeat``), so that an answer of that kind is judged; a wrong answer is named only when
two more calls with fresh inputs of its shape and dtype show the mistake (``confirmed``): the
second answer is the first plus its own pullback, or both are the failing answer again.
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
from .vjp_stale import STALE, stale

ACCUMULATED = "grad-accumulated-across-calls"
CACHED = "answer-cached"
#: The seed of the confirming calls' inputs: fixed, so that feedback is the same every run.
CONFIRM_SEED = 20261


def draw_repeat(rng: np.random.Generator, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Fresh x and weights of ``x``'s shape and dtype (contiguous, not requiring grad)."""
    xs = rng.uniform(-5.0, 5.0, size=tuple(x.shape))
    ws = rng.uniform(-3.0, 3.0, size=tuple(x.shape))
    ws.flat[0] = 1.5 + rng.uniform(0.0, 1.0)
    return torch.from_numpy(xs).to(x.dtype), torch.from_numpy(ws).to(x.dtype)


def pullback(x: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
    """``2 * x * weights`` in float64."""
    return 2.0 * x.detach().double().numpy() * weights.detach().double().numpy()


def _values(got: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    """A copy of ``got``'s values taken now (a live ``.grad`` changes at the next call), or
    ``None`` when it is not a tensor of ``shape``."""
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != shape:
        return None
    return got.detach().cpu().double().numpy().copy()


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``a`` within tolerance of ``b``, the absolute part scaled by the larger of the two (a
    sum rounds at the size of its terms, not of its result)."""
    scale = float(max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0)))
    return arrays_close(a, b, rtol, atol + rtol * scale)


ACCUMULATED_HINT = (
    "Each call adds its own pullback to what the earlier calls left: the leaf is kept between "
    "calls (in a dict, a global or a default argument) and backward adds into its .grad, "
    "which nothing clears, so every call after the first with a shape and dtype returns the "
    "sum of all those calls' pullbacks. Make a new leaf on every call: "
    "leaf = x.detach().clone().requires_grad_().")
CACHED_HINT = (
    "An answer kept for the shape and dtype of x (a dict or cache) is returned again whatever "
    "x and weights are: the pullback depends on their values. Compute it on every call from a "
    "new leaf: leaf = x.detach().clone().requires_grad_().")


def _earlier_sum(values: np.ndarray, x: torch.Tensor, weights: torch.Tensor,
                 earlier: list[tuple[torch.Tensor, torch.Tensor]], rtol: float,
                 atol: float) -> str:
    """A sentence when ``values`` is exactly this call's pullback plus those of ``earlier``
    (the check's calls before it with the same shape and dtype); ``""`` otherwise."""
    if not earlier:
        return ""
    total = pullback(x, weights) + sum(pullback(*pair) for pair in earlier)
    if not _close(values, total, rtol, atol):
        return ""
    return (f" This answer is this call's 2 * x * weights plus those of the {len(earlier)} "
            f"earlier call{'s' if len(earlier) > 1 else ''} with this shape and dtype.")


def confirmed(verdict: Verdict, vjp_square: Callable, x: torch.Tensor, weights: torch.Tensor,
              earlier: list[tuple[torch.Tensor, torch.Tensor]], tolerances: dict) -> Verdict:
    """``verdict`` (wrong, unnamed, on ``x`` and ``weights``) named ``ACCUMULATED`` or
    ``CACHED`` when two more calls with fresh inputs of x's shape and dtype show it; else
    ``verdict`` as it was.

    Args:
        earlier: the check's calls before this one with x's shape and dtype (their inputs).
        tolerances: (rtol, atol) per dtype.
    """
    got = verdict.evidence.got if verdict.evidence else None
    if verdict.ok or verdict.misconception is not None or x.dtype not in tolerances:
        return verdict
    rtol, atol = tolerances[x.dtype]
    shape = tuple(x.shape)
    failing = np.asarray(got, dtype=np.float64) if got is not None else None
    if failing is None or failing.shape != shape:
        return verdict
    rng = np.random.default_rng(CONFIRM_SEED)
    inputs = [draw_repeat(rng, x) for _ in range(2)]
    answers = []
    for xi, wi in inputs:
        answer, failure = call(vjp_square, "vjp_square", xi.clone(), wi.clone())
        values = None if failure else _values(answer, shape)
        if values is None:
            return verdict
        answers.append(values)
    (x1, w1), (x2, w2) = inputs
    first, second = answers
    p1, p2 = pullback(x1, w1), pullback(x2, w2)
    if _close(first, p1, rtol, atol) or _close(second, p2, rtol, atol):
        return verdict  # right on a fresh call: not a mistake of this kind
    if _close(second, first + p2, rtol, atol) and not _close(p2, 0.0 * p2, rtol, atol):
        name, hint = ACCUMULATED, (
            f"Two more calls with fresh x and weights of shape {shape} and the same dtype "
            f"returned {short(first)} and then {short(second)}: the second is the first plus "
            f"its own 2 * x * weights {short(p2)}. {ACCUMULATED_HINT}"
            f"{_earlier_sum(failing, x, weights, earlier, rtol, atol)}")
    elif np.array_equal(first, failing) and np.array_equal(second, failing):
        name, hint = CACHED, (
            f"Two more calls with fresh x and weights of shape {shape} and the same dtype "
            f"returned this same answer again (expected {short(p1)} and {short(p2)}). "
            f"{CACHED_HINT}")
    else:  # a leaf kept with an earlier call's values?
        hint = stale(failing, weights, inputs, answers, earlier, rtol, atol)
        if hint is None:
            return verdict
        name = STALE
    probe = {"id": name, "established": "two calls with fresh inputs of one shape and dtype",
             "calls": [recorded_call("same shape and dtype", pair, expected.tolist(),
                                     values.tolist())
                       for pair, expected, values in zip(inputs, (p1, p2), answers)]}
    return dataclasses.replace(
        verdict, misconception=name, message=f"{verdict.message.rstrip()} {hint}",
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]))
