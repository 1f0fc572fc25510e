"""The one closeness rule every check compares numbers with: ``|got - expected| <= atol +
rtol * |expected|`` elementwise, in float64, shapes equal, and NaN never close (NumPy's
``isclose`` rule, but one-sided: the tolerance scales with the grader's value only, so a wild
answer cannot widen it)."""

from __future__ import annotations

import numpy as np


def within(got, expected, rtol: float, atol: float) -> bool:
    """Whether ``got`` is within tolerance of ``expected`` everywhere (array-likes of numbers:
    floats, tuples, NumPy arrays; a torch tensor goes through ``.numpy()`` first)."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    return g.shape == e.shape and bool(np.all(np.abs(g - e) <= atol + rtol * np.abs(e)))
