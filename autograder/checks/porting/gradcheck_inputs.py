"""q3_gradcheck: inputs the contract allows that the first rounds did not draw (red team rt-8).

``f(x) = Σx³ / (1 + Σ|x|)`` sums over every entry of an ``x`` of any shape and floating dtype,
and its gradient ``3x²/(1+A) − S·sign(x)/(1+A)²`` holds at every ``x`` away from the kink at 0.
Asked last (the earlier inputs stay the seed's own):

- a 3-D ``x``: sums taken per matrix or along a dimension (``x.abs().sum(-1)``, a loop over
  ``x[i]``) are right at a 1-D ``x`` and wrong here: ``sums-per-slice`` when the same values
  flattened to 1-D are right;
- an ``x`` with entries near 0 (``|x|`` in [1e-4, 0.05], still at least 100 of gradcheck's
  ``eps`` from the kink): a derivative of ``|x|`` clamped or thresholded near 0
  (``x / x.abs().clamp(min=0.05)``) is right at the first rounds' ``|x| >= 0.2`` and wrong
  here: ``near-zero-entries`` when only those entries are off;
- a float32 ``x``, judged at float32's precision: a backward that computes another formula in
  another dtype (the quotient term only ``if x.dtype == torch.float64``) is
  ``dtype-dependent`` when the same values in float64 are right.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..describing import describe, fmt, plain
from ..result import Verdict
from .common import judge_tensor
from .gradcheck_partial import term_scale
from .gradcheck_shapes import only_1d

#: How near 0 the near entries are: at least 100 of gradcheck's eps (1e-6) from the kink,
#: under the first rounds' 0.2; one below 1e-3 (red team rt-9 clamped |x| at 1e-3), one above.
NEAR = (1e-4, 0.05)
#: float32's tolerance for a gradient computed in float32: relative, and absolute as a share
#: of the gradient's largest term (float32 rounds each term to about 6e-8 of itself).
FLOAT32_RTOL, FLOAT32_SHARE = 1e-4, 1e-5


def deep_x(rng: np.random.Generator) -> torch.Tensor:
    """A float64 ``x`` of shape (2, 2, 2 or 3), |x| in [0.2, 3], both signs."""
    cols = int(rng.integers(2, 4))
    signs = rng.permutation(np.resize([-1.0, 1.0], 4 * cols))
    return torch.tensor((rng.uniform(0.2, 3.0, 4 * cols) * signs).reshape(2, 2, cols),
                        dtype=torch.float64)


def near_zero_x(rng: np.random.Generator) -> torch.Tensor:
    """A float64 1-D ``x`` of 4-8 entries, two of them near 0, one of each sign: |x| in
    [1e-4, 1e-3] and in [1e-3, 0.05] (``NEAR``, log-uniform), the rest with |x| in [0.2, 3]."""
    size = int(rng.integers(4, 9))
    values = rng.uniform(0.2, 3.0, size) * rng.permutation(np.resize([-1.0, 1.0], size))
    near = rng.choice(size, 2, replace=False)
    low, mid, high = np.log10(NEAR[0]), -3.0, np.log10(NEAR[1])
    values[near] = 10 ** np.array([rng.uniform(low, mid), rng.uniform(mid, high)]) \
        * rng.permutation([-1.0, 1.0])
    return torch.tensor(values, dtype=torch.float64)


def by_slices(verdict: Verdict, x: torch.Tensor, flat_ok: Callable[[torch.Tensor], bool],
              what: str) -> Verdict:
    """``verdict`` (wrong values at a 2-D or 3-D ``x``, no cause named yet: not a raise, not
    ``only-1d-input``) named ``sums-per-slice`` when the same values flattened to 1-D are right
    (``flat_ok``)."""
    if verdict.ok or verdict.misconception is not None or x.dim() < 2 \
            or not flat_ok(x.reshape(-1)):
        return verdict
    return dataclasses.replace(verdict, misconception="sums-per-slice", message=(
        f"{verdict.message.rstrip()} {what} is right at the same values flattened to 1-D but "
        f"not at this {x.dim()}-D x of shape {tuple(x.shape)}: A = Σ|x| and S = Σx³ sum over "
        "every entry of x, whatever its shape. Sum with no dim (x.abs().sum(), (x ** 3).sum()), "
        "not per row or per matrix."))


def named_at_shape(verdict: Verdict, x: torch.Tensor, flat_ok: Callable[[torch.Tensor], bool],
                   raised_what: str, values_what: str) -> Verdict:
    """``verdict`` (at a shaped ``x``) named by what the same values flattened to 1-D show: a
    raise there is ``only-1d-input`` (``gradcheck_shapes``), wrong values ``sums-per-slice``."""
    return by_slices(only_1d(verdict, x, flat_ok, raised_what), x, flat_ok, values_what)


def near_zero(verdict: Verdict, got: Any, x: torch.Tensor, right: torch.Tensor) -> Verdict:
    """``verdict`` (wrong gradient at ``near_zero_x``) named ``near-zero-entries`` when the
    entries near 0 are off by over 100 times more than any other: the derivative of ``|x|``
    is off near 0 (a clamp, a threshold, an eps added to ``|x|``), not the formula."""
    if verdict.ok or not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return verdict
    err, near = (got.detach().double() - right).abs(), x.abs() < NEAR[1]
    elsewhere = float(err[~near].max()) if bool((~near).any()) else 0.0
    if not float(err[near].max()) > 100 * elsewhere:
        return verdict
    off = near & (err > 100 * elsewhere)
    return dataclasses.replace(verdict, misconception="near-zero-entries", message=(
        f"{verdict.message.rstrip()} Only the entries near 0 ({describe(x[off])}) are off, and "
        f"they are still far from the kink at 0: d|x|/dx = sign(x) for every x ≠ 0. A "
        "derivative of |x| clamped, thresholded or softened near 0 (x / x.abs().clamp(min=...), "
        "torch.where(x.abs() < ...), x / (x.abs() + eps)) changes the gradient there: use "
        "torch.sign(x)."))


def judge_float32(got: Any, failure: Verdict | None, x: torch.Tensor, upstream: float,
                  right: torch.Tensor, float64_ok: Callable[[], bool]) -> Verdict:
    """The backward at a float32 ``x`` (``got``: its ``x.grad``) against the float64
    gradient ``right``, at float32's precision; ``dtype-dependent`` when the same values in
    float64 are right (``float64_ok``)."""
    if failure is not None:
        return failure
    scale = term_scale(x, upstream)
    shown = f"x.grad after MyOp.apply(x).backward({fmt(upstream)}) at a float32 x = {describe(x)}"
    verdict = judge_tensor(got, right, shown, dtype=torch.float32, rtol=FLOAT32_RTOL,
                           atol=FLOAT32_SHARE * scale, inputs={"x": plain(x),
                                                               "upstream": upstream})
    if verdict.ok or verdict.misconception is not None or not float64_ok():
        return verdict  # a value failure has no name yet (``judge_tensor``)
    return dataclasses.replace(verdict, misconception="dtype-dependent", message=(
        f"{verdict.message.rstrip()} The same values in float64 get the right gradient: the "
        "backward computes another formula for a float32 x. It is the same formula in every "
        "dtype (a branch on x.dtype, or a term computed only for float64, is wrong for the "
        "others)."))
