"""Blind round zz's make_optimizer that refuses lr=0.0 (``if not lr > 0: raise ValueError``):
named ``zero-lr-refused`` once a small positive rate builds the right optimizer; one that
raises for every lr, or refuses 0.0 and also gets other rates wrong, keeps what it had.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import device


def _refusing(test):
    def make_optimizer(model, where, lr=0.1):
        if test(lr):
            raise ValueError(f"the learning rate must be positive, got {lr}")
        return torch.optim.SGD(model.to(where).parameters(), lr=lr)
    return make_optimizer


REFUSING_ZERO = {
    "not-positive": _refusing(lambda lr: not lr > 0),
    "le-zero": _refusing(lambda lr: lr <= 0),
    "falsy": _refusing(lambda lr: not lr),
    "assert": None,  # below
}


def _asserting(model, where, lr=0.1):
    assert lr > 0, "lr must be positive"  # noqa: S101 - a student's own check
    return torch.optim.SGD(model.to(where).parameters(), lr=lr)


REFUSING_ZERO["assert"] = _asserting


@pytest.mark.parametrize("how", sorted(REFUSING_ZERO))
def test_a_refused_zero_lr_is_named(how):
    for seed in range(3):
        result = device.check_make_optimizer(REFUSING_ZERO[how], np.random.default_rng(seed),
                                             moved=False)
        assert not result.passed
        assert result.misconception == "zero-lr-refused", result.message
        assert "lr=0.0 is a legal learning rate" in result.message, result.message


def test_raising_for_every_lr_is_not_told_as_zero_refused():
    result = device.check_make_optimizer(_refusing(lambda lr: True), np.random.default_rng(0),
                                         moved=False)
    assert not result.passed and result.misconception != "zero-lr-refused", result.message


def test_a_refused_zero_with_a_wrong_small_rate_is_not_named():
    def make_optimizer(model, where, lr=0.1):
        if lr == 0:
            raise ValueError("no")
        return torch.optim.SGD(model.to(where).parameters(), lr=0.1 if lr < 0.01 else lr)
    result = device.check_make_optimizer(make_optimizer, np.random.default_rng(0), moved=False)
    assert not result.passed and result.misconception != "zero-lr-refused", result.message


def test_refusing_only_negative_rates_passes():
    result = device.check_make_optimizer(_refusing(lambda lr: lr < 0), np.random.default_rng(0),
                                         moved=False)
    assert result.passed, result.message
