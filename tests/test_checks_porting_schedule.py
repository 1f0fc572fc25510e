"""q1_logreg: a loop that changes after a fixed number of steps (``changed-after-steps``): a
learning-rate schedule kicking in before the separable regime's 600-700 steps loses the regimes
point and is told so; a change keyed on the loss, or a schedule that never acts within
``steps``, keeps what it had.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting.logreg import check_train_logreg
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes


def _train(lr_at=None, scheduler=None, stop_below=None):
    """The contract's loop, with the rate at step k from ``lr_at(lr, k, loss)`` or an optimizer
    stepped by ``scheduler(opt)``; ``stop_below`` ends the loop once the loss is that small."""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=lr) if scheduler else None
        sched = scheduler(opt) if scheduler else None
        losses = []
        for k in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            losses.append(loss.item())
            if stop_below is not None and loss.item() < stop_below:
                break
            w.grad = None
            b.grad = None
            loss.backward()
            if opt is not None:
                opt.step()
                sched.step()
                continue
            rate = lr_at(lr, k, loss.item()) if lr_at else lr
            with torch.no_grad():
                w -= rate * w.grad
                b -= rate * b.grad
        return w, b, losses
    return train_logreg


STEP_KEYED = {
    "StepLR-500": _train(scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 500, 0.5)),
    "StepLR-250-tenth": _train(scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 250, 0.1)),
    "MultiStepLR": _train(scheduler=lambda o: torch.optim.lr_scheduler.MultiStepLR(
        o, [300, 450], 0.5)),
    "halved-after-400-by-hand": _train(lr_at=lambda lr, k, loss: lr / 2 if k >= 400 else lr),
    "doubled-after-550": _train(lr_at=lambda lr, k, loss: lr * 2 if k >= 550 else lr),
}


@pytest.mark.parametrize("how", sorted(STEP_KEYED))
def test_a_change_after_a_fixed_step_is_named(how):
    result = check_train_logreg_regimes(STEP_KEYED[how], np.random.default_rng(11))
    assert not result.passed, how
    assert result.misconception == "changed-after-steps", result.message
    assert "fixed number of steps" in result.message, result.message


def test_the_step_is_told():
    result = check_train_logreg_regimes(
        _train(lr_at=lambda lr, k, loss: lr / 2 if k >= 400 else lr), np.random.default_rng(11))
    # the rate halves at update 400: losses[0..400] are the grader's, and the difference
    # crosses twice the tolerance within a few steps
    assert any(f"about the first {k} steps" in result.message for k in range(401, 405)), \
        result.message


@pytest.mark.extended
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_separable_regime_is_always_past_step_600(seed):
    result = check_train_logreg_regimes(
        _train(lr_at=lambda lr, k, loss: lr / 2 if k >= 599 else lr),
        np.random.default_rng(seed))
    assert not result.passed, seed


KEYED_ON_THE_LOSS = {
    "halved-once-small": _train(lr_at=lambda lr, k, loss: lr / 2 if loss < 0.05 else lr),
    "stopped-once-small": _train(stop_below=0.01),
}


@pytest.mark.parametrize("how", sorted(KEYED_ON_THE_LOSS))
def test_a_change_keyed_on_the_loss_is_not_told_as_a_schedule(how):
    result = check_train_logreg_regimes(KEYED_ON_THE_LOSS[how], np.random.default_rng(11))
    assert not result.passed, how
    assert result.misconception != "changed-after-steps", result.message


def test_momentum_is_not_told_as_a_schedule():
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=lr, momentum=0.5)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return w, b, losses
    result = check_train_logreg(train_logreg, np.random.default_rng(11), part="losses")
    assert not result.passed
    assert result.misconception != "changed-after-steps", result.message


def test_a_schedule_that_never_acts_within_steps_passes():
    never = _train(scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 10_000, 0.5))
    assert check_train_logreg_regimes(never, np.random.default_rng(11)).passed
    for part in ("losses", "params"):
        assert check_train_logreg(never, np.random.default_rng(11), part=part).passed
