"""Blind round zzi's q1 class: a loop that trains right but returns other ``w`` and ``b``
than its last ones (``params-not-final``).

The blind student kept the Polyak average of the iterates (``w_avg += (w - w_avg) / (k + 1)``
after each update) and returned it: the losses are the grader's, ``w`` and ``b`` are not, and
the feedback named nothing ("Checked without finding the cause: ... a constant factor"). The
class is named when a rule replayed on the grader's own iterates gives the returned ``w`` and
``b``: the uniform average (after each update, with the starting zeros, before each update),
tail averaging, an exponential moving average (from zeros, from the first iterate,
bias-corrected), the weights right after the lowest loss, an earlier iterate. One step, where
every rule is a multiple of the one update as a wrong lr is, is asked again with more steps.
The near-misses keep their verdicts: right answers, one update fewer (``updates-miscounted``),
the best weights before the update where the loss rose (``changed-after-loss-rose``), a wrong
lr, the loss recorded after the update. The answers are written the way students write them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import logreg_not_final, logreg_regimes
from autograder.checks.porting.logreg import check_train_logreg, draw_problem
from autograder.checks.porting.logreg_runs import reference_run, update_path
from test_checks_porting_regimes import train_on_rise

NAME = "params-not-final"


def blind_student(X, y, lr=0.5, steps=300):
    """Blind round zzi's answer, as written."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    w_avg, b_avg = torch.zeros(X.shape[1]), torch.zeros(1)
    losses = []
    for k in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = None
        b.grad = None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            w_avg += (w - w_avg) / (k + 1)  # Polyak averaging: a smoother estimate
            b_avg += (b - b_avg) / (k + 1)
    return w_avg, b_avg, losses


def loop(after=None, before=None, out=None, step_of=None, late_loss=False, last_skipped=False):
    """A contract loop: ``before(state, k, w, b, loss)`` runs before the update, ``after``
    after it; ``out(state, w, b)``: the w and b returned; ``step_of(lr)``: the rate used."""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        state, losses = {"steps": steps}, []
        rate = step_of(lr) if step_of else lr
        for k in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            w.grad, b.grad = None, None
            loss.backward()
            if not late_loss:
                losses.append(loss.item())
            if before:
                before(state, k, w, b, loss.item())
            if last_skipped and k == steps - 1:
                break
            with torch.no_grad():
                w -= rate * w.grad
                b -= rate * b.grad
                if late_loss:
                    losses.append(F.binary_cross_entropy_with_logits(X @ w + b, y).item())
            if after:
                after(state, k, w, b, loss.item())
        return (*(out(state, w, b) if out else (w, b)), losses)
    return train_logreg


def summed(state, k, w, b, loss):
    state["sw"] = state.get("sw", 0) + w.detach().clone()
    state["sb"] = state.get("sb", 0) + b.detach().clone()
    state["n"] = state.get("n", 0) + 1


def listed(state, k, w, b, loss):
    if k == 0 and state.get("zeros"):
        state["ws"], state["bs"] = [torch.zeros_like(w)], [torch.zeros_like(b)]
    state.setdefault("ws", []).append(w.detach().clone())
    state.setdefault("bs", []).append(b.detach().clone())


def second_half(state, k, w, b, loss):
    if k >= state["steps"] // 2:
        summed(state, k, w, b, loss)


def ema(decay, start="zeros"):
    def after(state, k, w, b, loss):
        if k == 0 and start == "first":
            state["w"], state["b"] = w.detach().clone(), b.detach().clone()
            return
        if k == 0:
            state["w"], state["b"] = torch.zeros_like(w), torch.zeros_like(b)
        with torch.no_grad():
            state["w"].mul_(decay).add_((1 - decay) * w)
            state["b"] = torch.lerp(b.detach(), state["b"], decay)
        state["t"] = k + 1
    return after


def best_after_update(state, k, w, b, loss):
    if loss < state.get("best", float("inf")):  # this step's loss, the weights after its update
        state["best"], state["w"], state["b"] = loss, w.detach().clone(), b.detach().clone()


def midway(state, k, w, b, loss):
    if k == state["steps"] // 2:
        state["w"], state["b"] = w.detach().clone(), b.detach().clone()


def two_back(state, k, w, b, loss):
    if k == state["steps"] - 3:  # a copy "before the end", two updates short of the last
        state["w"], state["b"] = w.detach().clone(), b.detach().clone()


def with_zeros(state, k, w, b, loss):
    state["zeros"] = True
    listed(state, k, w, b, loss)


def kept(state, w, b):
    return state["w"], state["b"]


def mean_of(state, w, b):
    return state["sw"] / state["n"], state["sb"] / state["n"]


def stacked(state, w, b):
    return torch.stack(state["ws"]).mean(0), torch.stack(state["bs"]).mean(0)


def corrected(decay):
    return lambda s, w, b: (s["w"] / (1 - decay ** s["t"]), s["b"] / (1 - decay ** s["t"]))


#: variant -> (the answer, what its message must say of the rule that matched)
NOT_FINAL = {
    "blind-polyak": (blind_student, "uniform (Polyak) average"),
    "polyak-summed": (loop(after=summed, out=mean_of), "uniform (Polyak) average"),
    "polyak-stacked": (loop(after=listed, out=stacked), "uniform (Polyak) average"),
    "mean-with-zeros": (loop(after=with_zeros, out=stacked), "starting zeros included"),
    "mean-before-update": (loop(before=summed, out=mean_of), "taken before each update"),
    "tail-half": (loop(after=second_half, out=mean_of), "second half of the run"),
    "ema-0.9": (loop(after=ema(0.9), out=kept), "decay 0.9, taken after each update, "
                                                 "started at zeros"),
    "ema-0.99": (loop(after=ema(0.99), out=kept), "decay 0.99,"),
    "ema-0.999": (loop(after=ema(0.999), out=kept), "decay 0.999,"),
    "ema-from-first": (loop(after=ema(0.9, "first"), out=kept), "started at the first iterate"),
    "ema-bias-corrected": (loop(after=ema(0.99), out=corrected(0.99)), "bias-corrected"),
    "snapshot-midway": (loop(after=midway, out=kept), "an earlier iterate"),
    # every loss is the grader's, the last taken after all but one update: no skipped updates
    "snapshot-two-back": (loop(after=two_back, out=kept), "an earlier iterate"),
}


@pytest.mark.parametrize("how", sorted(NOT_FINAL))
def test_returned_w_and_b_not_the_final_ones_are_named_with_their_rule(how):
    fn, rule = NOT_FINAL[how]
    result = check_train_logreg(fn, np.random.default_rng(3), part="params")
    assert not result.passed
    assert result.misconception == NAME, result.message
    assert rule in result.message, result.message
    assert "as they are after the last update" in result.message, result.message
    assert "Checked without finding the cause" not in result.message, result.message
    # the losses are the grader's: that check keeps its points
    assert check_train_logreg(fn, np.random.default_rng(3), part="losses").passed


@pytest.mark.parametrize("how", ["blind-polyak", "tail-half", "ema-bias-corrected"])
def test_the_regimes_name_them_on_the_long_separable_run(how):
    fn, rule = NOT_FINAL[how]
    result = logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(3))
    assert result.misconception == NAME and rule in result.message, result.message
    assert "steps=1)" not in result.message, result.message  # one step is right for these


@pytest.mark.parametrize("how", ["mean-with-zeros", "mean-before-update", "ema-0.9"])
def test_a_single_step_is_asked_again_with_more_steps(how):
    """One step: every rule is a multiple of the one update, as a wrong lr is; the answer at
    PROBE_STEPS steps on the same data names it (an average before the update, at the zeros,
    is no longer told that no update reached them)."""
    fn, rule = NOT_FINAL[how]
    result = logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(3))
    assert result.misconception == NAME, result.message
    assert "steps=1)" in result.message and rule in result.message, result.message
    assert f"steps={logreg_not_final.PROBE_STEPS}, the losses were the grader's" \
        in result.message, result.message
    assert "no update reached" not in result.message, result.message


def test_the_best_weights_after_the_update_are_named_where_the_loss_rose():
    """Kept after the update of the step with the lowest loss: right where the last loss is
    the lowest (a loss that only falls), named where it rose (a large lr)."""
    fn = loop(after=best_after_update, out=kept)
    results = [logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(seed))
               for seed in range(4)]
    failed = [r for r in results if not r.passed]
    assert failed
    for result in failed:
        assert result.misconception == NAME, result.message
        assert "is the lowest recorded" in result.message, result.message
    assert check_train_logreg(fn, np.random.default_rng(3), part="params").passed


# --- near-misses ---------------------------------------------------------------------------

RIGHT = {
    "plain": loop(),
    "sgd": None,  # below
    "kept-but-final-returned": loop(after=summed),  # an average computed, the last returned
}


def sgd(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return w.detach(), b.detach(), losses


RIGHT["sgd"] = sgd


@pytest.mark.parametrize("how", sorted(RIGHT))
def test_right_answers_pass(how):
    for part in ("losses", "params"):
        assert check_train_logreg(RIGHT[how], np.random.default_rng(3), part=part).passed
    assert logreg_regimes.check_train_logreg_regimes(RIGHT[how], np.random.default_rng(3)).passed


def test_one_update_fewer_keeps_its_name():
    fn = loop(last_skipped=True)
    for result in (check_train_logreg(fn, np.random.default_rng(3), part="params"),
                   logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(3))):
        assert result.misconception == "updates-miscounted", result.message


def test_the_best_weights_before_the_update_keep_their_name():
    """The weights that gave the lowest loss, where the loss rose (test_checks_porting_regimes'
    keep-best): changed-after-loss-rose."""
    def fn(X, y, lr=0.5, steps=300):
        return train_on_rise(X, y, lr, steps, on_rise="keep-best")
    failed = [r for seed in range(6) if not (r := logreg_regimes.check_train_logreg_regimes(
        fn, np.random.default_rng(seed))).passed]
    assert failed
    assert all(r.misconception == "changed-after-loss-rose" for r in failed), \
        [r.message for r in failed]


@pytest.mark.parametrize("step_of, name", [(lambda lr: 0.5, "lr-ignored"),
                                           (lambda lr: lr / 2, None)])
def test_a_wrong_lr_is_not_taken_for_an_average(step_of, name):
    """Half the lr at one step is the average with the zeros there: asked again with more
    steps, its losses are not the grader's, and nothing more is said than before."""
    fn = loop(step_of=step_of)
    for result in (check_train_logreg(fn, np.random.default_rng(3), part="params"),
                   logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(3))):
        assert not result.passed and result.misconception == name, result.message


def test_the_loss_after_the_update_keeps_its_name():
    fn = loop(late_loss=True)
    result = logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(3))
    assert result.misconception == "loss-after-update", result.message


def test_the_rules_never_name_the_final_w_and_b_or_a_single_step():
    X, y, lr, steps = draw_problem(np.random.default_rng(5))
    path, correct = update_path(X, y, lr, steps), torch.tensor(reference_run(X, y, lr, steps)[2])
    tight, judged = 3e-5, (1e-4, 1e-5)
    assert logreg_not_final.not_final(path[steps], correct, path, steps, tight, judged) is None
    one = update_path(X, y, lr, 1)
    assert logreg_not_final.not_final(one[1] / 2, correct[:1], one, 1, tight, judged) is None
    found = logreg_not_final.not_final(torch.stack(path[1:steps + 1]).mean(0).float().double(),
                                       correct, path, steps, tight, judged)
    assert found is not None and found[0] == NAME
