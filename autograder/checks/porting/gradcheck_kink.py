"""q3_gradcheck's backward where ``|x|`` has its kink: inputs with entries equal to 0.

There ``f`` is not differentiable, and any ``sign(0)`` in ``[-1, 1]`` gives a subgradient:
``torch.sign`` (0), ``torch.where(x >= 0, 1., -1.)`` (1) and the like are all right, so an
entry at 0 may lie anywhere between ``±|S|/(1+A)²`` times the upstream gradient. What is wrong
whatever ``sign(0)`` is taken to be: a value that is not finite (``x / x.abs()`` is 0/0 there),
and a wrong value at the other entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..describing import describe, fmt, plain
from ..result import Evidence, Verdict
from .common import judge_tensor


def with_zeros(rng: np.random.Generator, x: torch.Tensor) -> torch.Tensor:
    """``x`` with one or two of its entries, never all, set to exactly 0."""
    count = min(int(rng.integers(1, 3)), x.numel() - 1)
    at = torch.as_tensor(rng.choice(x.numel(), size=count, replace=False))
    x = x.detach().clone()
    x[at] = 0.0
    return x


def subgradient_bound(x: torch.Tensor, upstream: float) -> float:
    """How far from 0 an entry at x = 0 may be: ``|S|/(1+A)²`` times ``|upstream|``."""
    x = x.detach().double()
    return float((x ** 3).sum().abs() / (1 + x.abs().sum()) ** 2) * abs(upstream)


def positions(mask: torch.Tensor) -> str:
    """The indices where ``mask`` holds, as ``[0, 3]``."""
    return str(mask.nonzero().reshape(-1).tolist())


def judge_at_kink(got: Any, x: torch.Tensor, upstream: float, expected: torch.Tensor, *,
                  rtol: float, atol: float) -> Verdict:
    """The student's ``x.grad`` at an ``x`` with zeros, against ``expected`` (the formula with
    ``sign(0) = 0``, times ``upstream``) at the other entries and against the subgradient range
    at the zeros. A wrong value elsewhere comes back without a misconception, for the caller's
    diagnosis."""
    zero = x == 0
    bound = subgradient_bound(x, upstream)
    shown = (f"x.grad after MyOp.apply(x).backward({fmt(upstream)}) at x = {describe(x)} "
             f"(x is 0 at {positions(zero)})")
    inputs = {"x": plain(x), "upstream": upstream}
    verdict = judge_tensor(got, expected, shown, dtype=x.dtype, rtol=rtol, atol=atol,
                           inputs=inputs)
    if verdict.ok or verdict.misconception is not None:
        return verdict
    finite = torch.isfinite(got)
    if not finite.all():
        return not_finite(got, zero, shown, verdict.evidence)
    inside = torch.where(zero, got.detach().double().clamp(-bound, bound), expected)
    if judge_tensor(got, inside, shown, dtype=x.dtype, rtol=rtol, atol=atol).ok:
        return Verdict(True, evidence=verdict.evidence)
    if judge_tensor(got[~zero], expected[~zero], shown, dtype=x.dtype, rtol=rtol, atol=atol).ok:
        return Verdict(False, f"{shown} is {describe(got)}: where x is 0 it must lie within "
                       f"±{fmt(bound, 3)}, the values a sign(0) in [-1, 1] gives (|S|/(1+A)² "
                       "times the upstream gradient; torch.sign(x) gives 0 there).",
                       "outside-subgradient", verdict.evidence)
    return Verdict(False, f"{verdict.message} (Where x is 0, any value within ±{fmt(bound, 3)}, "
                   "from a sign(0) in [-1, 1], is accepted.)", None, verdict.evidence)


def not_finite(got: torch.Tensor, zero: torch.Tensor, shown: str,
               evidence: Evidence) -> Verdict:
    """A gradient with NaN or inf: named ``nan-at-zero`` when only entries at x = 0 have it."""
    bad = ~torch.isfinite(got)
    if (bad & ~zero).any():
        return Verdict(False, f"{shown} is {describe(got)}: not finite at {positions(bad)}, "
                       "where x is not 0. Look for a division that can be by 0 or an overflow.",
                       "non-finite-grad", evidence)
    return Verdict(False, f"{shown} is {describe(got)}: not finite where x is 0 "
                   f"({positions(bad)}). A division by x or |x| there (sign(x) as x / x.abs()) "
                   "divides 0 by 0; torch.sign(x) gives 0 at 0 (any value in [-1, 1] is a "
                   "subgradient of |x| there).", "nan-at-zero", evidence)
