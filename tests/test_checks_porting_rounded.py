"""Does q1_logreg's feedback name losses recorded rounded to a few decimals (round(loss.item(),
4), as the lesson prints them), in every spelling, while a right record, a float16 record and
a rounded record of a wrong training are not named so?"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import logreg

#: how a loss is recorded -> the decimals it keeps (None: not a rounding)
RECORD = {
    "round-4": (lambda loss: round(loss.item(), 4), 4),
    "round-3": (lambda loss: round(float(loss), 3), 3),
    "round-2": (lambda loss: round(loss.item(), 2), 2),
    "fstring-5": (lambda loss: float(f"{loss.item():.5f}"), 5),
    "percent-4": (lambda loss: float("%.4f" % loss.item()), 4),
    "numpy-4": (lambda loss: float(np.round(loss.item(), 4)), 4),
    "torch-round-4": (lambda loss: torch.round(loss.detach(), decimals=4).item(), 4),
}
RIGHT = {
    "item": lambda loss: loss.item(),
    "float": lambda loss: float(loss),
    "double-item": lambda loss: loss.detach().double().item(),
}


def train(record, *, clear=True):
    def train_logreg(X, y, lr, steps):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            losses.append(record(loss))
            if clear:
                w.grad, b.grad = None, None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses

    return train_logreg


def problem(seed):
    return logreg.draw_problem(np.random.default_rng(seed))


@pytest.mark.parametrize("how", sorted(RECORD))
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_rounded_losses_are_named(how, seed):
    record, k = RECORD[how]
    X, y, lr, steps = problem(seed)
    got = train(record)(X, y, lr, steps)
    assert logreg.judge_params(got, X, y, lr, steps).ok
    verdict = logreg.judge_losses(got[2], X, y, lr, steps)
    if verdict.ok:  # a rounding within the tolerance loses nothing
        assert k >= 5
        return
    assert verdict.misconception == "losses-rounded", verdict.message
    assert f"rounded to {k} decimals" in verdict.message
    assert "loss.item() as is" in verdict.message


def test_the_blind_spelling_is_named_by_the_losses_check():
    fn = train(RECORD["round-4"][0])
    result = logreg.check_train_logreg(fn, np.random.default_rng(2), part="losses")
    assert not result.passed and result.misconception == "losses-rounded", result.message
    assert logreg.check_train_logreg(fn, np.random.default_rng(2), part="params").passed


@pytest.mark.parametrize("how", sorted(RIGHT))
def test_a_right_record_is_not_named(how):
    for seed in range(3):
        X, y, lr, steps = problem(seed)
        assert logreg.judge_losses(train(RIGHT[how])(X, y, lr, steps)[2], X, y, lr, steps).ok


def test_a_float16_record_is_not_named_rounded():
    X, y, lr, steps = problem(3)
    got = train(lambda loss: loss.detach().half().item())(X, y, lr, steps)
    verdict = logreg.judge_losses(got[2], X, y, lr, steps)
    assert verdict.misconception != "losses-rounded", verdict.message


def test_a_rounded_record_of_a_wrong_training_is_not_named_rounded():
    """Gradients never cleared, losses rounded: the training is wrong, not only the record."""
    X, y, lr, steps = problem(4)
    got = train(lambda loss: round(loss.item(), 4), clear=False)(X, y, lr, steps)
    verdict = logreg.judge_losses(got[2], X, y, lr, steps)
    assert not verdict.ok and verdict.misconception != "losses-rounded", verdict.message
