"""q3_multipath: a gradient returned as 0 where the right one is nonzero but tiny next to the
other (``tiny-path-zeroed``): a "noise floor" threshold (float32's resolution or eps times the
total), or a rounding, applied to the returned gradients. A gradient is exact however small
next to the other path's; the last hidden points put one path below a millionth of the other.
Named only when the function is right at another, ordinary point (``confirmed_tiny``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from ..calling import call
from ..describing import describe, fmt
from ..probes import recorded_call
from ..result import Verdict
from .common import float_pair_problem, pair_close
from .multipath_repeated import CONFIRM_POINTS

TINY = "tiny-path-zeroed"
#: How far below the other a right gradient must be for its zeroing to be read as "tiny".
TINY_RATIO = 1e-3


def tiny_zeroed(got: tuple[float, float], expected: tuple[float, float], atol: np.ndarray,
                leaves: tuple[str, str]) -> tuple[str, str] | None:
    """``(TINY, why)`` when one entry of ``got`` is exactly 0 where the right one is nonzero
    (beyond its tolerance) and at most ``TINY_RATIO`` of the other, which is right."""
    for i in (0, 1):
        small, big = abs(expected[i]), abs(expected[1 - i])
        if (got[i] == 0.0 and small > atol[i] and small <= TINY_RATIO * big
                and abs(got[1 - i] - expected[1 - i]) <= atol[1 - i]):
            return TINY, (
                f"{leaves[i]} is 0.0 where it should be {fmt(expected[i])}, about "
                f"{small / big:.1g} of {leaves[1 - i]} ({fmt(expected[1 - i])}), which is right. "
                f"A gradient is exact however small it is next to the other: it is not rounding "
                f"noise to be cut off. Something set the small one to zero, such as a threshold "
                f"relative to the total (a 'noise floor' of float32's resolution 1e-6 or eps "
                f"1.2e-7) or a rounding to a few decimals. Return each gradient as backward "
                f"left it ({leaves[0]}.item(), {leaves[1]}.item()), with no threshold.")
    return None


def confirmed_tiny(verdict: Verdict, fn: Callable, name: str, x0: Any, y0: Any,
                   judge: Callable[..., Verdict], reference: Callable,
                   atol_at: Callable) -> Verdict:
    """``verdict`` (named ``TINY`` at ``(x0, y0)``) kept when the function is right at an
    ordinary point (the paths of like size), with that call in its evidence and message; else
    the answer judged again with that reading left out."""
    point = CONFIRM_POINTS[1] if (float(x0), float(y0)) == CONFIRM_POINTS[0] else CONFIRM_POINTS[0]
    other, failure = call(fn, name, *point)
    expected = reference(*point)
    if failure is not None or float_pair_problem(other, "") is not None \
            or not pair_close(tuple(map(float, other)), expected, 0.0, atol_at(*point)):
        return judge(tuple(verdict.evidence.got), x0, y0, tiny=False)
    probe = {"id": TINY, "established": "the gradients right where the paths are of like size",
             "calls": [recorded_call("another point", point, list(expected), list(other))]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} {name}({fmt(point[0])}, {fmt(point[1])}) returned "
                f"{describe(tuple(other))}, right: only the tiny gradient is lost.")
