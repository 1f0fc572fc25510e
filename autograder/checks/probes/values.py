"""Probes on the numbers alone, with no further call: the answer is the reference rounded to a
number of decimals (``probe.rounded``), or the reference times one constant factor
(``probe.scaled``).
"""

from __future__ import annotations

import math

from ..describing import fmt
from .subject import Diagnosis

#: A few float32 steps, relative: an answer rounded in float32 (``torch.round(grad,
#: decimals=4)``) holds the float32 nearest the rounded decimal, 13.762200355 for 13.7622 (blind
#: round zzs: a 1e-9 match missed it)
_SAME = 2.5e-7
#: How far, relative, the value a student rounded may be from the grader's float64 reference
#: (float32 arithmetic): near a half-step the two round to neighbouring decimals
_NOISE = 2e-6


def rounded(got: list[float], expected: list[float]) -> Diagnosis | None:
    """The answer is the reference rounded to 1..8 decimals (and rounding changed something):
    every value a number of that many decimals (within float32's precision) and within half a
    step of the reference (with float32's noise). Where more counts than one fit (a value whose
    last kept digits are zeros fits fewer decimals too), every one that fits is said."""
    if not got or len(got) != len(expected) or not all(map(math.isfinite, [*got, *expected])):
        return None
    fitting = [(decimals, changed) for decimals in range(1, 9)
               if (changed := _rounding_changed(got, expected, decimals))]
    if not fitting:
        return None
    decimals, changed = fitting[0]
    # the value rounding changed most, shown with the digits that tell it apart
    # (blind round zzp: 1.12880004 to 6 digits read "1.1288 became 1.1288")
    exact, shown = max(changed, key=lambda eg: abs(eg[1] - eg[0]))
    shown = round(shown, decimals)
    digits = next((d for d in range(6, 18) if fmt(exact, d) != fmt(shown)), 17)
    # blind round zzzp: round(g, 4) gave -0.828 and -0.61, which fit 3 decimals as well; the
    # fewest alone read "3 decimals" to a student who wrote 4. A count past the fewest is
    # said where every value is within its half step with no more than float32's relative
    # noise: ``_NOISE`` at least 1 in absolute terms lets a small value fit every finer grid
    fitting = [fitting[0], *((d, c) for d, c in fitting[1:]
                             if all(abs(g - e) <= 0.5 / 10.0 ** d + _NOISE * abs(e)
                                    for g, e in zip(got, expected)))]
    counts = [str(d) for d, _ in fitting]
    said = counts[0] if len(counts) == 1 else f"{', '.join(counts[:-1])} or {counts[-1]}"
    return Diagnosis("probe.rounded", (
        f"Every value equals the expected one rounded to {said} decimal"
        f"{'s' if len(counts) > 1 or decimals > 1 else ''} ({fmt(exact, digits)} became "
        f"{fmt(shown)}): something rounds the result; return it at full precision."),
        [{"probe": "rounded", "decimals": decimals, "got": got, "expected": expected,
          **({"fitting": [d for d, _ in fitting]} if len(fitting) > 1 else {})}])


def _rounding_changed(got: list[float], expected: list[float],
                      decimals: int) -> list[tuple[float, float]]:
    """The ``(expected, got)`` pairs rounding to ``decimals`` changed, where every value fits
    that rounding; an empty list where one does not fit or none changed."""
    scale = 10.0 ** decimals
    changed = []
    for g, e in zip(got, expected):
        # off the grid by float32's rounding, which is relative to the value itself: a
        # small gradient rounded to 6 decimals (0.000199 for 0.000198364, blind round zzx)
        # is on its grid to far better than a quarter step
        grid = _SAME * abs(g) * scale
        if grid >= 0.5 and abs(g - e) > _NOISE * max(1.0, abs(e)):
            return []  # too large for its decimals to show (1e308: no grid to be on)
        if grid < 0.5 and abs(g * scale - round(g * scale)) > grid or \
                abs(g - e) > 0.5 / scale + _NOISE * max(1.0, abs(e)):
            return []
        if grid < 0.25 and abs(g - e) > 1e-9 * max(1.0, abs(e)):
            changed.append((e, g))
    return changed


def scaled(got: list[float], expected: list[float]) -> Diagnosis | None:
    """The answer is the reference times one constant (other than 1), on two or more values."""
    pairs = [(g, e) for g, e in zip(got, expected) if abs(e) > 1e-9]
    if len(pairs) < 2 or len(got) != len(expected) or not all(map(math.isfinite, got)):
        return None
    ratios = [g / e for g, e in pairs]
    k = ratios[0]
    if abs(k) < 1e-9 or abs(k - 1) < 1e-6 or any(abs(r - k) > 1e-6 * max(1.0, abs(k))
                                                  for r in ratios):
        return None
    if any(abs(g) > 1e-9 for g, e in zip(got, expected) if abs(e) <= 1e-9):
        return None
    sign = " (the sign is flipped)" if abs(k + 1) < 1e-6 else ""
    return Diagnosis("probe.scaled", (
        f"Every value is {fmt(round(k, 6))} times the expected one{sign}: the answer is off by "
        "a constant factor."), [{"probe": "scaled", "factor": k, "got": got,
                                 "expected": expected}])
