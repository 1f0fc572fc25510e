"""q2's ``wrong-logistic-loss`` class in q1: ``train_logreg`` trained on a hand-written logistic
loss of ``logistic_forms.FORMS`` (the stable form without its abs, the labels ignored, the
±1-label form given 0/1 labels, the label term dropped, the sigmoid applied twice), named by
the grader's replay of its own run with that loss (``logreg_lossform``); correct hand-written
losses pass, and other named q1 mistakes on the loss keep their names.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting.logreg import check_train_logreg
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes


def _train(row_loss, reduce=torch.mean):
    """A contract loop whose loss is ``reduce`` of ``row_loss(z, y)`` over the rows."""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = reduce(row_loss(X @ w + b, y))
            w.grad = None
            b.grad = None
            loss.backward()
            losses.append(loss.item())
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses
    return train_logreg


def _zero(z):
    return torch.zeros_like(z)


#: (per-row loss, words the message must hold)
WRONG = {
    "abs-dropped-clamp-log1p": (lambda z, y: z.clamp(min=0) - z * y
                                + torch.log1p(torch.exp(-z)), "negative logit"),
    "abs-dropped-relu-softplus": (lambda z, y: torch.relu(z) - z * y + F.softplus(-z),
                                  "negative logit"),
    "abs-dropped-maximum-log": (lambda z, y: torch.maximum(z, _zero(z)) - z * y
                                + torch.log(1 + torch.exp(-z)), "negative logit"),
    "abs-dropped-where": (lambda z, y: torch.where(z > 0, z, _zero(z)) - y * z
                          + torch.log1p(torch.exp(-z)), "negative logit"),
    "labels-ignored-log1p": (lambda z, y: torch.log1p(torch.exp(-z)), "labelled 0"),
    "labels-ignored-softplus": (lambda z, y: F.softplus(-z), "labelled 0"),
    "labels-ignored-log": (lambda z, y: torch.log(1 + torch.exp(-z)), "labelled 0"),
    "labels-as-signs": (lambda z, y: torch.log1p(torch.exp(-y * z)), "2y - 1"),
    "soft-margin-on-01-labels": (lambda z, y: F.soft_margin_loss(z, y, reduction="none"),
                                 "2y - 1"),
    "label-term-dropped": (lambda z, y: F.softplus(z), "labelled 1"),
    "label-term-dropped-log": (lambda z, y: torch.log(1 + torch.exp(z)), "labelled 1"),
    "sigmoid-twice": (lambda z, y: F.binary_cross_entropy_with_logits(
        torch.sigmoid(z), y, reduction="none"), "twice"),
    "bce-with-logits-module-on-p": (lambda z, y: torch.nn.BCEWithLogitsLoss(reduction="none")(
        torch.sigmoid(z), y), "twice"),
}

CORRECT = {
    "stable-with-abs-maximum": lambda z, y: torch.maximum(z, _zero(z)) - z * y
    + torch.log1p(torch.exp(-torch.abs(z))),
    "softplus-minus-yz": lambda z, y: F.softplus(z) - y * z,
    "softplus-per-label": lambda z, y: F.softplus(-z) * y + F.softplus(z) * (1 - y),
    "logsigmoid": lambda z, y: -(y * F.logsigmoid(z) + (1 - y) * F.logsigmoid(-z)),
    "logaddexp": lambda z, y: torch.logaddexp(_zero(z), z) - y * z,
}
SEEDS = (0, 1, 2)


@pytest.mark.parametrize("part", ["losses", "params"])
@pytest.mark.parametrize("how", sorted(WRONG))
def test_a_wrong_hand_written_loss_is_named_by_its_form(how, part):
    row_loss, words = WRONG[how]
    for seed in SEEDS:
        result = check_train_logreg(_train(row_loss), np.random.default_rng(seed), part=part)
        assert not result.passed, (how, seed)
        assert result.misconception == "wrong-logistic-loss", (how, seed, result.message)
        assert words in result.message, (how, seed, result.message)
        assert "binary_cross_entropy_with_logits" in result.message
        assert "differs from the logistic loss" in result.message, result.message
        assert result.evidence.probes[-1]["id"] == "wrong-logistic-loss"


def test_the_mirror_forms_are_told_apart_by_w_and_b():
    # the labels ignored and the label term dropped give the same losses, w and b negated
    ignored = check_train_logreg(_train(WRONG["labels-ignored-log1p"][0]),
                                 np.random.default_rng(1), part="losses")
    dropped = check_train_logreg(_train(WRONG["label-term-dropped"][0]),
                                 np.random.default_rng(1), part="losses")
    assert "log(1 + exp(-z)) for every row" in ignored.message, ignored.message
    assert "without its - y·z" in dropped.message, dropped.message
    assert "without its - y·z" not in ignored.message


def test_the_mirror_forms_without_w_and_b_are_not_named():
    def as_numpy(X, y, lr=0.5, steps=300):
        w, b, losses = _train(WRONG["labels-ignored-log1p"][0])(X, y, lr, steps)
        return w.detach().numpy(), b.detach().numpy(), losses
    result = check_train_logreg(as_numpy, np.random.default_rng(1), part="losses")
    assert not result.passed
    assert result.misconception != "wrong-logistic-loss", result.message


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_right_hand_written_losses_pass(how):
    for seed in SEEDS:
        for part in ("losses", "params"):
            result = check_train_logreg(_train(CORRECT[how]), np.random.default_rng(seed),
                                        part=part)
            assert result.passed, (how, seed, part, result.message)


def test_the_stable_form_with_its_abs_and_a_clamp_is_not_told_a_wrong_form():
    # right loss, but clamp(min=0)'s slope 1 at z = 0 (every logit of the first step) is not
    # its derivative there: its first update differs (it fails unnamed on main too); never
    # told a wrong form
    fn = _train(lambda z, y: z.clamp(min=0) - z * y + torch.log1p(torch.exp(-z.abs())))
    for seed in SEEDS:
        result = check_train_logreg(fn, np.random.default_rng(seed), part="losses")
        assert result.misconception != "wrong-logistic-loss", result.message


def _bce(z, y):
    return F.binary_cross_entropy_with_logits(z, y, reduction="none")


def test_a_summed_loss_keeps_its_name():
    for seed in SEEDS:
        result = check_train_logreg(_train(_bce, torch.sum), np.random.default_rng(seed),
                                    part="losses")
        assert result.misconception == "sum-not-mean", result.message


def test_a_wrong_form_summed_is_not_told_the_form():
    fn = _train(WRONG["abs-dropped-clamp-log1p"][0], torch.sum)
    for seed in SEEDS:
        result = check_train_logreg(fn, np.random.default_rng(seed), part="losses")
        assert not result.passed
        assert result.misconception != "wrong-logistic-loss", result.message


@pytest.mark.parametrize("row_loss, name", [
    (lambda z, y: -(y * torch.log(torch.sigmoid(z)) + (1 - y) * torch.log(1 - torch.sigmoid(z))),
     "sigmoid-log"),
    (lambda z, y: _bce(z.clamp(-30, 30), y), "logits-clamped"),
])
def test_large_logit_mistakes_keep_their_names(row_loss, name):
    for seed in range(4):
        result = check_train_logreg_regimes(_train(row_loss), np.random.default_rng(seed))
        assert not result.passed and result.misconception == name, result.message


def test_the_sigmoid_left_out_is_not_told_a_form_its_replay_cannot_show():
    # log(z) at the starting logits 0: NaN from the first loss, which no replay matches
    fn = _train(lambda z, y: -(y * torch.log(z) + (1 - y) * torch.log(1 - z)))
    result = check_train_logreg(fn, np.random.default_rng(0), part="losses")
    assert not result.passed
    assert result.misconception != "wrong-logistic-loss", result.message
