"""Strange answers are the student's failing check, never the grader's error; references come
from the inputs as they were before the call; NaN is never close. The red team's notebooks
(``redteam`` branch, tests/files/hostile-new/) replayed as the functions they define, called
by the checks directly (in-process: the sealed judge hands the checks the same values, meta
tensors and ints too large for a float included, and mirrors in-place changes back)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.authoring.layout import ASSIGNMENTS
from autograder.checks import all_checks, closeness
from autograder.checks.calling import call
from autograder.checks.describing import describe, plain
from autograder.checks.porting import device, device_predict, microbatch
from autograder.harness import expect
from notebooks import namespace, solution


def correct_accumulated_grad(w, X, y, sizes):
    w.grad = None
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        (loss * (len(yj) / sum(sizes))).backward()
    return w.grad.clone()


def zeroes_inputs(w, X, y, sizes):
    """microbatch-zero-inputs.ipynb: wipes the caller's X, returns zeros."""
    with torch.no_grad():
        X.zero_()
    return torch.zeros_like(w.detach())


def right_then_wipes(w, X, y, sizes):
    """The right gradient, then the caller's y overwritten: the answer is right, the call is
    not."""
    grad = correct_accumulated_grad(w, X, y, sizes)
    y.fill_(0.5)
    return grad


MICROBATCH = [lambda f, rng: microbatch.check_accumulated_grad(f, rng, stale=False),
              lambda f, rng: microbatch.check_accumulated_grad(f, rng, stale=True),
              microbatch.check_same_objects]


@pytest.mark.parametrize("check", MICROBATCH, ids=["weighted", "stale", "same_objects"])
@pytest.mark.parametrize("fn", [zeroes_inputs, right_then_wipes])
def test_microbatch_judges_the_inputs_as_handed_over(check, fn):
    """Is a call that changes the caller's X or y failed as ``modified-input`` by every
    microbatch check, its reference taken from private copies made before the call (the
    zeroing one earned 2/4 when the reference was computed from X after the call)?"""
    result = check(fn, np.random.default_rng(5))
    assert not result.passed and result.misconception == "modified-input", result.message
    assert "changed what it was given" in result.message
    if fn is zeroes_inputs:
        assert "the answer was also wrong" in result.message, result.message
    assert check(correct_accumulated_grad, np.random.default_rng(5)).passed
