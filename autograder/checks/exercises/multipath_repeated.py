"""q3_multipath: gradients read after more than one backward on one ``w``, which accumulated
into them (``w.backward(retain_graph=True)``, a leaf read, ``w.backward()`` again, the other
read), recognised by the answer being a whole multiple of the right gradient per leaf, the
multiples not all alike (``repeated_backward``), and confirmed at another point
(``confirmed``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from ..calling import call
from ..describing import describe, fmt
from ..probes import recorded_call
from ..result import Verdict
from .common import float_pair_problem

REPEATED = "repeated-backward"
#: The most backward calls whose accumulation is looked for.
MAX_TIMES = 8
#: Where the confirming call is made (the second when the first is the failing point).
CONFIRM_POINTS = ((1.25, -3.5), (-2.75, 4.5))


def multiples(got: tuple[float, float], expected: tuple[float, float],
              atol: np.ndarray) -> tuple[int, ...] | None:
    """Per leaf, the whole number ``k`` (1 to ``MAX_TIMES``) with ``got`` within ``k`` times
    the tolerance of ``k * expected``, or ``None`` when some leaf has none (a gradient too
    small to tell a multiple of counts as right, 1, when it is)."""
    ks = []
    for g, e, a in zip(got, expected, atol):
        if abs(e) <= a:
            if abs(g - e) > a:
                return None
            ks.append(1)
            continue
        if not math.isfinite(g / e):  # an inf or NaN answer is no multiple (red-team rt-1)
            return None
        k = round(g / e)
        if not 1 <= k <= MAX_TIMES or abs(g - k * e) > k * a:
            return None
        ks.append(k)
    return tuple(ks)


def _times(k: int) -> str:
    return {2: "twice", 3: "three times"}.get(k, f"{k} times")


FIX = ("One backward gives every leaf its gradient: call w.backward() once and read both .grad "
       "after it, or set the .grad to None between the backward calls, or use "
       "torch.autograd.grad(w, ({a}, {b})), which returns the gradients without accumulating "
       "into .grad.")


def repeated_backward(got: tuple[float, float], expected: tuple[float, float],
                      atol: np.ndarray, split: bool) -> tuple[str | None, str] | None:
    """What a wrong pair that is a whole multiple of the right one per leaf tells: multiples
    that differ between the leaves are gradients read after different numbers of backward
    calls (``repeated-backward``); one multiple for both fits that and a ``w`` that many times
    too big alike, told as two readings, unnamed. ``None`` when it is no such multiple."""
    ks = multiples(got, expected, atol)
    if ks is None or max(ks) == 1:
        return None
    names = ("a", "b") if split else ("x", "y")
    fix = FIX.format(a=names[0], b=names[1])
    if len(set(ks)) == 1:
        return None, (
            f"Both gradients are exactly {_times(ks[0])} the right ones. It fits two readings, "
            f"nothing here tells which: backward called {ks[0]} times on one w, each call "
            f"adding into {names[0]}.grad and {names[1]}.grad again (gradients accumulate). "
            f"{fix} Or a w {ks[0]} times too big: check it is built as "
            f"{'a * y + b ** 2' if split else 'x * y + x ** 2'}.")
    told = [f"{n}.grad is {'right' if k == 1 else f'exactly {_times(k)} the right gradient'}"
            for n, k in zip(names, ks)]
    return REPEATED, (
        f"{told[0]} and {told[1]}: gradients read after more than one backward call on one w "
        "accumulated into them. Every backward() adds its gradients into each leaf's .grad; "
        "w.backward(retain_graph=True) followed by w.backward() adds them twice, so a .grad "
        f"read after the k-th call holds k times the gradient. {fix}")


def confirmed(verdict: Verdict, fn: Callable, name: str, x0: Any, y0: Any,
              judge: Callable[..., Verdict], reference: Callable, atol_at: Callable) -> Verdict:
    """``verdict`` (named ``repeated-backward`` at ``(x0, y0)``) kept when a call at another
    point gives the same multiples of the right gradients (``elsewhere``); else the answer
    judged again with that reading left out."""
    ks = multiples(tuple(verdict.evidence.got), reference(float(x0), float(y0)),
                   atol_at(float(x0), float(y0)))

    def holds(other: tuple[float, float], point: tuple[float, float]) -> bool:
        return multiples(other, reference(*point), atol_at(*point)) == ks

    return elsewhere(verdict, fn, name, (x0, y0), holds, reference,
                     f"the same multiples {list(ks)} at another point",
                     lambda: judge(tuple(verdict.evidence.got), x0, y0, repeated=False))


def elsewhere(verdict: Verdict, fn: Callable, name: str, at: tuple[Any, Any],
              holds: Callable[[tuple[float, float], tuple[float, float]], bool],
              reference: Callable, established: str,
              otherwise: Callable[[], Verdict],
              points: tuple[tuple[float, float], ...] = CONFIRM_POINTS) -> Verdict:
    """``verdict``, named at the point ``at``, kept when ``fn`` called at another point
    (the first of ``points``, the second when ``at`` is the first) returns a pair of floats
    for which ``holds``, with that call in its evidence and its message; else
    ``otherwise()``, the answer judged without that reading."""
    point = points[1] if tuple(map(float, at)) == points[0] else points[0]
    other, failure = call(fn, name, *point)
    if failure is not None or float_pair_problem(other, "") is not None \
            or not holds(tuple(map(float, other)), point):
        return otherwise()
    probe = {"id": verdict.misconception, "established": established,
             "calls": [recorded_call("another point", point, list(reference(*point)),
                                     list(other))]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} So does {name}({fmt(point[0])}, {fmt(point[1])}), "
                f"which returned {describe(tuple(other))}.")
