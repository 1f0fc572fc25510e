"""q4_vjp: a pullback reduced by a mean where the vector-Jacobian product needs a sum
(``(weights * v).mean()``, ``(weights * v).sum(-1).mean()``, ``.mean(-1).sum()``,
``v.backward(weights / x.numel())``): ``2 * x * weights`` divided by the number of entries of
x, its rows (``shape[0]``) or its last dimension (``shape[-1]``). Named ``vjp-averaged`` from
one answer (``patterns``) and kept only when a second x of another shape, whose three counts
differ from the first's, is divided by the same count of its own (``confirmed``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

AVERAGED = "vjp-averaged"
#: Each count a mean divides by: how the message says it, the mean that gives it, its size.
KINDS: dict[str, tuple[str, str, Callable[[tuple[int, ...]], int]]] = {
    "numel": ("entries of x", "(weights * v).mean(), or v.backward(weights / x.numel())",
              lambda shape: int(np.prod(shape))),
    "rows": ("rows of x (its first dimension)", "(weights * v).sum(-1).mean(), right "
             "only for a 1-D x, whose sum over the last dimension is already one number; or "
             "(weights * v).mean(0).sum(): averaging over a batch of rows",
             lambda shape: shape[0]),
    "last": ("entries along the last dimension of x", "(weights * v).mean(-1).sum(), averaging over the "
             "features", lambda shape: shape[-1]),
}
#: Shapes for the confirming call, the first whose counts are all new used: each count of the
#: failing x's shape then fits a different one there.
SHAPES = ((3, 5), (5, 7), (7, 4), (4, 9))


def _counts(shape: tuple[int, ...]) -> dict[str, int]:
    return {kind: size(shape) for kind, (_, _, size) in KINDS.items()} if shape else {}


def fits(values: Any, expected: np.ndarray, rtol: float, atol: float) -> list[str]:
    """The kinds (``KINDS``) whose count n > 1 makes ``values`` equal ``expected / n``."""
    values = np.asarray(values, dtype=np.float64)
    return [kind for kind, n in _counts(expected.shape).items()
            if n > 1 and arrays_close(values, expected / n, rtol, atol)]


def hint(kinds: list[str], shape: tuple[int, ...]) -> str:
    """What a pullback averaged over ``kinds`` (all with one count for ``shape``) is told."""
    n = _counts(shape)[kinds[0]]
    over = " or ".join(KINDS[k][0] for k in kinds)
    how = "; or ".join(KINDS[k][1] for k in kinds)
    alike = " (the same count here)" if len(kinds) > 1 else ""
    return (f"Every entry is 2 * x * weights divided by {n}, the number of {over}{alike}: the "
            f"weighted values were reduced by a mean where the vector-Jacobian product needs a "
            f"sum ({how}). A mean divides the vector given back to each v[i] by the count, so "
            "leaf.grad is the right one over that count; it agrees only where the count is 1. "
            "v.backward(weights) is the gradient of (weights * v).sum(): call v.backward("
            "weights), or (weights * v).sum().backward(), with no mean.")


def patterns(expected: np.ndarray) -> list[tuple[str, np.ndarray, str]]:
    """For ``first_match``: one ``(AVERAGED, expected / n, hint)`` per distinct count n > 1
    of the shape, its kinds told together."""
    by_count: dict[int, list[str]] = {}
    for kind, n in _counts(expected.shape).items():
        if n > 1:
            by_count.setdefault(n, []).append(kind)
    return [(AVERAGED, expected / n, hint(kinds, expected.shape))
            for n, kinds in by_count.items()]


def other_input(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A 2-D x (and weights) in x's dtype whose counts are all unlike x's and each other:
    fixed values, none zero, the weights not all one."""
    seen = set(_counts(tuple(x.shape)).values())
    shape = next(s for s in SHAPES if not seen & set(_counts(s).values()))
    rng = np.random.default_rng(20260)
    xs = rng.uniform(0.5, 4.5, shape) * rng.choice([-1.0, 1.0], shape)
    ws = rng.uniform(0.5, 2.5, shape) * rng.choice([-1.0, 1.0], shape)
    return torch.from_numpy(xs).to(x.dtype), torch.from_numpy(ws).to(x.dtype)


def confirmed(verdict: Verdict, vjp_square: Callable, x: torch.Tensor, weights: torch.Tensor,
              tolerances: dict, rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named ``AVERAGED`` on ``x`` and ``weights``) kept when ``vjp_square`` on a
    second x of another shape (``other_input``) is divided by a count of the same kind of its
    own, the message then told the kinds that hold on both; else ``rejudge()``, the answer
    judged without that name."""
    rtol, atol = tolerances[x.dtype]
    right = 2.0 * x.detach().double().numpy() * weights.detach().double().numpy()
    first = fits(verdict.evidence.got, right, rtol, atol)
    other, other_w = other_input(x)
    got, failure = call(vjp_square, "vjp_square", other.clone(), other_w.clone())
    expected = 2.0 * other.double().numpy() * other_w.double().numpy()
    kinds = [k for k in fits(got.detach().cpu().double().numpy(), expected, rtol, atol)
             if k in first] if (failure is None and isinstance(got, torch.Tensor)
                                and tuple(got.shape) == tuple(other.shape)) else []
    if not kinds:
        return rejudge()
    values = got.detach().cpu().double().numpy()
    n = _counts(tuple(other.shape))[kinds[0]]
    probe = {"id": AVERAGED, "established": f"divided by {kinds[0]} on another shape",
             "calls": [recorded_call("another shape", (other, other_w), expected.tolist(),
                                     values.tolist())]}
    shape = tuple(x.shape)
    head = verdict.message.rstrip().removesuffix(hint(first, shape)).rstrip()
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{head} {hint(kinds, shape)} The same on an x of shape "
                f"{tuple(other.shape)}: it returned {short(values)}, the right {short(expected)} divided by {n}.")
