"""Blind rounds zzzo and zzzp: two answers the grader failed rightly but told imprecisely.

- zzzo's ``square_grads`` recorded ``p.grad.norm().item()``, a training-log habit: the size of
  each gradient, its sign lost for a negative ``p0``. The input-class probe found it wrong for
  negative inputs only and asked about ``abs`` and square roots; it now names ``.norm()`` too.
- zzzp's gradients were rounded with ``round(g, 4)``, which gave -0.828 and -0.61: values that
  fit 3 decimals as well. The rounding probe said the fewest, "3 decimals"; it now says every
  count the values fit within their half step ("3 or 4"), and one count where one fits.
"""

from __future__ import annotations

import re

import pytest
import torch

from autograder.checks.exercises import accumulation, multipath
from autograder.checks.probes.values import rounded
from autograder.checks.seeding import generator
from test_checks_exercises_zza import _multi, _split  # float32 leaves, the lesson's w


def norm_recorded(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    record = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        record.append(p.grad.norm().item())
    return record


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("clear", [False, True])
def test_a_record_of_gradient_norms_fails_and_norm_is_named_where_p0_is_negative(seed, clear):
    result = accumulation.check_square_grads(norm_recorded, generator(seed), clear=clear)
    assert not result.passed, result.message
    if result.misconception == "probe.input-class.negative":
        assert ".norm()" in result.message, result.message


def test_rounding_that_fits_two_counts_says_both_and_one_that_fits_one_says_one():
    both = rounded([-0.828, -0.61], [-0.82800123, -0.610012])
    assert "rounded to 3 or 4 decimals" in both.message, both.message
    assert both.calls[0]["fitting"] == [3, 4]
    one = rounded([-0.8281, -0.61], [-0.82811123, -0.610012])
    assert "rounded to 4 decimals (" in one.message, one.message
    assert "fitting" not in one.calls[0]
    # a small value fits every finer grid within float32's absolute noise: not said
    small = rounded([428.26, 0.000137], [428.26, 0.000136715])
    assert "rounded to 6 decimals (" in small.message, small.message


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("split", [False, True])
def test_gradients_rounded_to_four_decimals_are_told_four_among_the_counts(seed, split):
    def answer(x0, y0):
        grads = (_split if split else _multi)(x0, y0)
        return tuple(round(float(g), 4) for g in grads)

    result = multipath.check_grads(answer, generator(seed), split=split)
    if result.passed or result.misconception != "probe.rounded":
        return  # a draw where 4 decimals change nothing, or a tiny path rounded to zero
    said = re.search(r"rounded to ([\d, or]+) decimal", result.message).group(1)
    assert "4" in re.split(r", | or ", said), result.message
