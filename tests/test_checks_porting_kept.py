"""Blind round zzf's q1 class: fewer losses than steps, told by what the answer shows.

student_05 kept its losses in ``collections.deque(maxlen=500)``: on the separable regime's
600-700 steps it made every update (its ``w`` and ``b`` are the grader's) and returned the last
500 losses, and was told ``stopped-early``, "the loop stopped after 500 of the 646 steps".
What happened is read from the returned ``w`` and ``b`` and from where the returned losses sit
in the grader's own sequence: a window of the last ``N`` (``losses-window-kept``), a record
from step ``s`` on (``losses-start-skipped``), every ``k``-th loss (``losses-subsampled``), the
first ``N`` of a run that went on (``losses-truncated``); a real stop keeps ``stopped-early``,
and the other near-misses keep their names. The answers are written the way students write
them."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import logreg_kept, logreg_regime_draws, logreg_regimes
from autograder.checks.porting.logreg import check_train_logreg, judge_losses
from autograder.checks.porting.logreg_runs import reference_run


def blind_student_05(X, y, lr=0.5, steps=300):
    """Blind round zzf's answer, as written."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    history = deque(maxlen=500)   # keeps memory bounded on long runs
    for step in range(steps):
        logits = X @ w + b
        loss = F.binary_cross_entropy_with_logits(logits, y)
        w.grad = None
        b.grad = None
        loss.backward()
        history.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w, b, list(history)


def loop(record=None, *, new=list, out=list, iterations=None, stop=None, after=False):
    """A contract loop whose record is ``record(log, step, steps, loss)`` (an append by
    default), returned as ``out(log)``; ``iterations(steps)``: how many it runs; ``stop``: a
    loss threshold checked "before" the update (and the record) or "after" it; ``after``:
    the loss recorded after the update."""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        log = new()
        for step in range(iterations(steps) if iterations else steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            if stop == "before" and loss.item() < 1e-2:
                break
            w.grad, b.grad = None, None
            loss.backward()
            value = loss.item()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
                if after:
                    value = F.binary_cross_entropy_with_logits(X @ w + b, y).item()
            if record is None:
                log.append(value)
            else:
                record(log, step, steps, value)
            if stop == "after" and value < 1e-2:
                break
        return w, b, out(log)
    return train_logreg


def rolling(size):
    def record(log, step, steps, value):
        log.append(value)
        if len(log) > size:
            log.pop(0)
    return record


def trimmed(log, step, steps, value):
    log.append(value)
    del log[:-450]


def capped(log, step, steps, value):
    if len(log) < 500:
        log.append(value)


def regimes(fn, seed=0):
    return logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(seed))


def params_pass(fn):
    """w and b are right: the params check keeps its points."""
    result = check_train_logreg(fn, np.random.default_rng(0), part="params")
    assert result.passed, result.message


NEVER_SAID = ("the loop stopped", "no early stop")


@pytest.mark.parametrize("seed", [0, 1])
def test_the_blind_deque_is_a_window_not_an_early_stop(seed):
    result = regimes(blind_student_05, seed)
    assert not result.passed and result.misconception == "losses-window-kept", result.message
    for phrase in ("the loop ran every step", "the last 500", "deque(maxlen=500)",
                   "one loss per step, in order", "the same number again"):
        assert phrase in result.message, (phrase, result.message)
    for phrase in NEVER_SAID:
        assert phrase not in result.message, result.message


WINDOWS = {
    "sliced-on-return": (loop(out=lambda log: log[-500:]), 500),
    "rolling-pop": (loop(rolling(400)), 400),
    "del-head": (loop(trimmed), 450),
    "deque-300": (loop(new=lambda: deque(maxlen=300)), 300),  # not the lesson's steps=300
}


@pytest.mark.parametrize("how", sorted(WINDOWS))
def test_windows_of_the_last_losses_are_named(how):
    fn, size = WINDOWS[how]
    result = regimes(fn)
    assert result.misconception == "losses-window-kept", result.message
    assert f"the last {size}:" in result.message and "the loop ran every step" in result.message
    assert not any(phrase in result.message for phrase in NEVER_SAID), result.message
    params_pass(fn)


def test_a_record_from_a_later_step_on_is_told_apart_from_a_window():
    """From step 10 on: the main check's window is asked again with 7 more steps and keeps
    its first step, not its count; in the regimes the single step returns no loss and is
    asked again with 40 steps."""
    fn = loop(lambda log, step, steps, value: log.append(value) if step >= 10 else None)
    for result in (check_train_logreg(fn, np.random.default_rng(0), part="losses"),
                   regimes(fn)):
        assert result.misconception == "losses-start-skipped", result.message
        assert "from step 10 on again" in result.message, result.message
        assert not any(phrase in result.message for phrase in NEVER_SAID), result.message
    params_pass(fn)


def test_a_record_that_starts_past_any_probe_says_what_is_established():
    """From step 200 on: the single step returns no loss, and so does 40 steps: unnamed as
    before, told that w and b show every update and that no loss came back."""
    fn = loop(lambda log, step, steps, value: log.append(value) if step >= 200 else None)
    result = regimes(fn)
    assert result.misconception == "wrong-length", result.message
    assert "the loop ran every step, but no loss was returned" in result.message


SUBSAMPLES = {
    "every-10": (lambda log, step, steps, value: log.append(value) if step % 10 == 0 else None,
                 "every 10 steps:"),
    "every-10-at-the-end": (lambda log, step, steps, value:
                            log.append(value) if (step + 1) % 10 == 0 else None,
                            "every 10 steps:"),
    "every-25-and-the-last": (lambda log, step, steps, value:
                              log.append(value) if step % 25 == 0 or step == steps - 1 else None,
                              "every 25 steps, and the last step:"),
}


@pytest.mark.parametrize("how", sorted(SUBSAMPLES))
def test_losses_logged_every_k_steps_are_named(how):
    record, phrase = SUBSAMPLES[how]
    fn = loop(record)
    result = regimes(fn)
    assert result.misconception == "losses-subsampled", result.message
    assert phrase in result.message and "the loop ran every step" in result.message
    assert not any(p in result.message for p in NEVER_SAID), result.message
    params_pass(fn)


def test_every_k_steps_is_named_in_the_ordinary_check_too():
    fn = loop(SUBSAMPLES["every-10"][0])
    result = check_train_logreg(fn, np.random.default_rng(0), part="losses")
    assert result.misconception == "losses-subsampled", result.message


@pytest.mark.parametrize("how", ["capped-at-500", "sliced-to-300"])
def test_the_first_losses_of_a_run_that_went_on_are_named(how):
    """The first N kept while the loop made every update; 300 of them is not the lesson's
    steps=300 hard-coded (that run's w and b are the grader's after 300 updates)."""
    fn = loop(capped) if how == "capped-at-500" else loop(out=lambda log: log[:300])
    result = regimes(fn)
    assert result.misconception == "losses-truncated", result.message
    assert "the loop ran every step" in result.message
    assert not any(p in result.message for p in NEVER_SAID), result.message


# --- near-misses that keep their names ---------------------------------------------------------


@pytest.mark.parametrize("fn", [loop(stop="before"), loop(stop="after"),
                                loop(iterations=lambda steps: min(steps, 500))],
                         ids=["threshold-before-update", "threshold-after-update",
                              "at-most-500-iterations"])
def test_a_real_early_stop_keeps_its_name(fn):
    for seed in (0, 1):
        result = regimes(fn, seed)
        assert result.misconception == "stopped-early", result.message
        assert "w and b are the grader's after" in result.message
        assert "however small the loss gets: no early stop." in result.message


def test_the_lesson_steps_hard_coded_keep_their_name():
    fn = loop(iterations=lambda steps: 300)
    assert regimes(fn).misconception == "steps-ignored"
    assert check_train_logreg(fn, np.random.default_rng(0), part="losses").misconception \
        == "steps-ignored"


@pytest.mark.parametrize("offset", [-3, -1, 1])
def test_iterations_off_by_a_few_keep_their_name_beside_their_w_and_b(offset):
    fn = loop(iterations=lambda steps: steps + offset)
    result = check_train_logreg(fn, np.random.default_rng(0), part="losses")
    assert result.misconception == "steps-miscounted", result.message


def test_the_loss_after_the_update_keeps_its_name_in_a_window_too():
    for fn in (loop(after=True), loop(new=lambda: deque(maxlen=500), after=True)):
        assert regimes(fn).misconception == "loss-after-update"


CORRECT = {
    "deque-without-maxlen": loop(new=deque),
    "deque-longer-than-any-run": loop(new=lambda: deque(maxlen=1000)),
    "plain-list": loop(),
    "tensor-tolist": loop(new=list, out=lambda log: torch.tensor(log).tolist()),
    "numpy-tolist": loop(new=list, out=lambda log: np.array(log).tolist()),
}


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_correct_records_pass(how):
    fn = CORRECT[how]
    assert regimes(fn).passed
    for part in ("losses", "params"):
        assert check_train_logreg(fn, np.random.default_rng(0), part=part).passed


# --- what the losses and w and b alone establish -----------------------------------------------


def separable():
    X, y, lr, steps = logreg_regime_draws.draw_regime(np.random.default_rng(0), "separable")
    w, b, losses = reference_run(X, y, lr, steps)
    return X, y, lr, steps, w.float(), b.float(), losses


def test_a_window_beside_other_w_and_b_is_never_named_a_record_or_a_stop():
    X, y, lr, steps, w, b, losses = separable()
    tail = losses[-200:]
    assert judge_losses(tail, X, y, lr, steps, (w, b)).misconception == "losses-window-kept"
    for params in ((w * 0.5, b), None):
        verdict = judge_losses(tail, X, y, lr, steps, params)
        assert verdict.misconception not in ("stopped-early", *logreg_kept.RECORDS), \
            verdict.message
        assert "the loop stopped" not in verdict.message, verdict.message
        assert f"steps {steps - 200} to {steps - 1}" in verdict.message, verdict.message


def test_the_first_losses_without_w_and_b_are_not_called_a_stop():
    """Without the w and b that show it, a list of the grader's first losses is said as
    placed, neither a stop nor a short record."""
    X, y, lr, steps, w, b, losses = separable()
    verdict = judge_losses(losses[:100], X, y, lr, steps)
    assert verdict.misconception == "wrong-length", verdict.message
    assert "steps 0 to 99" in verdict.message and "stopped" not in verdict.message


def test_a_window_of_losses_after_each_update_says_so():
    X, y, lr, steps, w, b, _ = separable()
    after = reference_run(X, y, lr, steps + 1)[2][-150:]  # the last is after the last update
    verdict = judge_losses(after, X, y, lr, steps, (w, b))
    assert verdict.misconception == "losses-window-kept", verdict.message
    assert "measured after that step's update, one step late" in verdict.message


def test_one_loss_or_flat_losses_are_not_given_a_pattern():
    X, y, lr, steps, w, b, losses = separable()
    one = judge_losses(losses[-1:], X, y, lr, steps, (w, b))
    assert one.misconception == "wrong-length", one.message
    assert f"at step {steps - 1} only" in one.message
    flat = judge_losses([losses[-1]] * 50, X, y, lr, steps, (w, b))
    assert flat.misconception not in logreg_kept.RECORDS, flat.message
