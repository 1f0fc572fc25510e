"""q1 ``train_logreg`` on ``F.binary_cross_entropy(torch.sigmoid(z), y)`` (blind round zzz): in
float32 the sigmoid rounds to exactly 1 (or 0) past a logit of about 17 and torch's BCE clamps
the log at -100, so the loss stays finite (100 a wrongly classified row, no gradient) and the
unstable-form namer, which reads inf and NaN, never saw it: the feedback only asked "are large
logits handled differently?". The diagnosis now replays that loss in float32 and names it
``sigmoid-log``, q2's name for the same mistake."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes
from autograder.checks.seeding import generator


def _train(loss_of):
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = loss_of(X @ w + b, y)
            w.grad = None
            b.grad = None
            loss.backward()
            losses.append(loss.item())
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses
    return train_logreg


@pytest.mark.parametrize("seed", range(10))
def test_torchs_bce_on_a_sigmoid_is_named_sigmoid_log(seed):
    result = check_train_logreg_regimes(
        _train(lambda z, y: F.binary_cross_entropy(torch.sigmoid(z), y)), generator(seed))
    assert not result.passed
    assert result.misconception == "sigmoid-log", result.message
    assert "F.binary_cross_entropy(torch.sigmoid(z), y)" in result.message, result.message
    assert "binary_cross_entropy_with_logits" in result.message, result.message


@pytest.mark.parametrize("seed", range(4))
def test_the_fused_loss_still_passes(seed):
    result = check_train_logreg_regimes(
        _train(F.binary_cross_entropy_with_logits), generator(seed))
    assert result.passed, result.message
