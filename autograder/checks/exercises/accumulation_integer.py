"""q1_accumulation: gradients recorded as whole numbers (an integer buffer such as
``np.zeros_like(np.arange(repeats))``, ``torch.zeros(n, dtype=torch.long)``, ``int()``,
``math.floor``, ``round``), recognised when every returned value is the right one with its
fraction dropped in one way (``integer_ways``), at the failing p0 and again at another
(``confirmed``): right wherever ``2 * p0 * k`` is a whole number, as for the lesson's 2.0."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

from ..calling import call
from ..closeness import is_float
from ..describing import describe, expected_text, fmt
from ..probes import recorded_call
from ..result import Verdict
from .accumulation_precision import replay32

INTEGER = "gradients-truncated-to-integers"


def _nearest(v: float) -> set[float]:
    """Both neighbours at a tie: ``round`` and ``torch.round`` round half to even, a
    ``floor(v + 0.5)`` away from it."""
    return {float(round(v)), float(math.floor(v + 0.5)), float(math.ceil(v - 0.5))}


#: Each way of dropping a fraction: (how the message says it, its whole numbers of a value,
#: what does it).
WAYS: tuple[tuple[str, Callable[[float], set[float]], str], ...] = (
    ("truncated toward zero", lambda v: {float(math.trunc(v))},
     "stored in an integer buffer (np.zeros_like(np.arange(n)) is an int64 array like the "
     "index array it copies; torch.zeros(n, dtype=torch.long); np.zeros(n, dtype=int)), "
     "or passed through int() or .astype(int)"),
    ("rounded down", lambda v: {float(math.floor(v))}, "passed through math.floor, np.floor or "
     "// 1"),
    ("rounded to the nearest whole number", _nearest, "passed through round(), torch.round or "
     "np.rint"),
)
#: Where the confirming call is made, and the other for when the failing call had that one.
#: Its gradients, 1.26 k, fall far from whole numbers, and a fraction of p0 from 0.5 to 0.75
#: tells them apart from twice a whole p0 (p0 truncated or rounded, ``torch.tensor(int(p0))``,
#: a mistake of its own): 2 * int(0.63) = 0 and 2 * round(0.63) = 2, where the gradient 1.26
#: made whole is 1.
CONFIRM_P0S = (0.63, -1.63)


def _right(p0: float, repeats: int, clear: bool) -> list[tuple[float, float]]:
    """Each right gradient in float64 and as the contract's float32 leaf accumulates it: a
    value within a rounding of a whole number may be on either side of it."""
    exact = [2.0 * p0 * (1 if clear else k) for k in range(1, repeats + 1)]
    return list(zip(exact, replay32(p0, repeats, clear)))


def integer_ways(got: list[float], p0: float, repeats: int, clear: bool) -> list[str]:
    """How (``WAYS``) every value of ``got`` is a right gradient with its fraction dropped,
    where dropping it changed some value; empty when no way fits."""
    right = _right(p0, repeats, clear)
    if len(got) != len(right) or all(g in pair for g, pair in zip(got, right)):
        return []
    return [how for how, whole, _ in WAYS
            if all(g in whole(a) | whole(b) for g, (a, b) in zip(got, right))]


def integer_hint(ways: list[str]) -> str:
    """What a square_grads whose gradients were made whole in ``ways`` is told."""
    how = " or ".join(ways)
    what = "; or ".join(w for h, _, w in WAYS if h in ways)
    alike = " (these give the same numbers here)" if len(ways) > 1 else ""
    return (f"Every value is the right gradient {how}{alike}: the gradients lost their "
            f"fractions, as they do when {what}. An integer buffer keeps whole numbers only: "
            "storing a float in it silently drops the fraction, so only gradients that are "
            "whole numbers (2 * p0 * k for p0 = 2.0) come out right. Keep them as floats: "
            "append p.grad.item() to a list, or fill a float buffer (np.zeros(repeats), "
            "torch.zeros(repeats)).")


def confirm_p0(p0: float) -> float:
    """Where the confirming call of ``confirmed`` is made."""
    return CONFIRM_P0S[1] if p0 == CONFIRM_P0S[0] else CONFIRM_P0S[0]


def confirmed(verdict: Verdict, square_grads: Callable, p0: float, repeats: int, clear: bool,
              rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named ``INTEGER`` from one answer) kept when a call at another p0
    (``confirm_p0``) is made whole in a way that fits the failing answer too, the message
    then told the ways that fit both, with that call in its evidence; else ``rejudge()``,
    the answer judged without that name."""
    other = confirm_p0(p0)
    got, failure = call(square_grads, "square_grads", other, repeats, clear=clear)
    ways = [w for w in integer_ways([float(v) for v in got], other, repeats, clear)
            if w in integer_ways(verdict.evidence.got, p0, repeats, clear)] if (
        failure is None and isinstance(got, (list, tuple)) and len(got) == repeats
        and all(is_float(v) for v in got)) else []
    if not ways:
        return rejudge()
    first = integer_hint(integer_ways(verdict.evidence.got, p0, repeats, clear))
    head = verdict.message.removesuffix(first).rstrip()
    expected = [2.0 * other * (1 if clear else k) for k in range(1, repeats + 1)]
    probe = {"id": INTEGER, "established": "made whole at another p0", "calls": [
        recorded_call("another p0", (other, repeats), expected, list(got))]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{head} At another p0 too: square_grads({fmt(other)}, {repeats}, "
                f"clear={clear}) returned {describe(list(got))} for {expected_text(expected)}. "
                f"{integer_hint(ways)}")
