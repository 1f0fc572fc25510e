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


def recording(how):
    """A correct loop whose recorded losses are a running statistic of each step's loss, or
    another spelling of the right record (``how`` starting with "right")."""
    def train_logreg(X, y, lr, steps):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses, seen, state = [], [], {"running": torch.zeros(()), "ema": None, "prev": None}
        for step in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            w.grad, b.grad = None, None
            loss.backward()
            value = loss.item()
            seen.append(value)
            if how == "running-mean":  # the blind round's spelling, on the device
                state["running"] += loss.detach()
                losses.append((state["running"] / (step + 1)).item())
            elif how == "mean-of-list":
                losses.append(sum(seen) / len(seen))
            elif how == "incremental-mean":
                avg = losses[-1] if losses else 0.0
                losses.append(avg + (value - avg) / (step + 1))
            elif how == "summed":
                losses.append(sum(seen))
            elif how.startswith("ema"):
                beta = 0.98 if how.endswith("98") else 0.9
                ema = state["ema"]
                if how.startswith("ema-first"):
                    ema = value if ema is None else beta * ema + (1 - beta) * value
                    losses.append(ema)
                else:
                    ema = beta * (ema or 0.0) + (1 - beta) * value
                    losses.append(ema / (1 - beta ** (step + 1)) if how.startswith(
                        "ema-corrected") else ema)
                state["ema"] = ema
            elif how == "previous":
                losses.append(value if state["prev"] is None else state["prev"])
                state["prev"] = value
            elif how == "best-so-far":
                losses.append(min(seen))
            elif how == "right-float":
                losses.append(float(loss))
            elif how == "right-sum-over-m":  # the mean written out: the same per-step loss
                losses.append(float(F.binary_cross_entropy_with_logits(
                    X @ w + b, y, reduction="sum").item() / X.shape[0]))
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses

    return train_logreg


RUNNING = {"running-mean": "losses-running-mean", "mean-of-list": "losses-running-mean",
           "incremental-mean": "losses-running-mean", "summed": "losses-summed",
           "ema-first": "losses-smoothed", "ema-zero": "losses-smoothed",
           "ema-zero-98": "losses-smoothed", "ema-corrected": "losses-smoothed",
           "ema-first-98": "losses-smoothed", "previous": "losses-lagged"}


@FAST
@given(seeds, st.sampled_from(sorted(RUNNING)))
def test_losses_recorded_as_a_running_statistic_are_named(seed, how):
    """Losses that are a running mean, a cumulative sum, an exponential moving average
    (started at the first loss, at 0, or bias-corrected; its factor fitted) or the previous
    step's loss, of a right run, are named; the final w and b pass."""
    X, y, lr, steps = problem(seed)
    got = recording(how)(X, y, lr, steps)
    assert logreg.judge_params(got, X, y, lr, steps).ok
    verdict = logreg.judge_losses(got[2], X, y, lr, steps)
    assert not verdict.ok and verdict.misconception == RUNNING[how], verdict.message
    assert "before the update" in verdict.message and "append" in verdict.message
    if how.startswith("ema"):
        assert ("0.98" if how.endswith("98") else "0.9") in verdict.message


@pytest.mark.parametrize("how", ["right-float", "right-sum-over-m"])
def test_a_right_record_is_not_taken_for_a_running_statistic(how):
    for seed in range(3):
        X, y, lr, steps = problem(seed)
        got = recording(how)(X, y, lr, steps)
        assert logreg.judge_losses(got[2], X, y, lr, steps).ok


@pytest.mark.parametrize("check", ["losses", "regimes"])
@pytest.mark.parametrize("how", ["running-mean", "summed", "ema-zero", "previous"])
def test_a_running_statistic_is_named_by_every_check_it_fails(check, how):
    """The checks as a notebook meets them: the losses check and the regimes (one step
    passes for most of them; the separable data's long run names it); the params check
    passes."""
    fn = recording(how)
    if check == "losses":
        result = logreg.check_train_logreg(fn, np.random.default_rng(2), part="losses")
        assert logreg.check_train_logreg(fn, np.random.default_rng(2), part="params").passed
    else:
        result = logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(2))
    assert not result.passed and result.misconception == RUNNING[how], result.message


def test_best_loss_so_far_is_named_where_the_loss_rises():
    """The lowest loss so far is the loss itself while it falls: named where it rose."""
    X, y, lr, steps = problem(7)
    lr = 40.0  # large enough that the loss rises somewhere
    got = recording("best-so-far")(X, y, lr, steps)
    right = recording("right-float")(X, y, lr, steps)[2]
    assert any(b > a for a, b in zip(right, right[1:]))
    verdict = logreg.judge_losses(got[2], X, y, lr, steps)
    assert verdict.misconception == "losses-running-min", verdict.message
