"""q3_multipath: the points the grader calls at, and the exact answers and tolerances there.

Points are drawn where every known mistake's answer is far from the right one (``distinct``),
ints among them, and where one path's gradient is orders of magnitude below the other's
(``far_apart``: where subtracting float32 totals loses the small path).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

#: Each gradient is checked against its own size: float32 leaves (the contract's float(x0))
#: round it by 6e-8 relative, far inside RTOL; ATOL only keeps a zero scale above 0, below any
#: gradient a point has (the smallest, ``DEEPEST_ORDERS``, is above 3e-37).
RTOL, ATOL = 1e-5, 1e-40


def distinct(x0: float, y0: float) -> bool:
    """Inputs for which every known mistake's answer is far (1% of the scale) from the right one.

    The differences between the right answer and the mistakes are x0, y0, x0 + y0, x0 - y0 and
    |y0| - |2*x0| (the swapped split); none may be close to zero.
    """
    margin = 0.01 * (abs(x0) + abs(y0))
    gaps = (x0, y0, x0 + y0, x0 - y0, abs(y0) - abs(2 * x0))
    return margin > 0 and all(abs(g) > margin for g in gaps)


def tolerance(x0: float, y0: float, split: bool) -> np.ndarray:
    """Absolute tolerance of each gradient, scaled with the terms it is made of: float32
    rounding of ``2*x0 + y0`` grows with |2*x0| + |y0| (the sum may cancel), while y0 and 2*x0
    alone (split_path_grads's two paths, multipath_grads's y.grad = x0) are rounded relative
    to themselves. A path's gradient that depends on the other path's size (a subtraction of
    totals) is not within it when the paths differ by orders of magnitude (``far_apart``)."""
    x, y = abs(float(x0)), abs(float(y0))
    scales = (y, 2 * x) if split else (2 * x + y, x)
    return ATOL + RTOL * np.array(scales)


def subtracted_totals(x0: float, y0: float) -> tuple[float, float]:
    """What a float32 subtraction of totals gives for each path: ``(total - b.grad,
    total - a.grad)``, the total being x.grad of a float32 leaf, ``fl(fl(y0) + fl(2*x0))``.
    The difference of two nearby float32 values is exact, so Python floats and float32
    tensors give the same numbers."""
    f = np.float32
    a, b = f(y0), f(2) * f(x0)
    total = float(a + b)
    return total - float(b), total - float(a)


#: How many orders of magnitude the last two far-apart points put between the paths: the upper
#: part of the contract's 5 to 6.5, so that every seed has a small path below a millionth of
#: the other (where a "noise floor" of float32's resolution, 1e-6 of the total, zeroes it).
TINY_ORDERS = (6.2, 6.5)
#: And the last two far-apart points, as far below as float32 still holds both paths: 27 to 30
#: orders (the small path at least 1e-29, far above float32's smallest normal, 1.2e-38), where
#: a "noise floor" of any size a notebook would pick zeroes it: float32's eps times the total
#: (red team rt-8 kept 4/4 at 6.5 orders), 1e-10 of it (rt-9). A float32 leaf holds such a
#: value exactly, and each path's gradient is computed apart from the other's.
FAR_BELOW_ORDERS = (27.0, 30.0)
#: And after them, both ways round again, to the edge of float32's normal range: 35 to 37.5
#: orders, the small path 3e-37 to 1e-32 (the big one is 10 to 1000), still a normal float32
#: (above 1.2e-38) that a float32 leaf holds to 6e-8. A floor set just past the published 30
#: orders (1e-32 of the other path, red team rt-10) zeroes it; below this no float32 value is
#: left to zero but subnormals.
DEEPEST_ORDERS = (35.0, 37.5)


def far_apart(rng: np.random.Generator, square_small: bool,
              orders: tuple[float, float] = (5.0, 6.5)) -> tuple[float, float]:
    """A point where one path's gradient is ``orders`` (5 to 6.5) orders of magnitude below the
    other's (the square path 2*x0 when ``square_small``, else the product path y0), and where
    subtracting float32 totals misses the small one by more than 30 times its tolerance:
    a float32 sum keeps about 7 digits of the big path, so little of the small one survives
    ``total - big``. Signs drawn."""
    while True:
        big = float(rng.choice([-1, 1]) * 10 ** rng.uniform(1.0, 3.0))
        small = float(rng.choice([-1, 1]) * abs(big) * 10 ** rng.uniform(-orders[1], -orders[0]))
        x0, y0 = (small / 2, big) if square_small else (big / 2, small)
        which = 1 if square_small else 0  # the small path's place in (a.grad, b.grad)
        exact = expected_split(x0, y0)[which]
        if abs(subtracted_totals(x0, y0)[which] - exact) > 30 * tolerance(x0, y0, True)[which]:
            return x0, y0


def draw_points(rng: np.random.Generator) -> list[tuple[Any, Any]]:
    """Floats (negative, fractional, large), then a pair of ints, which must be accepted too,
    then one path's gradient orders of magnitude below the other's, both ways round, then
    both ways round again with the small path below a millionth of the other (``TINY_ORDERS``),
    where a gradient zeroed as "noise" is told from the right one on every seed, a point whose
    two inputs are equal, both ways round 27 to 30 orders apart (``FAR_BELOW_ORDERS``), and
    last both ways round 35 to 37.5 orders apart (``DEEPEST_ORDERS``)."""
    def pair(draw: Callable[[], Any]) -> tuple[Any, Any]:
        while True:
            x0, y0 = draw(), draw()
            if distinct(x0, y0):
                return x0, y0

    return [
        pair(lambda: float(np.round(rng.uniform(-9.0, 9.0), 3))),
        pair(lambda: float(rng.choice([-1, 1]) * rng.uniform(0.05, 0.95))),
        pair(lambda: float(rng.choice([-1, 1]) * rng.uniform(50.0, 500.0))),
        pair(lambda: int(rng.integers(-9, 10))),
        # drawn last, so that the points above stay those of earlier runs with the same seed
        far_apart(rng, square_small=True),
        far_apart(rng, square_small=False),
        # appended, so that the points above stay those of earlier runs with the same seed
        far_apart(rng, square_small=True, orders=TINY_ORDERS),
        far_apart(rng, square_small=False, orders=TINY_ORDERS),
        # last: x0 equal to y0 (red team rt-6: leaves made through a dict keyed by value became
        # one leaf there, and no point above has them equal); the mistakes ``distinct`` keeps
        # apart were judged at every point before it
        equal_pair(rng),
        # appended after it: one path 27 to 30 orders below the other, both ways round
        far_apart(rng, square_small=True, orders=FAR_BELOW_ORDERS),
        far_apart(rng, square_small=False, orders=FAR_BELOW_ORDERS),
        # appended after those: 35 to 37.5 orders apart, float32's normal range to its edge
        far_apart(rng, square_small=True, orders=DEEPEST_ORDERS),
        far_apart(rng, square_small=False, orders=DEEPEST_ORDERS),
    ]


def equal_pair(rng: np.random.Generator) -> tuple[float, float]:
    """``(v, v)``: one fractional value of either sign for both inputs."""
    v = float(rng.choice([-1, 1]) * np.round(rng.uniform(0.5, 9.0), 3))
    return v, v


def expected_multipath(x0: float, y0: float) -> tuple[float, float]:
    """``(dw/dx, dw/dy)`` for ``w = x*y + x**2``, in float64."""
    return 2.0 * x0 + y0, float(x0)


def expected_split(x0: float, y0: float) -> tuple[float, float]:
    """``(a.grad, b.grad)`` for ``a*y + b**2`` with ``a = b = x0``: product, then square path."""
    return float(y0), 2.0 * x0
