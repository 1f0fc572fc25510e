"""Blind round zzl, q1: a hand-written loss that goes wrong where every logit is 0, the first
step's (w and b start at zeros).

- The stable form with its abs but a kink at 0, ``max(z, 0)`` as ``clamp(min=0)``, ``relu``,
  ``where`` or a mask: autograd's one-sided slope makes the first update step by ``1 - y`` or
  ``-y``, not ``0.5 - y`` (``loss-kink-at-zero``); ``torch.maximum`` and ``(z + |z|) / 2`` split
  the tie and are right.
- The sigmoid left out, the log of the logits: NaN from the first loss (``sigmoid-missing``),
  which the probes told ``probe.ignores-argument`` (the same NaN for another lr).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting.logreg import check_train_logreg
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes


def _train(loss_of, reduce=torch.mean):
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            z = X @ w + b
            loss = reduce(loss_of(z, y))
            losses.append(loss.item())
            w.grad = None
            b.grad = None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses
    return train_logreg


def _tail(z):
    return torch.log1p(torch.exp(-z.abs()))


KINKED = {
    "clamp": _train(lambda z, y: z.clamp(min=0) - z * y + _tail(z)),
    "clamp-min": _train(lambda z, y: z.clamp_min(0.0) - z * y + _tail(z)),
    "relu": _train(lambda z, y: torch.relu(z) - z * y + _tail(z)),
    "F-relu-log-abs": _train(lambda z, y: F.relu(z) - z * y
                             + torch.log(1 + torch.exp(-torch.abs(z)))),
    "where": _train(lambda z, y: torch.where(z > 0, z, torch.zeros_like(z)) - z * y + _tail(z)),
    "mask": _train(lambda z, y: z * (z > 0) - z * y + _tail(z)),
    "clamp-sum-over-m": _train(lambda z, y: z.clamp(min=0) - z * y + _tail(z),
                               lambda rows: rows.sum() / rows.shape[0]),
}
SMOOTH_AT_ZERO = {
    "maximum": _train(lambda z, y: torch.maximum(z, torch.zeros_like(z)) - z * y + _tail(z)),
    "half-z-plus-abs": _train(lambda z, y: (z + z.abs()) / 2 - z * y + _tail(z)),
    "softplus": _train(lambda z, y: F.softplus(z) - z * y),
    "logaddexp": _train(lambda z, y: torch.logaddexp(torch.zeros_like(z), z) - z * y),
    "logsigmoid": _train(lambda z, y: -(y * F.logsigmoid(z) + (1 - y) * F.logsigmoid(-z))),
    "bce-with-logits": _train(lambda z, y: F.binary_cross_entropy_with_logits(
        z, y, reduction="none")),
}


def _check(fn, part, seed):
    rng = np.random.default_rng(seed)
    if part == "regimes":
        return check_train_logreg_regimes(fn, rng)
    return check_train_logreg(fn, rng, part=part)


@pytest.mark.parametrize("how", sorted(KINKED))
@pytest.mark.parametrize("part", ["losses", "params", "regimes"])
def test_a_kink_at_zero_is_named(how, part):
    for seed in (0, 11):
        result = _check(KINKED[how], part, seed)
        assert not result.passed, (how, part, seed)
        assert result.misconception == "loss-kink-at-zero", result.message
        assert "one side's slope" in result.message and "softplus" in result.message, \
            result.message
        assert "Compare your loop with the contract" not in result.message, result.message


def test_the_slope_found_is_told():
    clamp = _check(KINKED["clamp"], "losses", 11)
    relu = _check(KINKED["relu"], "losses", 11)
    assert "at z = 0 as 1 - y" in clamp.message, clamp.message
    assert "at z = 0 as 0 - y" in relu.message, relu.message


@pytest.mark.parametrize("how", sorted(SMOOTH_AT_ZERO))
def test_a_loss_right_at_zero_passes(how):
    for part in ("losses", "params", "regimes"):
        assert _check(SMOOTH_AT_ZERO[how], part, 11).passed, (how, part)


def test_the_abs_dropped_form_keeps_its_name():
    # no abs: wrong at every negative logit, q2's form (its slope at 0 replayed there)
    fn = _train(lambda z, y: z.clamp(min=0) - z * y + torch.log1p(torch.exp(-z)))
    result = _check(fn, "losses", 0)
    assert result.misconception == "wrong-logistic-loss", result.message


def test_a_summed_kinked_loss_keeps_sum_not_mean():
    fn = _train(lambda z, y: z.clamp(min=0) - z * y + _tail(z), torch.sum)
    result = _check(fn, "losses", 0)
    assert not result.passed
    assert result.misconception != "loss-kink-at-zero", result.message


def test_a_bias_step_of_its_own_is_not_a_kink():
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            losses.append(loss.item())
            w.grad = b.grad = None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= 0.5 * b.grad
        return w, b, losses
    result = _check(train_logreg, "losses", 11)
    assert result.misconception == "bias-step-size", result.message


SIGMOID_LEFT_OUT = {
    "log-of-logits": _train(lambda z, y: -(y * torch.log(z) + (1 - y) * torch.log(1 - z))),
    "where-by-label": _train(lambda z, y: torch.where(y == 1, -torch.log(z), -torch.log(1 - z))),
    "two-means": _train(lambda z, y: -(y * torch.log(z)) - (1 - y) * torch.log1p(-z)),
}


@pytest.mark.parametrize("how", sorted(SIGMOID_LEFT_OUT))
@pytest.mark.parametrize("part", ["losses", "params", "regimes"])
def test_the_sigmoid_left_out_is_named(how, part):
    result = _check(SIGMOID_LEFT_OUT[how], part, 0)
    assert not result.passed
    assert result.misconception == "sigmoid-missing", result.message
    assert "-log(0)" in result.message and "sigmoid(z)" in result.message, result.message
    assert "use the argument you are given" not in result.message, result.message


def test_a_nan_first_loss_of_another_cause_is_told_not_named():
    # 0/0 at logit 0: NaN for any labels, not -log(0)
    fn = _train(lambda z, y: F.binary_cross_entropy_with_logits(z, y, reduction="none") * z / z)
    result = _check(fn, "losses", 0)
    assert not result.passed and result.misconception is None, result.message
    assert "The first loss is NaN" in result.message and "0/0" in result.message, result.message
    assert "use the argument you are given" not in result.message, result.message
