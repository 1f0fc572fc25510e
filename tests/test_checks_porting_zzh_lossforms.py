"""Blind round zzh's q2 class: ``accumulated_grad`` with a hand-written logistic loss that is
wrong for some logits or labels (zzh's student_04: the stable form without its abs,
``z.clamp(min=0) - z * t + log1p(exp(-z))``, wrong for every negative logit), named
``wrong-logistic-loss`` by the grader's replay of the form, confirmed at a second w; correct
losses in every style pass, and other named mistakes keep their names.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import microbatch
from autograder.checks.raised_hints import hint_for


def _micro(row_loss, *, keep_stale=False, split=False):
    """An accumulated_grad whose micro-batch loss is the mean of ``row_loss(z, y)``."""
    def accumulated_grad(w, X, y, sizes):
        if not keep_stale:
            w.grad = None
        B = sum(sizes)
        if split:
            for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
                (row_loss(Xj @ w, yj).mean() * (len(yj) / B)).backward()
            return w.grad.clone()
        start = 0
        for bj in sizes:
            Xj, yj = X[start:start + bj], y[start:start + bj]
            loss = row_loss(Xj @ w, yj).mean()
            (loss * (bj / B)).backward()
            start += bj
        return w.grad.clone()
    return accumulated_grad


def _zero(z):
    return torch.zeros_like(z)


#: (student function, the form's key in logistic_forms, words the message must hold)
WRONG = {
    # blind round zzh's student_04
    "abs-dropped-clamp": (_micro(lambda z, t: z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z))),
                          "abs-dropped", "negative logit"),
    "abs-dropped-relu-log": (_micro(lambda z, t: torch.relu(z) - z * t
                                    + torch.log(1 + torch.exp(-z)), split=True),
                             "abs-dropped", "exp(-|z|)"),
    "abs-dropped-maximum-softplus": (_micro(lambda z, t: torch.maximum(z, _zero(z)) - z * t
                                            + F.softplus(-z)), "abs-dropped", "abs"),
    "abs-dropped-where": (_micro(lambda z, t: torch.where(z > 0, z, _zero(z)) - t * z
                                 + torch.log1p(torch.exp(-z))), "abs-dropped", "abs"),
    "labels-ignored": (_micro(lambda z, t: torch.log1p(torch.exp(-z))), "labels-ignored",
                       "labelled 0"),
    "labels-ignored-softplus": (_micro(lambda z, t: F.softplus(-z), split=True),
                                "labels-ignored", "labelled 0"),
    "labels-as-signs": (_micro(lambda z, t: torch.log1p(torch.exp(-t * z))), "labels-as-signs",
                        "2y - 1"),
    "soft-margin-on-01-labels": (_micro(lambda z, t: F.soft_margin_loss(z, t, reduction="none")),
                                 "labels-as-signs", "2y - 1"),
    "label-term-dropped": (_micro(lambda z, t: F.softplus(z)), "label-term-dropped",
                           "labelled 1"),
    "sigmoid-twice": (_micro(lambda z, t: F.binary_cross_entropy_with_logits(
        torch.sigmoid(z), t, reduction="none")), "sigmoid-twice", "twice"),
    "bce-with-logits-module-on-p": (_micro(lambda z, t: torch.nn.BCEWithLogitsLoss(
        reduction="none")(torch.sigmoid(z), t), split=True), "sigmoid-twice", "twice"),
    "bce-by-hand-on-logits": (_micro(lambda z, t: -(t * torch.log(z)
                                                    + (1 - t) * torch.log(1 - z))),
                              "sigmoid-missing", "no sigmoid"),
}

CORRECT = {
    "with-logits": lambda z, t: F.binary_cross_entropy_with_logits(z, t, reduction="none"),
    "stable-with-abs": lambda z, t: z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z.abs())),
    "softplus-per-label": lambda z, t: F.softplus(-z) * t + F.softplus(z) * (1 - t),
    "logsigmoid": lambda z, t: -(t * F.logsigmoid(z) + (1 - t) * F.logsigmoid(-z)),
    "softplus-minus-tz": lambda z, t: F.softplus(z) - t * z,
    "logaddexp": lambda z, t: torch.logaddexp(_zero(z), z) - t * z,
}
SEEDS = (0, 1, 2, 3)


@pytest.mark.parametrize("how", sorted(WRONG))
def test_a_wrong_hand_written_loss_is_named_by_its_form(how):
    fn, _, words = WRONG[how]
    for seed in SEEDS:
        result = microbatch.check_accumulated_grad(fn, np.random.default_rng(seed),
                                                   stale=seed % 2 == 1)
        assert not result.passed, (how, seed)
        assert result.misconception == "wrong-logistic-loss", (how, seed, result.message)
        assert words in result.message, (how, seed, result.message)
        assert "binary_cross_entropy_with_logits" in result.message
        assert "second w" in result.message and "differs from the logistic loss" in \
            result.message
        assert "w arrived with" not in result.message, result.message  # w.grad was cleared


@pytest.mark.parametrize("how", sorted(WRONG))
def test_the_form_is_named_on_the_same_objects_twice(how):
    result = microbatch.check_same_objects(WRONG[how][0], np.random.default_rng(5))
    assert result.misconception == "wrong-logistic-loss", result.message


def test_the_blind_students_negative_logits_are_told():
    fn = WRONG["abs-dropped-clamp"][0]
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=True)
    assert "max(z, 0) - z·y + log1p(exp(-z))" in result.message, result.message
    assert "rows (those with a negative logit), with logits from -" in result.message
    assert "max(z, 0) - z·y + log1p(exp(-|z|))" in result.message
    assert "negative logits" in result.message
    assert result.evidence.probes[-1]["id"] == "wrong-logistic-loss"


def test_the_stale_grad_kept_as_well_is_told_too():
    fn = _micro(lambda z, t: z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z)),
                keep_stale=True)
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(1), stale=True)
    assert result.misconception == "wrong-logistic-loss", result.message
    assert "w arrived with" in result.message, result.message


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_right_losses_in_any_style_pass(how):
    fn = _micro(CORRECT[how])
    for seed in SEEDS:
        for stale in (False, True):
            result = microbatch.check_accumulated_grad(fn, np.random.default_rng(seed),
                                                       stale=stale)
            assert result.passed, (how, seed, result.message)
    assert microbatch.check_same_objects(fn, np.random.default_rng(5)).passed


def _weighted(row_loss, weight):
    """Another q2 mistake on the right loss: each micro-batch's mean times ``weight(bj, B, J)``."""
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        start = 0
        for bj in sizes:
            Xj, yj = X[start:start + bj], y[start:start + bj]
            (row_loss(Xj @ w, yj).mean() * weight(bj, sum(sizes), len(sizes))).backward()
            start += bj
        return w.grad.clone()
    return accumulated_grad


def _on_logits(w, X, y, sizes):
    w.grad = None
    B, start = sum(sizes), 0
    for bj in sizes:
        Xj, yj = X[start:start + bj], y[start:start + bj]
        F.binary_cross_entropy_with_logits(Xj @ w * (bj / B), yj).backward()
        start += bj
    return w.grad.clone()


BCE = CORRECT["with-logits"]
OTHERS = {
    "unweighted-mean": (_weighted(BCE, lambda bj, B, J: 1 / J), "unweighted-mean"),
    "divided-by-J": (_weighted(BCE, lambda bj, B, J: bj / B / J), "divided-by-J"),
    "sum-not-mean": (_weighted(BCE, lambda bj, B, J: bj), "sum-not-mean"),
    "stale-grad-kept": (_micro(BCE, keep_stale=True), "stale-grad-kept"),
    "logits-clamped": (_micro(lambda z, t: BCE(z.clamp(-20, 20), t)), "logits-clamped"),
    "sigmoid-log": (_micro(lambda z, t: F.binary_cross_entropy(torch.sigmoid(z), t,
                                                               reduction="none")),
                    "sigmoid-log"),
    "exp-overflow": (_micro(lambda z, t: torch.log1p(torch.exp(z)) - t * z), "exp-overflow"),
    "weight-on-logits": (_on_logits, "weight-on-logits"),
}


@pytest.mark.parametrize("how", sorted(OTHERS))
def test_other_named_mistakes_keep_their_names(how):
    fn, name = OTHERS[how]
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(1), stale=True)
    assert result.misconception == name, (how, result.message)


def test_a_wrong_form_with_another_mistake_is_not_told_the_form_alone():
    # the abs dropped and the micro-batch means averaged: neither replay is the answer
    fn = _weighted(lambda z, t: z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z)),
                   lambda bj, B, J: 1 / J)
    for seed in SEEDS:
        result = microbatch.check_accumulated_grad(fn, np.random.default_rng(seed), stale=False)
        assert not result.passed
        assert result.misconception not in ("wrong-logistic-loss", "unweighted-mean"), \
            result.message


def test_bce_on_logits_that_raises_is_told_it_takes_probabilities():
    fn = _micro(lambda z, t: F.binary_cross_entropy(z, t, reduction="none"))
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=False)
    assert not result.passed
    assert "takes probabilities" in result.message, result.message
    assert "binary_cross_entropy_with_logits" in result.message
    assert hint_for("RuntimeError: all elements of input should be between 0 and 1")
