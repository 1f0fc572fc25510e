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
from test_checks_porting_zzk_q1_lossforms import _train  # the contract's loop, a row loss


def _bce_of_sigmoid(z, y):
    return F.binary_cross_entropy(torch.sigmoid(z), y, reduction="none")


def _fused(z, y):
    return F.binary_cross_entropy_with_logits(z, y, reduction="none")


@pytest.mark.parametrize("seed", range(10))
def test_torchs_bce_on_a_sigmoid_is_named_sigmoid_log(seed):
    result = check_train_logreg_regimes(_train(_bce_of_sigmoid), generator(seed))
    assert not result.passed
    assert result.misconception == "sigmoid-log", result.message
    assert "F.binary_cross_entropy(torch.sigmoid(z), y)" in result.message, result.message
    assert "binary_cross_entropy_with_logits" in result.message, result.message


@pytest.mark.parametrize("seed", range(4))
def test_the_fused_loss_still_passes(seed):
    result = check_train_logreg_regimes(_train(_fused), generator(seed))
    assert result.passed, result.message
