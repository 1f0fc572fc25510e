"""Does q1_logreg's feedback name what a loop trains on and how often it updates (features
rescaled inside ``train_logreg``, a count of updates off by a few), and an optimizer kept from
an earlier call, in q1 and in q4's ``make_optimizer``, for any spelling, while a correct answer
is never named? The answers below are written the way students write them, apart from the
grader's own replays."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.checks.porting import device, logreg, logreg_regimes
from autograder.worker.arrangements import observed_optimizers

FAST = settings(deadline=None, max_examples=12)
seeds = st.integers(0, 2**32 - 1)

#: How a student rescales X inside train_logreg, spelled apart from the grader's replays.
RESCALE = {
    "standardised": lambda X: (X - X.mean(0, keepdim=True)) / X.std(0, keepdim=True),
    "population-std": lambda X: (X - X.mean(0)) / X.var(0, unbiased=False).sqrt(),
    "min-max": lambda X: (X - X.min(0).values) / (X.max(0).values - X.min(0).values),
    "centred": lambda X: X - X.mean(0),
    "std-scaled": lambda X: X / X.std(0),
}


def train(X, y, lr, steps, *, rescale=None, updates=None, records=None):
    """A plain loop; ``updates``/``records``: how many updates and losses it makes."""
    if rescale is not None:
        X = RESCALE[rescale](X)
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    updates = steps if updates is None else updates
    records = steps if records is None else records
    for step in range(max(updates, records)):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        if step < records:
            losses.append(loss.item())
        if step < updates:
            w.grad, b.grad = None, None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
    return w, b, losses


def problem(seed):
    return logreg.draw_problem(np.random.default_rng(seed))


@FAST
@given(seeds, st.sampled_from(sorted(RESCALE)))
def test_features_rescaled_inside_are_named(seed, how):
    """Is a loop on rescaled features named ``features-rescaled``, by its losses or by its
    final w and b (data already near zero mean may keep the losses of a centred run)?"""
    X, y, lr, steps = problem(seed)
    got = train(X, y, lr, steps, rescale=how)
    verdicts = [logreg.judge_losses(got[2], X, y, lr, steps),
                logreg.judge_params(got, X, y, lr, steps)]
    assert not all(v.ok for v in verdicts)
    for verdict in verdicts:
        assert verdict.ok or verdict.misconception == "features-rescaled", verdict.message
        assert verdict.ok or "training on X" in verdict.message


@FAST
@given(seeds, st.sampled_from([-1, 1, 2, 3]))
def test_updates_off_by_a_few_are_named(seed, offset):
    """Are ``steps`` losses with ``steps + offset`` updates (a break before the last update,
    updates after the loop) named ``updates-miscounted``, with the count?"""
    X, y, lr, steps = problem(seed)
    got = train(X, y, lr, steps, updates=steps + offset)
    assert logreg.judge_losses(got[2], X, y, lr, steps).ok
    params = logreg.judge_params(got, X, y, lr, steps)
    assert params.misconception == "updates-miscounted", params.message
    assert f"after {steps + offset} updates, not the {steps} asked for" in params.message


@FAST
@given(seeds, st.sampled_from([-3, -2, -1, 1, 2, 3]))
def test_iterations_off_by_a_few_are_named(seed, offset):
    """Is a loop that runs ``steps + offset`` iterations named ``steps-miscounted`` by its
    losses and by its final w and b?"""
    X, y, lr, steps = problem(seed)
    got = train(X, y, lr, steps + offset)
    for verdict in (logreg.judge_losses(got[2], X, y, lr, steps),
                    logreg.judge_params(got, X, y, lr, steps)):
        assert verdict.misconception == "steps-miscounted", verdict.message
        assert f"ran {steps + offset} iterations" in verdict.message


def test_a_single_step_that_never_updates_is_asked_with_three():
    """Is a loop that skips its last update, seen at steps=1 as w and b left at zeros, asked
    again with three steps and named there?"""
    def train_logreg(X, y, lr=0.5, steps=300):
        return train(X, y, lr, steps, updates=steps - 1)

    result = logreg_regimes.check_train_logreg_regimes(train_logreg, np.random.default_rng(0))
    assert result.misconception == "updates-miscounted", result.message
    assert "Asked again with steps=3" in result.message


def kept_global():
    """train_logreg whose optimizer is built on the first call and kept."""
    kept = {}

    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = kept.setdefault("opt", torch.optim.SGD([w, b], lr=lr))
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return w, b, losses

    return train_logreg


@pytest.mark.parametrize("part", ["losses", "params"])
def test_an_optimizer_kept_between_calls_is_named(part):
    """Does a train_logreg whose optimizer still holds the first call's w and b lose the point
    with ``optimizer-kept``, and one that never updates for another reason keep the question?"""
    fn = kept_global()
    fn(*problem(5)[:2])  # the notebook's own call builds the optimizer
    result = logreg.check_train_logreg(fn, np.random.default_rng(1), part=part)
    assert result.misconception == "optimizer-kept", result.message
    assert "still holds that call's w and b" in result.message

    def no_step(X, y, lr=0.5, steps=300):
        w, b = torch.zeros(X.shape[1], requires_grad=True), torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=lr)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            loss.backward()
            losses.append(loss.item())
        return w, b, losses

    result = logreg.check_train_logreg(no_step, np.random.default_rng(1), part=part)
    assert result.misconception == "params-never-updated", result.message


def test_optimizer_steps_are_counted_as_kept_or_new():
    """Does the arrangement tell an optimizer built before the block from one built in it?"""
    p = nn.Parameter(torch.zeros(2))
    before, init = torch.optim.SGD([p], lr=0.1), torch.optim.Optimizer.__init__
    observed: dict = {}
    with observed_optimizers(observed):
        p.grad = torch.ones(2)
        before.step()
        torch.optim.SGD([p], lr=0.1).step()
        torch.optim.Adam([p]).step()
    assert observed["optimizer_steps"] == {"kept": 1, "new": 2}
    assert torch.optim.Optimizer.__init__ is init


def kept_make_optimizer():
    made = []

    def make_optimizer(model, device, lr=0.1, _made=made):
        model.to(device)
        if not _made:
            _made.append(torch.optim.SGD(model.parameters(), lr=lr))
        return _made[0]

    return make_optimizer


@pytest.mark.parametrize("moved", [False, True])
def test_make_optimizer_kept_between_calls_is_named(moved):
    """Is a make_optimizer that returns the optimizer of its first call named
    ``optimizer-kept``, while one with a hard-coded lr stays ``lr-ignored``?"""
    fn = kept_make_optimizer()
    fn(nn.Linear(2, 2), torch.device("cpu"))  # the public test's call
    result = device.check_make_optimizer(fn, np.random.default_rng(0), moved=moved)
    assert result.misconception == "optimizer-kept", result.message
    assert "built in an earlier call and kept" in result.message

    def hard_coded(model, device, lr=0.1):
        return torch.optim.SGD(model.to(device).parameters(), lr=0.1)

    result = device.check_make_optimizer(hard_coded, np.random.default_rng(0), moved=moved)
    assert result.misconception == "lr-ignored", result.message
