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


def nan_lr_optimizer(model, device, lr=0.1):
    """optimizer-nan-lr.ipynb."""
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=float("nan"))


@pytest.mark.parametrize("moved", [False, True])
def test_make_optimizer_with_nan_lr_fails(moved):
    """Does an optimizer built with lr=nan lose both hidden optimizer checks (``abs(v - lr) >
    tol`` is False for NaN, so it passed)?"""
    result = device.check_make_optimizer(nan_lr_optimizer, np.random.default_rng(1), moved=moved)
    assert not result.passed and result.misconception == "lr-ignored", result.message


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 10**400, True, "0.5", None])
def test_an_lr_no_float_equals_is_not_the_lr(bad):
    model = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    opt.param_groups[0]["lr"] = bad
    verdict = device.judge_optimizer(opt, model, torch.device("cpu"), 0.5,
                                     {id(p) for p in model.parameters()})
    assert verdict.misconception == "lr-ignored", verdict.message


def test_near_never_takes_nan_or_a_huge_int():
    assert closeness.near(0.5, 0.5, 1e-12) and closeness.near(np.float32(0.5), 0.5, 1e-6) \
        and closeness.near(2, 2.0, 0.0)
    assert not any(closeness.near(v, 0.5, 1e-3, 1.0)
                   for v in (float("nan"), 10**400, True, "0.5", None))
