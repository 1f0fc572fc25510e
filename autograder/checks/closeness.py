"""The one closeness rule every check compares numbers with: ``|got - expected| <= atol +
rtol * |expected|`` elementwise, in float64, shapes equal, and NaN never close (NumPy's
``isclose`` rule, but one-sided: the tolerance scales with the grader's value only, so a wild
answer cannot widen it). ``close_lists`` is the same rule for lists of Python floats."""

from __future__ import annotations

from typing import Any

import numpy as np


def within(got, expected, rtol: float, atol: float) -> bool:
    """Whether ``got`` is within tolerance of ``expected`` everywhere (array-likes of numbers:
    floats, tuples, NumPy arrays; a torch tensor goes through ``.numpy()`` first). A ``got``
    with no numbers to read is never within."""
    e = np.asarray(expected, dtype=np.float64)
    try:  # the student's side: an int too large for a float, a string, a meta tensor
        g = np.asarray(got, dtype=np.float64)
    except (OverflowError, TypeError, ValueError, NotImplementedError, RuntimeError):
        return False
    return g.shape == e.shape and bool(np.all(np.abs(g - e) <= atol + rtol * np.abs(e)))


def is_float(x: Any) -> bool:
    """A Python float (numpy's float64 is one); not a tensor, not a bool or an int."""
    return isinstance(x, float)


def float_list(x: Any) -> bool:
    """A list of Python floats (the losses ``train_logreg`` returns)."""
    return isinstance(x, list) and all(is_float(v) for v in x)


def near(got: Any, expected: float, rtol: float, atol: float = 0.0) -> bool:
    """Whether one number of the student's is within tolerance of the grader's ``expected``:
    a real number (not a bool, not a string) with ``|got - expected| <= atol + rtol *
    |expected|``. NaN, infinities off ``expected`` and ints too large for a float are never
    near: write the test as ``not near(...)``, never as ``abs(got - expected) > tol``, which
    NaN passes."""
    if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
        return False
    try:
        g = float(got)
    except OverflowError:
        return False
    return bool(abs(g - expected) <= atol + rtol * abs(expected))


def max_abs_error(got: list[float], expected: list[float]) -> float:
    """Largest absolute difference between two equal-length float lists."""
    return max((abs(g - e) for g, e in zip(got, expected)), default=0.0)


def close_lists(got: list[float], expected: list[float], rtol: float, atol: float) -> bool:
    """Elementwise ``|g - e| <= atol + rtol * |e|`` (NaN never matches)."""
    return len(got) == len(expected) and all(
        abs(g - e) <= atol + rtol * abs(e) for g, e in zip(got, expected)
    )
