"""q3 leaves made through a dict keyed by value (red team rt-6): where x0 equals y0 they are one
leaf, which collects both paths, and no hidden point had them equal: it kept 4/4. One point has
x0 == y0 now (after it come only the paths 27 to 30 orders apart: rt-8, rt-9)."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import multipath, multipath_points
from autograder.checks.seeding import generator
from test_checks_exercises_zza import _multi  # separate leaves, the lesson's w


def _by_value(x0, y0):
    leaves = {}
    for v in (float(x0), float(y0)):
        leaves.setdefault(v, torch.tensor(v, requires_grad=True))
    x, y = leaves[float(x0)], leaves[float(y0)]
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


@pytest.mark.parametrize("seed", range(8))
def test_leaves_keyed_by_value_lose_the_point(seed):
    assert any(x0 == y0 for x0, y0 in multipath_points.draw_points(generator(seed)))
    assert not multipath.check_grads(_by_value, generator(seed), split=False).passed


@pytest.mark.parametrize("seed", range(8))
def test_separate_leaves_keep_it(seed):
    assert multipath.check_grads(_multi, generator(seed), split=False).passed
