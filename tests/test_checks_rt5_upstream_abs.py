"""q3 ``MyOp.backward`` that multiplies by ``grad_output.abs()`` (red team rt-5): at the hidden
negative upstream it gives what a quotient rule with its numerator reversed gives, and it was
told to fix a quotient rule that is right. Asked again at the upstream negated, where it is
right, it is named ``upstream-sign-dropped``; a reversed numerator keeps its name."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.checks.porting import gradcheck
from test_checks_porting_zzl_q3 import _grad, _op


def _abs_upstream(x, g):
    return _grad(x, g.abs())


def _reversed(x, g):
    return -_grad(x, g)


@pytest.mark.parametrize("seed", (0, 1, 2, 3, 11))
def test_the_upstreams_sign_dropped_is_named(seed):
    result = gradcheck.check_backward(_op(_abs_upstream), np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception == "upstream-sign-dropped", result.message
    assert "grad_output.abs()" in result.message, result.message


@pytest.mark.parametrize("seed", (0, 1, 2, 3, 11))
def test_a_reversed_numerator_keeps_its_name(seed):
    result = gradcheck.check_backward(_op(_reversed), np.random.default_rng(seed))
    assert not result.passed and result.misconception == "quotient-sign-flipped", result.message
