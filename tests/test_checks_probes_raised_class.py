"""An answer that raises only inside an input class is told so without a question about values
it never computed: blind round zy's ``split_path_grads`` asserted an exact float sum and raised
for fractional points, and was asked "Is something truncating them?". A question about values
(truncated, rounded, a sign dropped) is kept for a wrong value, and questions about paths
(1-D only, contiguous memory) stay for a raise too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises.accumulation import check_square_grads
from autograder.checks.exercises.multipath import check_grads

SEEDS = range(6)


def _split(x0, y0):
    a = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    b = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    y = torch.tensor(float(y0), dtype=torch.float64)
    (a * y + b ** 2).backward()
    return float(a.grad), float(b.grad)


def _asserting_integer(x0, y0):
    assert float(x0).is_integer() and float(y0).is_integer(), "expected whole numbers"  # noqa: S101
    return _split(x0, y0)


def _raising_negative(x0, y0):
    if x0 < 0 or y0 < 0:
        raise ValueError("points must be positive")
    return _split(x0, y0)


def _truncating(x0, y0):
    return _split(int(x0), int(y0))


def _results(fn, split=True):
    return [check_grads(fn, np.random.default_rng(s), split=split) for s in SEEDS]


def test_the_reference_split_passes():
    assert all(r.passed for r in _results(_split))


@pytest.mark.parametrize("fn", [_asserting_integer, _raising_negative])
def test_a_raise_inside_a_class_is_asked_no_question_about_values(fn):
    results = [r for r in _results(fn) if not r.passed]
    assert results, "the raising answer must lose points"
    named = [r for r in results if "wrong for " in r.message and " inputs." in r.message]
    assert named, [r.message for r in results]
    for r in named:
        for words in ("truncating", "dropping the sign", "rounding small", "precision running"):
            assert words not in r.message, r.message
        assert "takes another path" in r.message, r.message


def test_a_truncated_value_keeps_its_question():
    named = [r for r in _results(_truncating) if "wrong for non-integer inputs" in r.message]
    assert named and all("truncating" in r.message for r in named), [
        r.message for r in _results(_truncating)]


def _square_grads_raising_for_fractions(p0, repeats, clear):
    assert float(p0).is_integer()  # noqa: S101
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear and p.grad is not None:
            p.grad.zero_()
        (p ** 2).backward()
        grads.append(float(p.grad))
    return grads


def test_q1_raising_for_fractions_is_not_asked_about_truncation():
    results = [check_square_grads(_square_grads_raising_for_fractions, np.random.default_rng(s),
                                  clear=clear) for s in SEEDS for clear in (False, True)]
    failed = [r for r in results if not r.passed]
    assert failed
    for r in failed:
        assert "truncating" not in r.message, r.message
