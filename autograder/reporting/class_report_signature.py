"""How a wrong answer is wrong, without its values (``signature``): what the class report
groups the wrong answers that no check named by.

Every submission draws hidden inputs of its own, so two students with the same mistake never
return the same numbers; what they share is how their answer relates to the expected one (a
shape, a dtype, a constant ratio such as x2 or x-1, a type), which is input-free.
"""

from __future__ import annotations

import math


def _numbers(x) -> list[float] | None:
    """The numbers in a piece of evidence (a float, a list, a tensor's ``values``), flat."""
    if isinstance(x, dict) and "values" in x:
        x = x["values"]
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return [float(x)]
    if isinstance(x, list):
        flat: list[float] = []
        for item in x:
            inner = _numbers(item)
            if inner is None:
                return None
            flat += inner
        return flat
    return None


def _kind_of(x) -> str:
    if isinstance(x, dict) and "dtype" in x:
        return f"tensor {x.get('dtype')} of shape {tuple(x.get('shape') or ())}"
    if isinstance(x, list):
        return f"list of {len(x)}"
    return type(x).__name__ if not isinstance(x, str) else "text"


def signature(evidence: dict) -> str:
    """How ``got`` is wrong relative to ``expected``, without either's values: ``"returned
    None"``, ``"tensor float32 of shape (3,) where tensor float64 of shape (3,) expected"``,
    ``"x2 the expected values"``, ``"wrong values"``."""
    got, expected = evidence.get("got"), evidence.get("expected")
    if got is None:
        return "returned None" if expected is not None else "wrong value"
    if _kind_of(got) != _kind_of(expected):
        return f"returned {_kind_of(got)} where {_kind_of(expected)} expected"
    g, e = _numbers(got), _numbers(expected)
    if not g or not e or len(g) != len(e):
        return "wrong value"
    if not all(math.isfinite(v) for v in g):
        return "NaN or infinite values"
    ratios = {round(a / b, 3) for a, b in zip(g, e) if abs(b) > 1e-9}
    if len(ratios) == 1 and all(abs(a) < 1e-9 for a, b in zip(g, e) if abs(b) <= 1e-9):
        r = ratios.pop()
        return "all zeros" if r == 0 else f"x{r:g} the expected values"
    return "wrong values (no constant ratio)"
