"""Blind round zx's q1 class: losses recorded as the running minimum of a run that trains right
were told ``params-never-updated`` ("w and b never changed from the starting zeros") where the
loss rose from the first step on (a large lr: the large-logits and large-gradient regimes), so
the running minimum stayed at the first loss, although the returned ``w`` and ``b`` were the
grader's. A claim about ``w`` and ``b`` is now made only from the returned ``w`` and ``b``, and
flat losses that are the running minimum of the grader's, beside a ``w`` and ``b`` that moved,
are ``losses-running-min``.

Variants (each spelling of the running minimum), and near-misses that keep their verdicts: a
correct loop, a loop that never updates (still ``params-never-updated``), the loss recorded
after the update (``loss-after-update``), a running maximum (never named a running minimum).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import logreg, logreg_regimes
from autograder.checks.porting.logreg_diagnosis import diagnose
from autograder.checks.porting.logreg_regime_draws import draw_regime
from autograder.checks.porting.logreg_runs import reference_run


def _loop(record, *, update=True, after=False):
    """A plain loop whose losses list is ``record(raw)``, ``raw`` the per-step losses (floats),
    or, for the running forms, built step by step by ``record(losses, loss)``."""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        raw, losses, state = [], [], {}
        for _ in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            w.grad = None
            b.grad = None
            loss.backward()
            if update:
                with torch.no_grad():
                    w -= lr * w.grad
                    b -= lr * b.grad
            if after:
                with torch.no_grad():
                    loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            if record.__code__.co_argcount == 3:
                record(losses, loss, state)
            else:
                raw.append(loss.item())
        return w, b, (losses if record.__code__.co_argcount == 3 else record(raw))
    return train_logreg


def _best_variable(losses, loss, state):  # blind round zx's student_04
    state["best"] = min(state.get("best", float("inf")), loss.item())
    losses.append(state["best"])


def _min_of_last(losses, loss, state):
    losses.append(min(losses[-1], loss.item()) if losses else loss.item())


def _min_of_all(losses, loss, state):
    state.setdefault("seen", []).append(loss.item())
    losses.append(min(state["seen"]))


def _best_step(losses, loss, state):  # the loss of the best step so far
    if "best" not in state or loss.item() < state["best"]:
        state["best"] = loss.item()
    losses.append(state["best"])


def _torch_minimum(losses, loss, state):
    state["best"] = (loss.detach() if "best" not in state
                     else torch.minimum(state["best"], loss.detach()))
    losses.append(state["best"].item())


RUNNING_MIN = {
    "best-variable": _loop(_best_variable),
    "min-of-last": _loop(_min_of_last),
    "min-of-all": _loop(_min_of_all),
    "best-step": _loop(_best_step),
    "torch-minimum": _loop(_torch_minimum),
    "cummin-tolist": _loop(lambda raw: torch.tensor(raw).cummin(0).values.tolist()),
    "numpy-accumulate": _loop(lambda raw: np.minimum.accumulate(raw).tolist()),
}

CORRECT = _loop(lambda raw: raw)
NEVER_UPDATED = _loop(lambda raw: raw, update=False)
AFTER_UPDATE = _loop(lambda raw: raw, after=True)
RUNNING_MAX = _loop(lambda raw: torch.tensor(raw).cummax(0).values.tolist())


def rising(seed=0):
    """A problem (the large-logits regime's) whose loss rises at step 1 and never falls back
    to the first loss: the running minimum is the first loss throughout."""
    X, y, lr, steps = draw_regime(np.random.default_rng(seed), "large-logits")
    right = reference_run(X, y, lr, steps)[2]
    assert min(right[1:]) > right[0], right
    return X, y, lr, steps


@pytest.mark.parametrize("how", sorted(RUNNING_MIN))
def test_flat_running_minimum_with_the_grader_s_w_and_b_is_running_min(how):
    X, y, lr, steps = rising()
    w, b, losses = RUNNING_MIN[how](X.clone(), y.clone(), lr, steps)
    assert max(losses) == min(losses)  # flat: the first loss, as a never-updated loop's
    assert logreg.judge_params((w, b, losses), X, y, lr, steps).ok
    verdict = logreg.judge_losses(losses, X, y, lr, steps, params=(w, b))
    assert verdict.misconception == "losses-running-min", verdict.message
    assert "never changed" not in verdict.message


@pytest.mark.parametrize("how", sorted(RUNNING_MIN))
@pytest.mark.parametrize("seed", [0, 3, 5])
def test_the_regimes_check_names_the_running_minimum(how, seed):
    """The check as the notebook met it: it told params-never-updated (at seed 5 the first
    loss held also fitted a moving average of factor 1 - 1e-8, which is no smoothing)."""
    result = logreg_regimes.check_train_logreg_regimes(RUNNING_MIN[how],
                                                       np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception == "losses-running-min", result.message
    assert "never changed" not in result.message and "lowest loss so far" in result.message


@pytest.mark.parametrize("part", ["losses", "params"])
def test_the_running_minimum_still_passes_ordinary_draws_and_the_params(part):
    """Where the loss only falls the running minimum is the loss itself: full marks there."""
    for seed in range(2):
        result = logreg.check_train_logreg(RUNNING_MIN["best-variable"],
                                           np.random.default_rng(seed), part=part)
        assert result.passed, result.message


def test_losses_alone_make_no_claim_about_w_and_b():
    """Without the returned w and b, flat losses that are also the running minimum tell
    neither apart: what was established is said, no parameter is claimed unchanged."""
    X, y, lr, steps = rising()
    losses = RUNNING_MIN["best-variable"](X.clone(), y.clone(), lr, steps)[2]
    name, hint = diagnose(losses, X, y, lr, steps)
    assert name != "params-never-updated" and "never changed" not in hint, (name, hint)
    verdict = logreg.judge_losses(losses, X, y, lr, steps)
    assert verdict.misconception != "params-never-updated", verdict.message
    assert "never changed" not in verdict.message


def test_w_and_b_that_moved_are_never_called_unchanged():
    """Flat losses beside a w and b that moved but are not the grader's: no claim about them."""
    X, y, lr, steps = rising()
    w, b, losses = RUNNING_MIN["best-variable"](X.clone(), y.clone(), lr, steps)
    name, hint = diagnose(losses, X, y, lr, steps, (w * 0.5, b))
    assert name != "params-never-updated" and "never changed" not in hint, (name, hint)


# --- near-misses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 3])
def test_a_correct_loop_passes_the_regimes(seed):
    assert logreg_regimes.check_train_logreg_regimes(CORRECT, np.random.default_rng(seed)).passed


def test_a_loop_that_never_updates_is_still_params_never_updated():
    """The same flat losses, with w and b at the starting zeros: the zeros show it."""
    X, y, lr, steps = rising()
    w, b, losses = NEVER_UPDATED(X.clone(), y.clone(), lr, steps)
    verdict = logreg.judge_losses(losses, X, y, lr, steps, params=(w, b))
    assert verdict.misconception == "params-never-updated", verdict.message
    assert "w and b never changed from the starting zeros" in verdict.message
    for seed in (0, 3):
        result = logreg_regimes.check_train_logreg_regimes(NEVER_UPDATED,
                                                           np.random.default_rng(seed))
        assert result.misconception == "params-never-updated", result.message
    for part in ("losses", "params"):
        result = logreg.check_train_logreg(NEVER_UPDATED, np.random.default_rng(1), part=part)
        assert result.misconception == "params-never-updated", result.message


def test_the_loss_after_the_update_keeps_its_name():
    X, y, lr, steps = rising()
    w, b, losses = AFTER_UPDATE(X.clone(), y.clone(), lr, steps)
    verdict = logreg.judge_losses(losses, X, y, lr, steps, params=(w, b))
    assert verdict.misconception == "loss-after-update", verdict.message
    result = logreg.check_train_logreg(AFTER_UPDATE, np.random.default_rng(1), part="losses")
    assert result.misconception == "loss-after-update", result.message


#: What a record that holds the first loss is not: a run that never updated, a smoothing
NOT_A_HELD_FIRST_LOSS = ("losses-running-min", "params-never-updated", "losses-smoothed",
                         "losses-running-statistic")


@pytest.mark.parametrize("seed", [0, 5])
def test_a_running_maximum_is_not_a_running_minimum(seed):
    """Where the loss falls, the running maximum holds the first loss, w and b right: said as
    found, no name (not never updated, nor a moving average of factor 1 - 1e-10)."""
    result = logreg_regimes.check_train_logreg_regimes(RUNNING_MAX, np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception not in NOT_A_HELD_FIRST_LOSS, result.message
    assert "w and b are the grader's" in result.message, result.message
    result = logreg.check_train_logreg(RUNNING_MAX, np.random.default_rng(seed), part="losses")
    assert result.misconception not in NOT_A_HELD_FIRST_LOSS, result.message
    assert logreg.check_train_logreg(RUNNING_MAX, np.random.default_rng(seed), part="params").passed


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_a_record_beside_the_grader_s_w_and_b_is_told_no_training_mistake(seed):
    """Where the loss rises, the running maximum is the grader's losses up to the rise, then
    other: that matched a loop changed once the loss rose (or a fitted weight decay), though
    w and b are the grader's, which such a loop's are not."""
    X, y, lr, steps = draw_regime(np.random.default_rng(seed), "large-logits")
    w, b, losses = RUNNING_MAX(X.clone(), y.clone(), lr, steps)
    assert logreg.judge_params((w, b, losses), X, y, lr, steps).ok
    verdict = logreg.judge_losses(losses, X, y, lr, steps, params=(w, b))
    assert not verdict.ok
    assert verdict.misconception not in (*NOT_A_HELD_FIRST_LOSS, "changed-after-loss-rose",
                                         "penalty-added"), verdict.message
    assert "w and b are the grader's" in verdict.message, verdict.message


def _penalised(X, y, lr, steps, *, norm, lam):
    """A penalty in the loss (lam * ||w||² or lam * sum|w|), small enough that w and b pass."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss = loss + lam * (w.pow(2).sum() if norm == 2 else w.abs().sum())
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach(), b.detach(), losses


@pytest.mark.parametrize("seed, norm", [(5, 2), (1, 1)])
def test_a_small_penalty_whose_w_and_b_pass_keeps_its_name(seed, norm):
    """The grader's w and b rule out only a mistake whose own run ends elsewhere: a penalty
    small enough that its w and b are within the tolerance, shown in the recorded losses, is
    still penalty-added."""
    X, y, lr, steps = logreg.draw_problem(np.random.default_rng(seed))
    got = _penalised(X, y, lr, steps, norm=norm, lam=1e-5)
    assert logreg.judge_params(got, X, y, lr, steps).ok
    verdict = logreg.judge_losses(got[2], X, y, lr, steps, params=got[:2])
    assert verdict.misconception == "penalty-added", verdict.message
