"""check_my_op that returns True for a half-precision x without running gradcheck (blind round
zs: `if x.dtype in (torch.float16, torch.bfloat16): return True`), after float32 and float64 x
were checked right: told that nothing ran for that x (`op-not-called`), not "a constant"."""

import numpy as np
import pytest
import torch

from autograder.checks.porting import selfcheck

MyOp = None  # the checks put the grader's op here


def _gradcheck(x):
    xd = x.detach().double().requires_grad_()
    return bool(torch.autograd.gradcheck(MyOp.apply, (xd,), eps=1e-6, atol=1e-8,
                                         raise_exception=False))


def half_true(x):  # round zs's student_04
    if x.dtype in (torch.float16, torch.bfloat16):
        return True
    return _gradcheck(x)


def low_precision_true(x):
    if torch.finfo(x.dtype).bits < 32:
        return True
    return _gradcheck(x)


def right(x):
    return _gradcheck(x)


def always_true(x):
    return True


@pytest.mark.parametrize("answer", [half_true, low_precision_true])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_half_precision_shortcut_is_told_nothing_ran(answer, seed):
    result = selfcheck.check_check_my_op(answer, np.random.default_rng(seed))
    assert not result.passed and result.misconception == "op-not-called", result.message
    assert "without running my_op" in result.message and "float64" in result.message


def test_a_right_check_passes():
    assert selfcheck.check_check_my_op(right, np.random.default_rng(0)).passed


def test_always_true_keeps_its_name():
    """It fails at the first float32 x, as a constant: not this name."""
    result = selfcheck.check_check_my_op(always_true, np.random.default_rng(0))
    assert result.misconception == "accepts-broken-op", result.message
