"""q3_multipath, split_path_grads: two named ways one leaf's gradient takes in the other path's.

``cancellation``: one leaf's gradient computed as the total minus the other path in float32;
``not_split``: one leaf made from the other (a clone or a view), so it collects both paths.
Each returns ``(name, hint)`` when its signature fits, ``None`` otherwise.
"""

from __future__ import annotations

import numpy as np

from ..describing import fmt
from .multipath_points import ATOL, RTOL, expected_split, subtracted_totals

#: One float32 ulp relative (2**-23): the most a float32 sum of the two paths is rounded by.
FLOAT32_ULP = 2.0 ** -23


def cancellation(got: tuple[float, float], x0: float, y0: float,
                 atol: np.ndarray) -> tuple[str, str] | None:
    """Was one path's gradient computed by subtracting totals in float32?

    Its signature: the other gradient right, and this one off by more than its tolerance but
    by no more than float32 rounds the total ``2*x0 + y0`` (one ulp, the total's and y's
    rounding together): what is left of a small path after ``total - big path``. Nameable only
    where the paths differ by orders of magnitude; elsewhere that rounding is inside the
    tolerance.
    """
    expected = expected_split(x0, y0)
    rounding = 1.01 * FLOAT32_ULP * (abs(y0) + abs(2 * x0))
    errors = [abs(g - e) for g, e in zip(got, expected)]
    for i, (leaf, other, formula) in enumerate((
            ("a", "b", "x.grad - b.grad (the total minus the square path)"),
            ("b", "a", "x.grad - a.grad (the total minus the product path)"))):
        if errors[1 - i] <= atol[1 - i] and atol[i] < errors[i] <= rounding:
            small, big = ("y0", "2*x0") if i == 0 else ("2*x0", "y0")
            return "cancellation", (
                f"{leaf}.grad was computed by subtracting totals: {formula} in float32 gives "
                f"{fmt(subtracted_totals(x0, y0)[i])} here, off by the float32 rounding of the "
                f"total 2*x0 + y0. When |{small}| is orders of magnitude smaller than |{big}|, "
                f"the float32 total keeps only about 7 significant digits, nearly all of them "
                f"{big}'s, so the subtraction cancels the big path and leaves mostly rounding "
                f"error (catastrophic cancellation). Read {leaf}'s own gradient: make a and b "
                f"separate leaves in w = a * y + b ** 2, call w.backward() once and return "
                f"a.grad and b.grad.")
    return None


def not_split(got: tuple[float, float], x0: float, y0: float,
              atol: np.ndarray) -> tuple[str, str] | None:
    """Was one of split_path_grads's two leaves made from the other (``b = a.clone()``, a view,
    ``a * 1``), so that the first collects both paths? Its signature: that leaf's gradient is
    the whole ``y0 + 2*x0`` (x.grad of multipath_grads, within the float32 rounding of that
    sum) and the other leaf's is its own path's, right. ``None`` otherwise."""
    total = y0 + 2 * x0
    whole = ATOL + RTOL * (abs(y0) + abs(2 * x0))  # the sum rounded, as multipath's x.grad
    expected = expected_split(x0, y0)
    for i, (own, made, path) in enumerate((("a", "b", "the square path b ** 2"),
                                           ("b", "a", "the product path a * y"))):
        if abs(expected[i] - total) <= whole + atol[i]:
            continue  # the other path is too small to see here
        if abs(got[i] - total) <= whole and abs(got[1 - i] - expected[1 - i]) <= atol[1 - i]:
            return "paths-not-split", (
                f"{own}.grad is {fmt(got[i])}, y0 + 2*x0: the whole gradient of x in "
                f"multipath_grads, both paths, while {made}.grad is right. {made} is not a "
                f"leaf of its own but made from {own} ({made} = {own}.clone(), "
                f"{own}.view_as({own}), {own} * 1, {own} + 0, {own}[...]): a clone or a view "
                f"stays in {own}'s graph, so the gradient of {path} flows through {made} back "
                f"into {own} as well. Make {made} its own leaf, like {own}: "
                f"{made} = torch.tensor(float(x0), requires_grad=True) (or "
                f"{own}.detach().clone().requires_grad_()).")
    return None
