"""q4_device's ``make_optimizer`` must build plain SGD: the contract's gradient descent, each
step ``p -= lr * p.grad``. SGD with momentum (Nesterov's too), weight decay or ``maximize``
steps otherwise, while holding the right parameters with the right lr, so the public test
passes. Blind round y's momentum=0.9 kept full marks. Named ``sgd-not-plain`` once, on the
grading device's check (the check after a device change judges the move); settings that change
no step (dampening without momentum, foreach, an explicit 0) pass."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import device


def sgd(**settings):
    def make_optimizer(model, where, lr=0.1):
        return torch.optim.SGD(model.to(where).parameters(), lr=lr, **settings)
    return make_optimizer


NOT_PLAIN = {
    "momentum 0.9": ({"momentum": 0.9}, "momentum"),
    "Nesterov momentum": ({"momentum": 0.9, "nesterov": True}, "nesterov"),
    "momentum with dampening": ({"momentum": 0.5, "dampening": 0.1}, "momentum"),
    "weight decay": ({"weight_decay": 1e-4}, "weight_decay"),
    "maximize": ({"maximize": True}, "maximize"),
}


@pytest.mark.parametrize("how", sorted(NOT_PLAIN))
def test_sgd_that_is_not_plain_is_named_once(how):
    settings, word = NOT_PLAIN[how]
    for seed in range(3):
        result = device.check_make_optimizer(sgd(**settings), np.random.default_rng(seed),
                                             moved=False)
        assert not result.passed and result.misconception == "sgd-not-plain", result.message
        for words in (word, "p -= lr * p.grad", "torch.optim.SGD(model.parameters(), lr=lr)"):
            assert words in result.message, result.message
        after_move = device.check_make_optimizer(sgd(**settings), np.random.default_rng(seed),
                                                 moved=True)
        assert after_move.passed, after_move.message


PLAIN = {
    "explicit zeros": {"momentum": 0.0, "weight_decay": 0, "nesterov": False},
    "dampening without momentum": {"dampening": 0.5},
    "foreach off": {"foreach": False},
    "maximize off": {"maximize": False},
}


@pytest.mark.parametrize("how", sorted(PLAIN))
def test_settings_that_change_no_step_pass(how):
    for seed in range(3):
        result = device.check_make_optimizer(sgd(**PLAIN[how]), np.random.default_rng(seed),
                                             moved=False)
        assert result.passed, result.message


def test_positional_lr_and_a_param_group_pass():
    def groups(model, where, lr=0.1):
        return torch.optim.SGD([{"params": list(model.to(where).parameters())}], lr)
    assert device.check_make_optimizer(groups, np.random.default_rng(0), moved=False).passed
