"""Small helpers shared by the ``autograd-exercises`` checks (q2-q5).

They live here rather than in ``calling.py`` because that module is shared with the porting
checks; anything here that proves generally useful can move there later.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import numpy as np
import torch

from ..closeness import within
from ..describing import DIGITS, describe, fmt
from ..result import Verdict

#: torch dtype -> the numpy dtype an exported array must have.
NUMPY_DTYPES = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}


def is_int(x: Any) -> bool:
    """A Python or numpy integer; not a bool, not a tensor, not a float."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def dtype_name(dtype: Any) -> str:
    """``float32`` for ``torch.float32`` or ``np.dtype('float32')``."""
    return str(dtype).replace("torch.", "")


def float_pair_problem(got: Any, what: str) -> str | None:
    """Why ``got`` is not a pair of Python floats (``None`` when it is).

    Args:
        got: the student's return value.
        what: the two names, for the message (``"(x.grad, y.grad)"``).
    """
    if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list)):
        return f"returned {describe(got)}; expected a tuple of two Python floats {what}."
    if len(got) != 2:
        return f"returned {len(got)} values; expected exactly two, {what}."
    if any(isinstance(v, torch.Tensor) for v in got):
        return (f"returned tensors ({describe(list(got))}), not Python floats: use .item() on "
                "each gradient.")
    if not all(isinstance(v, float) for v in got):
        return f"returned {describe(list(got))}; both entries must be Python floats (use .item())."
    return None


def pair_close(got: tuple[float, float], expected: tuple[float, float], rtol: float,
               atol: float) -> bool:
    """Both entries within ``atol + rtol * |expected|``."""
    return within(got, expected, rtol, atol)


def first_match(got: Any, expected: Any, patterns: Iterable[tuple[str, Any, str]],
                same: Any) -> tuple[str | None, str]:
    """The first known mistake whose predicted output ``same(got, prediction)`` holds.

    A prediction that equals the correct answer is skipped: it cannot tell anything apart.

    Args:
        got: the student's (wrong) value.
        expected: the correct value.
        patterns: ``(misconception id, predicted output, hint)`` in order of specificity.
        same: ``same(a, b) -> bool``, the comparison used for matching.
    """
    for name, predicted, hint in patterns:
        if predicted is not None and not same(expected, predicted) and same(got, predicted):
            return name, hint
    return None, ""


def renamed(verdict: Verdict, misconception: str, hint: str) -> Verdict:
    """``verdict`` (typically "your code raised") with a named mistake and a next step added."""
    return dataclasses.replace(verdict, misconception=misconception,
                               message=f"{verdict.message.rstrip('.')}. {hint}")


def array_error(got: np.ndarray, expected: np.ndarray) -> float:
    """Largest absolute difference, in float64 (``inf`` when either holds a NaN)."""
    if got.size == 0:
        return 0.0
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    return float(np.nanmax(diff)) if not np.isnan(diff).any() else float("inf")


def arrays_close(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> bool:
    """Same shape and ``|g - e| <= atol + rtol * |e|`` everywhere (NaN never matches)."""
    return within(got, expected, rtol, atol)


def short(values: np.ndarray | list, digits: int = DIGITS) -> str:
    """A few numbers of an array, for messages (``digits`` significant digits)."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1).tolist()
    body = ", ".join(fmt(float(v), digits) for v in flat[:6])
    return f"[{body}{', ...' if len(flat) > 6 else ''}]"


def reused(shown: str, name: str, what: str, advice: str, evidence: Any) -> Verdict:
    """The answer of ``shown`` holds what a later call of ``name`` returned (``call_again``):
    ``result-reused``, with ``what`` the function returns and ``advice`` the fix."""
    return Verdict(False, f"{shown} returned {what} that changed when {name} was called again "
                   f"(on other inputs of the same shape and dtype): it holds the later call's "
                   f"answer. {advice}", "result-reused", evidence)


def handed_out_again(verdict: Verdict, back: int | None, shown: str, what: str,
                     advice: str) -> Verdict:
    """``verdict`` (right so far), failed as ``result-reused`` when the answer of ``shown``
    lives in memory an answer ``back`` calls before it holds (``calling.call_then_again``): a
    pool of buffers handed out in turn, which the next call alone does not overwrite (red
    team rt-4: a ring of two)."""
    if not verdict.ok or back is None:
        return verdict
    return Verdict(False, f"{shown} returned {what} in memory that an earlier call's answer "
                   "also holds: answers kept between calls and handed out in turn are "
                   f"overwritten when their turn comes round again. {advice}", "result-reused",
                   verdict.evidence)


def flat(t: torch.Tensor) -> torch.Tensor:
    """``t``'s entries in one dimension, a leaf of their own that requires grad as ``t`` does:
    the nearest input outside a probe's ``multi-dimensional`` class."""
    return t.detach().reshape(-1).clone().requires_grad_(t.requires_grad)
