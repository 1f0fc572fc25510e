"""q1_accumulation: every gradient a whole multiple of the right one (``gradient-multiplied``).

Each step's gradient added twice: a ``torch.func.vjp`` pullback called twice and both results
summed, ``backward()`` twice per step on one ``p ** 2`` (``retain_graph=True``), or ``p.grad``
added to by hand after a backward that already accumulated into it. Every gradient is then
exactly twice (or ``k`` times) the right one, cleared or not, for any ``p0``. Recognised on the
values alone (``multiple``), named only when a call at another ``p0`` (``confirm_p0``) shows
the same factor (``confirmed``). The values cannot tell these from a ``k·p ** 2`` built
instead of ``p ** 2``, so the advice says that reading too.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

from ..calling import call
from ..closeness import close_lists, is_float
from ..describing import describe, expected_text, fmt
from ..probes import recorded_call
from ..result import Verdict
from .accumulation_precision import confirm_p0

NAME = "gradient-multiplied"
#: The largest factor looked for: a step's gradient added that many times.
MAX_TIMES = 4
RTOL, ATOL = 1e-5, 1e-6


def _expected(p0: float, repeats: int, clear: bool) -> list[float]:
    return [2.0 * p0 * (1 if clear else k) for k in range(1, repeats + 1)]


def multiple(got: list[float], p0: float, repeats: int, clear: bool) -> int | None:
    """The whole ``k`` (2 to ``MAX_TIMES``) with every value ``k`` times the right one, else
    None."""
    expected = _expected(p0, repeats, clear)
    if len(got) != repeats or not expected or abs(expected[0]) <= ATOL:
        return None
    ratio = got[0] / expected[0]
    if not math.isfinite(ratio):  # an inf or NaN answer is no multiple (red-team round rt-1)
        return None
    k = round(ratio)
    if not 2 <= k <= MAX_TIMES:
        return None
    return k if close_lists(got, [k * e for e in expected], RTOL, k * ATOL) else None


def _times(k: int) -> str:
    return {2: "twice", 3: "three times"}.get(k, f"{k} times")


def hint(k: int, p0: float) -> str:
    """What a gradient ``k`` times too big is told."""
    return (f"Every gradient is exactly {_times(k)} the right one: each backward added "
            f"{fmt(2.0 * k * p0)} where the gradient of p ** 2 is 2*p0 = {fmt(2.0 * p0)}, so "
            f"each step's gradient was added {_times(k)}. A pullback from torch.func.vjp "
            "called twice with both results added, backward() called twice on one p ** 2 "
            "(retain_graph=True), or p.grad added to by hand after a backward (which already "
            f"accumulates into p.grad) all do this; so would {k} * p ** 2 built instead of "
            "p ** 2. Compute each step's gradient once: one (p ** 2).backward() per step, "
            "then record p.grad.item().")


def confirmed(verdict: Verdict, square_grads: Callable, p0: float, repeats: int, clear: bool,
              rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named from one answer) kept when a call at another p0 gives the same
    factor, with that call in its evidence and its message; else ``rejudge()``, the answer
    judged without this name."""
    k = multiple(verdict.evidence.got, p0, repeats, clear)
    other = confirm_p0(p0)
    got, failure = call(square_grads, "square_grads", other, repeats, clear=clear)
    if failure is not None or not isinstance(got, (list, tuple)) \
            or not all(is_float(v) for v in got) \
            or multiple([float(v) for v in got], other, repeats, clear) != k:
        return rejudge()
    expected = _expected(other, repeats, clear)
    probe = {"id": NAME, "established": f"{k} times the right gradients at another p0",
             "calls": [recorded_call("another p0", (other, repeats), expected, list(got))]}
    told = hint(k, p0)
    head = verdict.message.removesuffix(told).rstrip()
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{head} At another p0 too: square_grads({fmt(other)}, {repeats}, "
                f"clear={clear}) returned {describe(list(got))} for "
                f"{expected_text(expected)}. {told}")
