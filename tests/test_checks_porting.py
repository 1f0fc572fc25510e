"""Do the ``autograd-porting`` checks accept every correct answer and name every known mistake?

The implementations below are written the way students write them (optimizers, in-place
updates, loops), independently of the grader's own replays, so a test never passes merely
because the grader agrees with itself.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autograder.checks.porting import (
    device,
    device_predict,
    gradcheck,
    gradcheck_kink,
    gradcheck_mistakes,
    logreg,
    logreg_grads,
    microbatch,
    selfcheck,
    selfcheck_at_x,
)

FAST = settings(deadline=None, max_examples=20)
seeds = st.integers(0, 2**32 - 1)
learning_rates = st.floats(0.05, 1.5)
step_counts = st.integers(3, 30)


def student_train(X, y, lr, steps, *, clear=True, after=False, reduction="mean"):
    """A student's train_logreg, optionally with one mistake, using torch.optim.SGD (``clear``:
    both gradients cleared, neither, or only the one named, "w" or "b")."""
    w = nn.Parameter(torch.zeros(X.shape[1]))
    b = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        if clear is True:
            opt.zero_grad()
        elif clear:  # only the one parameter named (b.grad = None, say, and w.grad kept)
            setattr(dict(w=w, b=b)[clear], "grad", None)
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y, reduction=reduction)
        loss.backward()
        opt.step()
        if after:
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y, reduction=reduction)
        losses.append(loss.item())
    return w.detach(), b.detach(), losses


def problem(seed):
    return logreg.draw_problem(np.random.default_rng(seed))[:2]


@FAST
@given(seeds, learning_rates, step_counts)
def test_losses_and_params_of_a_correct_run_pass(seed, lr, steps):
    """Does a correct float32 run pass against the float64 oracle for any data, lr, steps?"""
    X, y = problem(seed)
    got = student_train(X, y, lr, steps)
    assert logreg.judge_losses(got[2], X, y, lr, steps).ok
    assert logreg.judge_params(got, X, y, lr, steps).ok


@pytest.mark.parametrize("steps", [1, 30])
@pytest.mark.parametrize("frozen", [("w",), ("b",), ("w", "b")])
def test_a_parameter_left_at_zero_is_named_and_no_replay_is_guessed(frozen, steps):
    """Is a run that never moved ``frozen`` from the starting zeros told exactly that, with one
    step as with many (where every replayed mistake's losses are the right run's)?"""
    X, y = problem(3)
    w, b, losses = student_train(X, y, 0.4, steps)
    got = tuple(torch.zeros_like(t) if name in frozen else t
                for name, t in (("w", w), ("b", b))) + (losses,)
    verdict = logreg.judge_params(got, X, y, 0.4, steps)
    assert verdict.misconception == "params-never-updated", verdict.message
    assert f"{' and '.join(frozen)} never changed from the starting zeros" in verdict.message


@FAST
@given(seeds, learning_rates, step_counts,
       st.sampled_from([("not-cleared", {"clear": False}), ("loss-after-update", {"after": True}),
                        ("sum-not-mean", {"reduction": "sum"}),
                        ("w-not-cleared", {"clear": "b"}), ("b-not-cleared", {"clear": "w"})]))
def test_each_training_mistake_is_named(seed, lr, steps, mutation):
    """Is each known mistake in the loop recognised by its own id?"""
    name, kwargs = mutation
    X, y = problem(seed)
    losses = student_train(X, y, lr, steps, **kwargs)[2]
    verdict = logreg.judge_losses(losses, X, y, lr, steps)
    assert not verdict.ok and verdict.misconception == name, verdict.message


def student_train_without_bias(X, y, lr, steps, *, update_b=True):
    """A student's train_logreg whose logits are the NumPy series' X @ w: updating b with its
    gradient raises (b.grad is None); skipping it leaves b at 0."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w, y)
        w.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            if update_b:
                b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


@FAST
@given(seeds, learning_rates, st.integers(3, 30))
def test_training_without_the_bias_is_named(seed, lr, steps):
    """Are losses, and w and b, of a run whose b stayed at 0 (logits X @ w) named, and a
    correct run's never?"""
    X, y = problem(seed)
    got = student_train_without_bias(X, y, lr, steps, update_b=False)
    right = logreg.reference_run(X, y, lr, steps)
    assume(not torch.allclose(right[0], logreg.reference_run(X, y, lr, steps, "bias-left-out")[0],
                              rtol=1e-4, atol=1e-5))  # b's part visible in w
    losses = logreg.judge_losses(got[2], X, y, lr, steps)
    params = logreg.judge_params(got, X, y, lr, steps)
    # over a few steps the losses may still agree within the tolerance (no point lost there,
    # nothing to name); w, which b's absence moved (the assumption), must be named
    assert losses.ok or losses.misconception == "bias-left-out", losses.message
    assert params.misconception == "bias-left-out", params.message
    assert "b was left out of the logits or never updated" in params.message


def student_train_penalised(X, y, lr, steps, *, penalty, lam):
    """A student's train_logreg with a penalty habit at strength ``lam``: in the loss
    (``l2-w``: lam * ||w||², ``l2-w-half``: lam / 2 * ||w||², ``l2-wb``, ``l1-w``, ``l1-wb``),
    or as the optimizer's weight decay, which the recorded losses do not show (``decay-wb``,
    ``decay-w``: a parameter group for w alone)."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    if penalty == "decay-wb":
        opt = torch.optim.SGD([w, b], lr=lr, weight_decay=lam)
    elif penalty == "decay-w":
        opt = torch.optim.SGD([{"params": [w], "weight_decay": lam}, {"params": [b]}], lr=lr)
    else:
        opt = torch.optim.SGD([w, b], lr=lr)
    extra = {"l2-w": lambda: lam * (w * w).sum(), "l2-w-half": lambda: lam / 2 * (w ** 2).sum(),
             "l2-wb": lambda: lam * (w.pow(2).sum() + b.pow(2).sum()),
             "l1-w": lambda: lam * w.abs().sum(),
             "l1-wb": lambda: lam * (w.abs().sum() + b.abs().sum())}.get(penalty)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        if extra is not None:
            loss = loss + extra()
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach(), b.detach(), losses


#: penalty -> (what the message says it was, the strength it reports for a student's lam)
PENALTIES = {"l2-w": ("L2 penalty", 1.0), "l2-w-half": ("L2 penalty", 0.5),
             "l2-wb": ("L2 penalty", 1.0), "l1-w": ("L1 penalty", 1.0),
             "l1-wb": ("L1 penalty", 1.0), "decay-wb": ("weight decay", 1.0),
             "decay-w": ("weight decay", 1.0)}


@FAST
@given(seeds, st.sampled_from(sorted(PENALTIES)), st.sampled_from([5e-3, 2e-2, 0.1]))
def test_a_penalty_added_to_the_loss_is_named_with_its_strength(seed, penalty, lam):
    """Is a run with a penalty on w (or w and b), L2 or L1, in the loss or as weight decay,
    named ``penalty-added`` with its kind and a fitted strength, by its losses and by its
    final w and b (where either is outside the tolerance)?"""
    rng = np.random.default_rng(seed)
    X, y, lr, steps = logreg.draw_problem(rng)
    got = student_train_penalised(X, y, lr, steps, penalty=penalty, lam=lam)
    kind, scale = PENALTIES[penalty]
    verdicts = [logreg.judge_losses(got[2], X, y, lr, steps),
                logreg.judge_params(got, X, y, lr, steps)]
    assert not all(v.ok for v in verdicts)
    for verdict in verdicts:
        if not verdict.ok:
            assert verdict.misconception == "penalty-added", verdict.message
            assert kind in verdict.message and f"{scale * lam:.2g}" in verdict.message, \
                verdict.message


@FAST
@given(seeds, st.sampled_from([{"lr_scale": 1.03}, {"momentum": 0.5}, {"lr_scale": 0.9}]))
def test_other_wrong_runs_are_not_taken_for_a_penalty(seed, how):
    """Is a run that is wrong in another way than a penalty (another lr, momentum) never
    named ``penalty-added``?"""
    X, y, lr, steps = logreg.draw_problem(np.random.default_rng(seed))
    w = nn.Parameter(torch.zeros(X.shape[1]))
    b = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w, b], lr=lr * how.get("lr_scale", 1.0),
                          momentum=how.get("momentum", 0.0))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    got = (w.detach(), b.detach(), losses)
    for verdict in (logreg.judge_losses(losses, X, y, lr, steps),
                    logreg.judge_params(got, X, y, lr, steps)):
        assert verdict.misconception != "penalty-added", verdict.message


@pytest.mark.parametrize("mistake, steps, name", [
    ("bias-left-out", 20, "param-not-in-loss"), ("bias-left-out", 1, "param-not-in-loss"),
    ("rebound", 20, "update-outside-no-grad")])
def test_a_none_gradient_at_the_first_update_is_told_apart(mistake, steps, name):
    """Is a None gradient at the first update (b left out of the logits) told apart from one
    that appears only from the second step (w rebound outside no_grad)?"""
    def rebound(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            loss.backward()
            w, b = w - lr * w.grad, b - lr * b.grad
            losses.append(loss.item())
        return w, b, losses

    fn = rebound if mistake == "rebound" else student_train_without_bias
    X, y = problem(4)
    got, failure = logreg.call_train_logreg(fn, X, y, 0.3, steps)
    from autograder.checks.porting.logreg_regimes import explain_training
    verdict = explain_training(failure, fn, X, y, 0.3, steps, got)
    assert verdict.misconception == name, verdict.message
    assert "NoneType" in verdict.message


def step_scaled(X, y, lr, steps, *, how):
    """A train_logreg whose step is scaled by the batch size m, as a port of the NumPy series'
    ``w -= lr * dw / m`` onto autograd's gradient of the mean loss writes it, in several
    spellings; or, for ``lr-halved``, by a constant unrelated to m."""
    m = X.shape[0]
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad, b.grad = None, None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            if how == "grad-over-m":  # the round-v notebook's own
                w -= lr * w.grad / m
                b -= lr * b.grad / m
            elif how == "lr-over-m":
                step = lr / len(X)
                w.sub_(step * w.grad)
                b.sub_(step * b.grad)
            elif how == "grad-divided-in-place":
                w.grad /= m
                b.grad.div_(m)
                w -= lr * w.grad
                b -= lr * b.grad
            elif how == "w-only-over-m":
                w -= lr * w.grad / X.shape[0]
                b -= lr * b.grad
            elif how == "b-only-over-m":
                w -= lr * w.grad
                b -= lr * b.grad / m
            elif how == "w-times-m":
                w -= lr * m * w.grad
                b -= lr * b.grad
            elif how == "lr-halved":
                w -= 0.5 * lr * w.grad
                b -= 0.5 * lr * b.grad
            else:  # "lr-over-constant": lr / how's number, whatever m is
                w -= lr * w.grad / int(how)
                b -= lr * b.grad / int(how)
    return w.detach(), b.detach(), losses


STEP_SCALINGS = ["grad-over-m", "lr-over-m", "grad-divided-in-place", "w-only-over-m",
                 "b-only-over-m", "w-times-m"]


@FAST
@given(seeds, learning_rates, step_counts, st.sampled_from(STEP_SCALINGS))
def test_a_step_scaled_by_the_batch_size_is_named(seed, lr, steps, how):
    """Are losses, and w and b, of a run whose step was divided (or multiplied) by m named
    for it, with the 1/m the mean loss's gradient already has?"""
    X, y = problem(seed)
    got = step_scaled(X, y, lr, steps, how=how)
    losses = logreg.judge_losses(got[2], X, y, lr, steps)
    params = logreg.judge_params(got, X, y, lr, steps)
    assume(not (losses.ok and params.ok))  # a step of b alone can stay within the tolerance
    # b's step over m for a few steps is b left at 0 within the matching tolerance
    names = {"update-scaled-by-m"} | ({"bias-left-out"} if how == "b-only-over-m" else set())
    for verdict in (losses, params):
        assert verdict.ok or verdict.misconception in names, verdict.message
        assert verdict.ok or verdict.misconception == "bias-left-out" \
            or f"m = {X.shape[0]}" in verdict.message, verdict.message
    if losses.misconception == "update-scaled-by-m" and how != "w-times-m":
        assert "already has the 1/m" in losses.message, losses.message


@pytest.mark.parametrize("how", ["grad-over-m", "b-only-over-m"])
def test_a_step_scaled_by_the_batch_size_is_named_by_the_checks(how):
    """The whole checks, as the round-v notebook meets them (the one-step regime included,
    where only w and b tell it)."""
    from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes

    def fn(X, y, lr=0.5, steps=300):
        return step_scaled(X, y, lr, steps, how=how)

    for seed in range(2):
        for part in ("losses", "params"):
            result = logreg.check_train_logreg(fn, np.random.default_rng(seed), part=part)
            assert result.misconception == "update-scaled-by-m", result.message
        result = check_train_logreg_regimes(fn, np.random.default_rng(seed))
        assert result.misconception == "update-scaled-by-m", result.message


def test_a_step_scaled_by_a_constant_is_not_named_for_m():
    """A step divided by a constant is not named for m, even a constant equal to the first
    drawn m (asked again on a data set of another m); lr halved neither; a summed loss keeps
    its own name; a correct run passes."""
    m = logreg.draw_problem(np.random.default_rng(0))[0].shape[0]
    for how in ("lr-halved", str(m)):
        def fn(X, y, lr=0.5, steps=300, how=how):
            return step_scaled(X, y, lr, steps, how=how)
        for part in ("losses", "params"):
            result = logreg.check_train_logreg(fn, np.random.default_rng(0), part=part)
            assert not result.passed and result.misconception != "update-scaled-by-m", \
                (how, result.message)
    X, y = problem(0)
    summed = student_train(X, y, 0.3, 10, reduction="sum")
    assert logreg.judge_losses(summed[2], X, y, 0.3, 10).misconception == "sum-not-mean"
    assert logreg.judge_params(summed, X, y, 0.3, 10).misconception == "sum-not-mean"


@FAST
@given(seeds, learning_rates.filter(lambda lr: abs(lr - 0.5) > 0.05), step_counts)
def test_hard_coded_lr_and_steps_are_named(seed, lr, steps):
    """Are the lesson's lr=0.5 and steps=300, copied in place of the arguments, named?"""
    X, y = problem(seed)
    lesson_lr = student_train(X, y, 0.5, steps)[2]
    assert logreg.judge_losses(lesson_lr, X, y, lr, steps).misconception == "lr-ignored"
    lesson_steps = student_train(X, y, lr, 300)[2]
    assert logreg.judge_losses(lesson_steps, X, y, lr, steps).misconception == "steps-ignored"


def test_tensor_losses_are_named():
    """Are tensors appended instead of loss.item() reported as such?"""
    X, y = problem(0)
    losses = [torch.tensor(v) for v in student_train(X, y, 0.3, 5)[2]]
    assert logreg.judge_losses(losses, X, y, 0.3, 5).misconception == "losses-not-floats"


def test_update_outside_no_grad_is_named():
    """Does an in-place update while recording become a named result, not an exception?"""
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        loss = F.binary_cross_entropy_with_logits(X @ w, y)
        loss.backward()
        w -= lr * w.grad
        return w, torch.zeros(1), [loss.item()]

    result = logreg.check_train_logreg(train_logreg, np.random.default_rng(0), part="losses")
    assert result.misconception == "update-outside-no-grad"
    assert "torch.no_grad()" in result.message and result.traceback


@FAST
@given(seeds, st.sampled_from(["right", "m-times", "flipped", "bias-0d", "column", "no-bias",
                                "no-bias-0d", "no-bias-in-b-only", "b-summed", "b-summed-0d",
                                "b-flipped", "global-m", "by-features"]))
def test_closed_form_gradients(seed, kind):
    """Is a right closed form accepted (b's gradient (1,) or 0-d, b folded into X as a column)
    and each slip named (b left out of the logits, in both gradients or in b's alone; b's
    residuals summed instead of averaged; b's sign flipped)?"""
    rng = np.random.default_rng(seed)
    X, y, _, _ = logreg.draw_problem(rng)
    w = torch.tensor(rng.normal(size=X.shape[1]), dtype=torch.float32)
    b = torch.tensor([rng.normal()], dtype=torch.float32)
    assume(abs(float(b)) > 0.05)  # where b = 0, leaving it out is right
    assume(len(y) not in (200, X.shape[1]))  # where m is 200 or n, dividing by it is right
    r = torch.sigmoid(X @ w + b) - y
    grad_w, grad_b = X.T @ r / len(y), r.mean().reshape(1)
    X1 = torch.cat([X, torch.ones(len(y), 1)], 1)
    column = X1.T @ (torch.sigmoid(X1 @ torch.cat([w, b])) - y) / len(y)
    r0 = torch.sigmoid(X @ w) - y
    got = {"right": (grad_w, grad_b), "m-times": (grad_w * len(y), grad_b),
           "flipped": (-grad_w, grad_b), "bias-0d": (grad_w, grad_b[0]),
           "column": (column[:-1], column[-1:]),
           "no-bias": (X.T @ r0 / len(y), r0.mean().reshape(1)),
           "no-bias-0d": (X.T @ r0 / len(y), r0.mean()),
           "no-bias-in-b-only": (grad_w, r0.mean().reshape(1)),
           "b-summed": (grad_w, r.sum().reshape(1)), "b-summed-0d": (grad_w, r.sum()),
           "b-flipped": (grad_w, -grad_b),
           # divided by a global m = 200 from another cell, or by n (X.shape[1])
           "global-m": (X.T @ r / 200, grad_b), "by-features": (X.T @ r / X.shape[1], grad_b)}[kind]
    verdict = logreg_grads.judge_grads(got, *logreg_grads.reference_grads(X, y, w, b), len(y),
                                       (X, y, w, b))
    expected = {"right": None, "m-times": "grad-not-divided-by-m",
                "flipped": "grad-sign-flipped", "bias-0d": None, "column": None,
                "no-bias": "bias-left-out", "no-bias-0d": "bias-left-out",
                "no-bias-in-b-only": "bias-left-out", "b-summed": "grad-not-divided-by-m",
                "b-summed-0d": "grad-not-divided-by-m", "b-flipped": "grad-sign-flipped",
                "global-m": "grad-divided-by-wrong-count",
                "by-features": "grad-divided-by-wrong-count"}[kind]
    assert verdict.ok == (expected is None) and verdict.misconception == expected, verdict.message


@FAST
@given(seeds, st.sampled_from(["after-sigmoid", "after-sigmoid-0d", "after-sigmoid-in-b-only",
                                "subtracted", "subtracted-autograd", "subtracted-in-w-only",
                                "right", "column"]))
def test_a_misplaced_bias_is_named_for_where_it_went(seed, kind):
    """Is a bias put in the wrong place named by the replay it matches: added after the
    sigmoid (sigmoid(X @ w) + b - y), or subtracted from the logits (X @ w - b, b's gradient
    by the closed form or by the chain rule)? A right answer names nothing."""
    rng = np.random.default_rng(seed)
    X, y, _, _ = logreg.draw_problem(rng)
    w = torch.tensor(rng.normal(size=X.shape[1]), dtype=torch.float32)
    b = torch.tensor([rng.normal()], dtype=torch.float32)
    assume(abs(float(b)) > 0.05)  # where b = 0, every place of it is right
    m = len(y)
    r = torch.sigmoid(X @ w + b) - y
    after = torch.sigmoid(X @ w) + b - y
    minus = torch.sigmoid(X @ w - b) - y
    X1 = torch.cat([X, torch.ones(m, 1)], 1)
    column = X1.T @ (torch.sigmoid(X1 @ torch.cat([w, b])) - y) / m
    got = {"after-sigmoid": (X.T @ after / m, after.mean().reshape(1)),
           "after-sigmoid-0d": (X.T @ after / m, after.mean()),
           "after-sigmoid-in-b-only": (X.T @ r / m, after.mean().reshape(1)),
           "subtracted": (X.T @ minus / m, minus.mean().reshape(1)),
           "subtracted-autograd": (X.T @ minus / m, -minus.mean().reshape(1)),
           "subtracted-in-w-only": (X.T @ minus / m, r.mean().reshape(1)),
           "right": (X.T @ r / m, r.mean().reshape(1)),
           "column": (column[:-1], column[-1:])}[kind]
    verdict = logreg_grads.judge_grads(got, *logreg_grads.reference_grads(X, y, w, b), m,
                                       (X, y, w, b))
    expected = (None if kind in ("right", "column") else
                "bias-after-sigmoid" if kind.startswith("after") else "bias-subtracted")
    assert verdict.ok == (expected is None) and verdict.misconception == expected, verdict.message
    if expected:
        assert "X @ w + b" in verdict.message and "all of it" in verdict.message, verdict.message


def test_a_bias_after_the_sigmoid_is_named_by_the_check():
    """The whole check, as a notebook meets it: the residual sigmoid(X @ w) + b - y."""
    def logreg_grads_after(X, y, w, b):
        r = torch.sigmoid(X @ w) + b - y
        return X.T @ r / X.shape[0], r.mean().reshape(1)

    for seed in range(3):
        result = logreg_grads.check_logreg_grads(logreg_grads_after, np.random.default_rng(seed))
        assert not result.passed and result.misconception == "bias-after-sigmoid", result.message


def student_accumulate(w, X, y, sizes, *, weighting="b_j/B", clear=True):
    """A student's accumulated_grad with a choice of weighting and of clearing."""
    if clear:
        w.grad = None
    for Xj, yj in zip(X.split(sizes), y.split(sizes)):
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        scale = {"b_j/B": len(yj) / sum(sizes), "1/J": 1 / len(sizes), "none": 1.0,
                 "b_j/B then /J": len(yj) / sum(sizes) / len(sizes),
                 "b_j/B then *J": len(yj) * len(sizes) / sum(sizes),
                 "b_j/B then /B": len(yj) / sum(sizes) ** 2, "sum": len(yj)}[weighting]
        (loss * scale).backward()
    return w.grad.clone()


@FAST
@given(seeds, st.booleans(),
       st.sampled_from([(None, {}), ("unweighted-mean", {"weighting": "1/J"}),
                        ("unscaled-sum", {"weighting": "none"}),
                        ("stale-grad-kept", {"clear": False})]))
def test_micro_batches(seed, stale, mutation):
    """Does the right weighting pass, and is each mistake named, with or without a stale grad?"""
    name, kwargs = mutation
    assume(stale or name != "stale-grad-kept")
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = student_accumulate(w, X, y, sizes, **kwargs)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    assert verdict.ok == (name is None) and verdict.misconception == name, verdict.message


@FAST
@given(seeds, st.booleans(), st.booleans(),
       st.sampled_from([("divided-by-J", "b_j/B then /J"), ("times-J", "b_j/B then *J"),
                        ("divided-by-B", "b_j/B then /B"), ("sum-not-mean", "sum")]))
def test_a_gradient_off_by_a_known_factor_is_named(seed, stale, clear, mutation):
    """Is the full-batch mean gradient times 1/J, J, 1/B or B named by its factor (the stale
    grad kept or not), and not as a weighting mistake the student did not make?"""
    name, weighting = mutation
    assume(stale or clear)
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = student_accumulate(w, X, y, sizes, weighting=weighting, clear=clear)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    assert verdict.misconception == name, verdict.message
    assert clear or "It also keeps the .grad that w arrived with" in verdict.message


def rescaling_accumulated(w, X, y, sizes, *, how, clear=True):
    """accumulated_grad that scales w.grad, what has been accumulated, instead of each
    micro-batch's loss: after each backward, or once after the loop."""
    if clear:
        w.grad = None
    B = sum(sizes)
    for Xj, yj in zip(X.split(sizes), y.split(sizes)):
        b_j = len(yj)
        F.binary_cross_entropy_with_logits(Xj @ w, yj).backward()
        if how == "after-each":
            w.grad.mul_(b_j / B)
    if how == "once-by-last":  # the loop's last b_j, left over
        w.grad.mul_(b_j / B)
    elif how == "once-by-B":
        w.grad.div_(B)
    return w.grad.clone()


@FAST
@given(seeds, st.booleans(), st.booleans(),
       st.sampled_from(["after-each", "once-by-last", "once-by-B"]))
def test_the_accumulated_gradient_rescaled_is_named(seed, stale, clear, how):
    """Is scaling w.grad, the sum so far, instead of each micro-batch's loss named by its
    replay (earlier micro-batches scaled again by each later factor, or the sum scaled once
    by a wrong factor), with or without the stale grad kept?"""
    assume(stale or clear)
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = rescaling_accumulated(w, X, y, sizes, how=how, clear=clear)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    assert verdict.misconception == "accumulated-grad-rescaled", verdict.message
    assert "loss_j * b_j / B" in verdict.message and "adds into w.grad" in verdict.message
    assert clear or "It also keeps the .grad that w arrived with" in verdict.message


def test_the_accumulated_gradient_rescaled_is_named_by_the_check():
    """The whole check, as a notebook meets it: w.grad.mul_(b_j / B) after each backward."""
    for stale in (False, True):
        for seed in range(3):
            result = microbatch.check_accumulated_grad(
                lambda w, X, y, sizes: rescaling_accumulated(w, X, y, sizes, how="after-each"),
                np.random.default_rng(seed), stale=stale)
            assert not result.passed, result.message
            assert result.misconception == "accumulated-grad-rescaled", result.message


def weighted_inside_the_loss(w, X, y, sizes, *, where, clear=True):
    """accumulated_grad that puts the b_j / B weight inside the loss call, on the logits or
    on the inputs (the same logits), instead of on the micro-batch's mean loss."""
    if clear:
        w.grad = None
    B, start = sum(sizes), 0
    for bj in sizes:
        Xj, yj = X[start:start + bj], y[start:start + bj]
        logits = {"logits": lambda: Xj @ w * bj / B, "inputs": lambda: (Xj * bj / B) @ w,
                  "weights": lambda: Xj @ (w * (bj / B)),
                  "loss": lambda: Xj @ w}[where]()
        loss = F.binary_cross_entropy_with_logits(logits, yj)
        (loss * bj / B if where == "loss" else loss).backward()
        start += bj
    return w.grad.clone()


@FAST
@given(seeds, st.booleans(), st.booleans(), st.sampled_from(["logits", "inputs", "weights"]))
def test_the_weight_on_the_logits_is_named(seed, stale, clear, where):
    """Is b_j / B applied to the logits (or to X, or to w, inside the loss) instead of to
    the micro-batch's mean loss named by its replay, with or without the stale grad kept?"""
    assume(stale or clear)
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = weighted_inside_the_loss(w, X, y, sizes, where=where, clear=clear)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    assert verdict.misconception == "weight-on-logits", verdict.message
    assert "(bce(Xj @ w, yj) * bj / B).backward()" in verdict.message
    assert clear or "It also keeps the .grad that w arrived with" in verdict.message


def test_the_weight_on_the_logits_is_right_at_zero_and_named_by_the_check():
    """At w = 0 every logit is 0 whatever scales it: the answer is right there; the check's
    drawn w is not 0, and the check names it; the weight on the loss passes."""
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(4), False)
    zero = torch.zeros_like(w, requires_grad=True)
    got = weighted_inside_the_loss(zero, X, y, sizes, where="logits")
    assert microbatch.judge(got, zero, X, y, sizes, None, zero.detach().clone()).ok
    for stale in (False, True):
        for seed in range(3):
            result = microbatch.check_accumulated_grad(
                lambda w, X, y, sizes: weighted_inside_the_loss(w, X, y, sizes, where="logits"),
                np.random.default_rng(seed), stale=stale)
            assert result.misconception == "weight-on-logits", result.message
            right = microbatch.check_accumulated_grad(
                lambda w, X, y, sizes: weighted_inside_the_loss(w, X, y, sizes, where="loss"),
                np.random.default_rng(seed), stale=stale)
            assert right.passed, right.message


def broadcast_logits(w, X, y, sizes, *, how, clear=True):
    """accumulated_grad whose logits and labels have different shapes, so the loss broadcasts
    them to a (b_j, b_j) matrix (column logits against (b_j,) labels, as the NumPy series'
    column vectors), or, for ``squeezed``, the right loss on column logits."""
    if clear:
        w.grad = None
    B, start = sum(sizes), 0
    for bj in sizes:
        Xj, yj = X[start:start + bj], y[start:start + bj]
        if how == "column-logsigmoid":  # the round-v notebook's own
            z = Xj @ w.unsqueeze(1)
            loss = -(yj * F.logsigmoid(z) + (1 - yj) * F.logsigmoid(-z)).mean()
        elif how == "column-log-sigmoid":
            p = torch.sigmoid((Xj @ w).reshape(-1, 1))
            loss = -(yj * torch.log(p) + (1 - yj) * torch.log(1 - p)).mean()
        elif how == "row-against-column-labels":
            z = (w @ Xj.T).unsqueeze(0)
            loss = (F.softplus(z) - yj.unsqueeze(1) * z).mean()
        elif how == "column-view-stable-form":
            z = Xj.mm(w.view(-1, 1))
            loss = torch.mean(torch.clamp(z, min=0) - z * yj + torch.log1p(torch.exp(-z.abs())))
        else:  # "squeezed": column logits squeezed back before the loss: right
            z = (Xj @ w.unsqueeze(1)).squeeze(1)
            loss = -(yj * F.logsigmoid(z) + (1 - yj) * F.logsigmoid(-z)).mean()
        (loss * (bj / B)).backward()
        start += bj
    return w.grad.clone()


BROADCASTS = ["column-logsigmoid", "column-log-sigmoid", "row-against-column-labels",
              "column-view-stable-form"]


@FAST
@given(seeds, st.booleans(), st.booleans(), st.sampled_from(BROADCASTS))
def test_logits_broadcast_against_labels_are_named(seed, stale, clear, how):
    """Is a loss on logits of another shape than the labels ((b_j, 1) against (b_j,), or (1,
    b_j) against (b_j, 1)), averaged over the (b_j, b_j) matrix it broadcasts to, named by its
    replay, with or without the stale grad kept?"""
    assume(stale or clear)
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = broadcast_logits(w, X, y, sizes, how=how, clear=clear)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    assert verdict.misconception == "logits-labels-broadcast", verdict.message
    assert "(b_j, b_j)" in verdict.message and "every label" in verdict.message
    assert clear or "It also keeps the .grad that w arrived with" in verdict.message


def test_logits_broadcast_against_labels_are_named_by_the_check():
    """The whole check, as the round-v notebook meets it; squeezed column logits pass, and a
    weighting mistake on column logits keeps its own name."""
    for stale in (False, True):
        for seed in range(3):
            rng = np.random.default_rng(seed)
            result = microbatch.check_accumulated_grad(
                lambda w, X, y, sizes: broadcast_logits(w, X, y, sizes, how="column-logsigmoid"),
                rng, stale=stale)
            assert result.misconception == "logits-labels-broadcast", result.message
            right = microbatch.check_accumulated_grad(
                lambda w, X, y, sizes: broadcast_logits(w, X, y, sizes, how="squeezed"),
                np.random.default_rng(seed), stale=stale)
            assert right.passed, right.message
    for weighting, name in (("1/J", "unweighted-mean"), ("none", "unscaled-sum")):
        result = microbatch.check_accumulated_grad(
            lambda w, X, y, sizes: student_accumulate(w, X, y, sizes, weighting=weighting),
            np.random.default_rng(0), stale=False)
        assert result.misconception == name, result.message


def sliced_at_wrong_offsets(w, X, y, sizes, *, how):
    """accumulated_grad whose micro-batches start at the wrong rows, as students slice them."""
    w.grad = None
    B, start = sum(sizes), 0
    for j, b_j in enumerate(sizes):
        if how == "j-times-size":  # right only when every size is b_j
            Xj, yj = X[j * b_j:(j + 1) * b_j], y[j * b_j:(j + 1) * b_j]
        elif how == "j-times-size-len":  # the same slices, weighted by the rows they hold
            Xj, yj = X[j * b_j:(j + 1) * b_j], y[j * b_j:(j + 1) * b_j]
            b_j = len(yj)
        elif how == "offset-not-added":
            Xj, yj = X[start:start + b_j], y[start:start + b_j]
            start = b_j
        else:  # "split-reversed": the sizes' order reversed in the split, not in the weights
            Xj, yj = X.split(sizes[::-1])[j], y.split(sizes[::-1])[j]
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * b_j / B).backward()
    return w.grad.clone()


@pytest.mark.parametrize("how, name", [("j-times-size", "wrong-offsets"),
                                       ("j-times-size-len", "wrong-offsets"),
                                       ("offset-not-added", "wrong-offsets"),
                                       ("split-reversed", "probe.input-class.unequal-sizes")])
@pytest.mark.parametrize("stale", [False, True])
def test_micro_batches_sliced_at_wrong_offsets_are_named(how, name, stale):
    """A slicing that is right only for equal sizes is told so: replayed when it is one of the
    known slicings, else found by the same data cut into equal sizes (an input class)."""
    for seed in range(3):
        result = microbatch.check_accumulated_grad(
            lambda w, X, y, sizes: sliced_at_wrong_offsets(w, X, y, sizes, how=how),
            np.random.default_rng(seed), stale=stale)
        assert not result.passed and result.misconception == name, result.message
        assert "previous one ended" in result.message, result.message


def student_op(mistake=None):
    """A student's MyOp with an optional slip in backward."""
    class StudentOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            S, D = (x ** 3).sum(), 1 + x.abs().sum()
            sign = torch.ones_like(x) if mistake == "sign-dropped" else x.sign()
            second = 0 * x if mistake == "quotient-term-missing" else S * sign / D ** 2
            grad = 3 * x ** 2 / D - second
            return grad if mistake == "upstream-ignored" else g * grad

    return StudentOp


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5),
       st.sampled_from([None, "quotient-term-missing", "sign-dropped", "upstream-ignored"]))
def test_backward_rules(seed, upstream, mistake):
    """Is the right backward accepted for any input and upstream the check draws (1.5 to 4,
    either sign: an upstream of 1 could not tell an ignored upstream, as hypothesis found
    with 0.5 to 4), and each slip named?"""
    x = gradcheck.draw_x(np.random.default_rng(seed))
    verdict = gradcheck.judge_backward(student_op(mistake), x, upstream)
    assert verdict.ok == (mistake is None) and verdict.misconception == mistake, verdict.message


def op_with_grad(grad):
    """A student's MyOp whose backward is ``grad(x, S, A, sign)`` times the upstream."""
    return op_using_upstream(lambda g, x, S, A, sign: g * grad(x, S, A, sign))


#: Slips in the quotient rule d(u/v) = (u'v - uv')/v², with u = S, u' = 3x², v = 1 + A and
#: v' = sign(x): a factor dropped from either term, the first term missing (the product rule
#: on S·(1+A)⁻¹ with one half), the subtracted term's sign, the square.
QUOTIENT_SLIPS = {
    "first-term-over-v-squared": ("quotient-factor-dropped", "(1+A)",
                                  lambda x, S, A, s: (3 * x ** 2 - S * s) / (1 + A) ** 2),
    "second-term-without-S": ("quotient-factor-dropped", "S",
                              lambda x, S, A, s: 3 * x ** 2 / (1 + A) - s / (1 + A) ** 2),
    "x-squared-without-3": ("quotient-factor-dropped", "3",
                            lambda x, S, A, s: x ** 2 / (1 + A) - S * s / (1 + A) ** 2),
    "first-term-missing": ("quotient-term-missing", "3x²/(1+A) (from the derivative",
                           lambda x, S, A, s: -S * s / (1 + A) ** 2),
    "second-term-added": ("quotient-sign-flipped", "+",
                          lambda x, S, A, s: 3 * x ** 2 / (1 + A) + S * s / (1 + A) ** 2),
    "numerator-reversed": ("quotient-sign-flipped", "u·v' - u'·v",
                           lambda x, S, A, s: (S * s - 3 * x ** 2 * (1 + A)) / (1 + A) ** 2),
    "over-v-not-v-squared": ("quotient-denominator-not-squared", "(1+A)²",
                             lambda x, S, A, s: (3 * x ** 2 * (1 + A) - S * s) / (1 + A)),
    "second-term-over-v": ("quotient-denominator-not-squared", "(1+A)²",
                           lambda x, S, A, s: 3 * x ** 2 / (1 + A) - S * s / (1 + A)),
}


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5),
       st.sampled_from(sorted(QUOTIENT_SLIPS)))
def test_quotient_rule_slips_are_named(seed, upstream, slip):
    """Is a backward that misapplies the quotient rule (a factor dropped, the subtracted term
    added, the denominator not squared) named for what is wrong, in the backward's check and
    in gradcheck's?"""
    name, phrase, grad = QUOTIENT_SLIPS[slip]
    x = gradcheck.draw_x(np.random.default_rng(seed))
    verdict = gradcheck.judge_backward(op_with_grad(grad), x, upstream)
    assert not verdict.ok and verdict.misconception == name, verdict.message
    assert phrase in verdict.message, verdict.message
    result = gradcheck.check_gradcheck(op_with_grad(grad), np.random.default_rng(seed))
    assert not result.passed and result.misconception == name, result.message


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5))
def test_a_right_backward_in_another_arrangement_names_no_slip(seed, upstream):
    """Is the right gradient written another way (one fraction over (1+A)², S over (1+A)
    factored) accepted by both checks?"""
    forms = [lambda x, S, A, s: (3 * x ** 2 * (1 + A) - S * s) / (1 + A) ** 2,
             lambda x, S, A, s: (3 * x ** 2 - S / (1 + A) * s) / (1 + A)]
    x = gradcheck.draw_x(np.random.default_rng(seed))
    for grad in forms:
        assert gradcheck.judge_backward(op_with_grad(grad), x, upstream).ok
        assert gradcheck.check_gradcheck(op_with_grad(grad), np.random.default_rng(seed)).passed


def op_using_upstream(backward):
    """A student's MyOp whose backward returns ``backward(g, x, S, A, sign)``: the upstream
    gradient used however the student wrote it."""
    class StudentOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            S, A = (x ** 3).sum(), x.abs().sum()
            ctx.save_for_backward(x, S, A)
            return S / (1 + A)

        @staticmethod
        def backward(ctx, g):
            x, S, A = ctx.saved_tensors
            return backward(g, x, S, A, torch.sign(x))

    return StudentOp


#: Backwards that use the upstream gradient on part of the gradient only (operator precedence:
#: ``g * 3*x**2/(1+A) - S*sign/(1+A)**2``), add it, or apply it twice: the name and a phrase
#: the message must hold.
UPSTREAM_SLIPS = {
    "on-first-term": ("upstream-on-one-term", "parentheses",
                      lambda g, x, S, A, s: g * 3 * x ** 2 / (1 + A) - S * s / (1 + A) ** 2),
    "on-second-term": ("upstream-on-one-term", "parentheses",
                       lambda g, x, S, A, s: 3 * x ** 2 / (1 + A) - g * S * s / (1 + A) ** 2),
    "added": ("upstream-added", "multiplied",
              lambda g, x, S, A, s: g + 3 * x ** 2 / (1 + A) - S * s / (1 + A) ** 2),
    "applied-twice": ("upstream-applied-twice", "once",
                      lambda g, x, S, A, s: g * g * (3 * x ** 2 / (1 + A) - S * s / (1 + A) ** 2)),
}


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5),
       st.sampled_from(sorted(UPSTREAM_SLIPS)))
def test_upstream_on_part_of_the_gradient_is_named(seed, upstream, slip):
    """Is a backward that scales only one term by grad_output (operator precedence), adds it,
    or multiplies by it twice named for that, in the backward's check? gradcheck's upstream is
    1, where each is right, so gradcheck's check passes it."""
    name, phrase, backward = UPSTREAM_SLIPS[slip]
    x = gradcheck.draw_x(np.random.default_rng(seed))
    verdict = gradcheck.judge_backward(op_using_upstream(backward), x, upstream)
    assert not verdict.ok and verdict.misconception == name, verdict.message
    assert phrase in verdict.message and "grad_output" in verdict.message, verdict.message
    result = gradcheck.check_backward(op_using_upstream(backward), np.random.default_rng(seed))
    assert not result.passed and result.misconception == name, result.message
    if slip != "added":  # g + grad is not grad at an upstream of 1
        assert gradcheck.check_gradcheck(op_using_upstream(backward),
                                         np.random.default_rng(seed)).passed


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5))
def test_upstream_on_each_term_names_nothing(seed, upstream):
    """Is the upstream gradient multiplied into each term separately (right) accepted, and is a
    mistake shown at an upstream of 0 or 1, where a partial upstream cannot be seen, not named
    for the upstream?"""
    right = [lambda g, x, S, A, s: g * 3 * x ** 2 / (1 + A) - g * S * s / (1 + A) ** 2,
             lambda g, x, S, A, s: 3 * x ** 2 * g / (1 + A) - S * (s * g) / (1 + A) ** 2]
    x = gradcheck.draw_x(np.random.default_rng(seed))
    for backward in right:
        assert gradcheck.judge_backward(op_using_upstream(backward), x, upstream).ok
        assert gradcheck.check_backward(op_using_upstream(backward),
                                        np.random.default_rng(seed)).passed
    S, A = (x ** 3).sum(), x.abs().sum()
    second = -S * torch.sign(x) / (1 + A) ** 2
    for factor in (0.0, 1.0):  # the second term alone, at an upstream where nothing tells
        name, _ = gradcheck_mistakes.diagnose_backward(second, x, factor)
        assert name is None or not name.startswith("upstream"), name


#: Backwards whose derivative of |x| is right on part of the input and wrong on a region (a
#: ReLU mask, a mask of the negatives, -1 everywhere, sign(x) kept on one side of |x| = 1 only):
#: the region, what the message must say, and the d|x|/dx the backward uses.
ABS_REGION_SLIPS = {
    "relu-mask": (lambda x: x < 0, "-1 there", lambda x: (x > 0).to(x.dtype)),
    "negatives-mask": (lambda x: x > 0, "1 there", lambda x: -(x < 0).to(x.dtype)),
    "minus-one": (lambda x: x > 0, "1 there", lambda x: -torch.ones_like(x)),
    "sign-outside-one": (lambda x: x.abs() < 1, "sign(x)",
                         lambda x: torch.where(x.abs() > 1, x.sign(), torch.zeros_like(x))),
    "sign-inside-one": (lambda x: x.abs() > 1, "sign(x)",
                        lambda x: torch.where(x.abs() < 1, x.sign(), torch.zeros_like(x))),
}
#: How a region is told, and its mask: an x whose entries fit two regions may be told either
REGION_TEXT = (("x < 0", lambda x: x < 0), ("x > 0", lambda x: x > 0),
               ("|x| < 1", lambda x: x.abs() < 1), ("|x| > 1", lambda x: x.abs() > 1))


def op_with_abs_derivative(d_abs):
    return op_with_grad(lambda x, S, A, s: 3 * x ** 2 / (1 + A) - S * d_abs(x) / (1 + A) ** 2)


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5),
       st.sampled_from(sorted(ABS_REGION_SLIPS)))
def test_a_backward_wrong_on_a_region_is_named_by_where(seed, upstream, slip):
    """Is a backward whose derivative of |x| is right on part of the input and wrong on a region
    named by where it is wrong and what the derivative is there, in both checks?"""
    region, there, d_abs = ABS_REGION_SLIPS[slip]
    x = gradcheck.draw_x(np.random.default_rng(seed))
    assume(region(x).any() and not region(x).all())
    verdict = gradcheck.judge_backward(op_with_abs_derivative(d_abs), x, upstream)
    assert not verdict.ok and verdict.misconception == "abs-derivative-wrong-in-region", \
        verdict.message
    told = [f"wrong at every {text}" for text, mask in REGION_TEXT
            if torch.equal(mask(x), region(x))]
    assert any(t in verdict.message for t in told), verdict.message
    assert there in verdict.message and "right where" in verdict.message, verdict.message
    if slip in ("relu-mask", "negatives-mask", "minus-one"):  # every draw has both signs
        for check in (gradcheck.check_backward, gradcheck.check_gradcheck):
            result = check(op_with_abs_derivative(d_abs), np.random.default_rng(seed))
            assert result.misconception == "abs-derivative-wrong-in-region", result.message


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5))
def test_sign_written_by_masks_names_nothing(seed, upstream):
    """Is sign(x) built from masks ((x > 0) - (x < 0), a where on x >= 0) accepted?"""
    for d_abs in (lambda x: (x > 0).to(x.dtype) - (x < 0).to(x.dtype),
                  lambda x: torch.where(x >= 0, 1.0, -1.0).to(x.dtype)):
        x = gradcheck.draw_x(np.random.default_rng(seed))
        assert gradcheck.judge_backward(op_with_abs_derivative(d_abs), x, upstream).ok
        assert gradcheck.check_gradcheck(op_with_abs_derivative(d_abs),
                                         np.random.default_rng(seed)).passed


def op_at_zero(sign):
    """A student's MyOp whose backward takes sign(x) from ``sign``."""
    class StudentOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            S, D = (x ** 3).sum(), 1 + x.abs().sum()
            return g * (3 * x ** 2 / D - S * sign(x) / D ** 2)

    return StudentOp


def sign_at_zero(value):
    return lambda x: torch.where(x == 0, torch.full_like(x, value), x.sign())


@FAST
@given(seeds, st.floats(-4.0, 4.0).filter(lambda g: abs(g) >= 1.5),
       st.sampled_from([(None, torch.sign), (None, sign_at_zero(1.0)),
                        (None, sign_at_zero(-1.0)), (None, sign_at_zero(0.3)),
                        ("nan-at-zero", lambda x: x / x.abs()),
                        ("outside-subgradient", sign_at_zero(2.0))]))
def test_backward_at_the_kink(seed, upstream, case):
    """At an x with entries equal to 0, is any sign(0) in [-1, 1] accepted, and a NaN there or
    a value outside the subgradients named?"""
    name, sign = case
    rng = np.random.default_rng(seed)
    x = gradcheck_kink.with_zeros(rng, gradcheck.draw_x(rng))
    assert 1 <= int((x == 0).sum()) < x.numel()
    verdict = gradcheck.judge_backward_at_kink(op_at_zero(sign), x, upstream)
    assert verdict.ok == (name is None) and verdict.misconception == name, verdict.message


@FAST
@given(seeds)
def test_forward_of_a_correct_op_passes(seed):
    """Is the forward accepted on any drawn input?"""
    op = student_op()
    assert gradcheck.judge_forward(lambda x: op.apply(x), op, gradcheck.draw_x(
        np.random.default_rng(seed))).ok


def good_check(x):
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


def float32_check(x):
    x32 = x.detach().float().requires_grad_()
    return torch.autograd.gradcheck(my_op, (x32,), eps=1e-6, atol=1e-8, raise_exception=False)


def raising_check(x):
    return torch.autograd.gradcheck(my_op, (x.detach().double().requires_grad_(),), eps=1e-6,
                                    atol=1e-8)


def always_true(x):
    return True


my_op = None  # the checks swap the grader's op in here


@pytest.mark.parametrize("fn, name", [(good_check, None), (float32_check, "checking-in-float32"),
                                      (raising_check, "gradcheck-raises"),
                                      (always_true, "accepts-broken-op")])
def test_check_my_op(fn, name):
    """Does swapping the grader's ops in tell these check_my_op apart, and restore my_op?"""
    result = selfcheck.check_check_my_op(fn, np.random.default_rng(3))
    assert result.passed == (name is None) and result.misconception == name, result.message
    assert my_op is None, "the student's my_op was not restored"


def copy_of(x):
    return x.detach().double().requires_grad_()


def gradcheck_contract(fn, x64, **kwargs):
    return torch.autograd.gradcheck(fn, (x64,), eps=1e-6, atol=1e-8,
                                    **{"raise_exception": False, **kwargs})


def under_no_grad(x):
    """The blind round's spelling: the copy and gradcheck in one no_grad block."""
    with torch.no_grad():
        x64 = x.to(torch.float64).clone().requires_grad_()
        return gradcheck_contract(my_op, x64)


@torch.no_grad()
def decorated_no_grad(x):
    return gradcheck_contract(my_op, copy_of(x))


def under_inference_mode(x):
    with torch.inference_mode():
        return gradcheck_contract(my_op, copy_of(x))


def grad_switched_off(x):
    x64 = copy_of(x)
    with torch.set_grad_enabled(False):
        return gradcheck_contract(my_op, x64)


def under_no_grad_raising(x):
    """no_grad and gradcheck's default raise_exception=True: it raises for a correct op."""
    with torch.no_grad():
        return gradcheck_contract(my_op, copy_of(x), raise_exception=True)


def copied_in_inference_mode(x):
    with torch.inference_mode():
        x64 = copy_of(x)
    return gradcheck_contract(my_op, x64)


def copy_without_requires_grad(x):
    return gradcheck_contract(my_op, x.detach().double())


def detached_after_the_copy(x):
    return gradcheck_contract(my_op, copy_of(x).detach())


def op_on_a_detached_input(x):
    return gradcheck_contract(lambda t: my_op(t.detach()), copy_of(x))


def copied_under_no_grad(x):
    """Near miss: the copy made under no_grad (requires_grad set there too), gradcheck
    outside: right."""
    with torch.no_grad():
        x64 = x.double().clone().requires_grad_()
    return gradcheck_contract(my_op, x64)


def float32_under_no_grad(x):
    """Both mistakes: float32 and autograd off."""
    with torch.no_grad():
        return gradcheck_contract(my_op, x.detach().float().requires_grad_())


@pytest.mark.parametrize("fn, name", [
    (under_no_grad, "check-without-autograd"), (decorated_no_grad, "check-without-autograd"),
    (under_inference_mode, "check-without-autograd"),
    (grad_switched_off, "check-without-autograd"),
    (under_no_grad_raising, "check-without-autograd"),
    (copied_in_inference_mode, "check-without-autograd"),
    (copy_without_requires_grad, "copy-without-requires-grad"),
    (detached_after_the_copy, "copy-without-requires-grad"),
    (op_on_a_detached_input, "copy-without-requires-grad"),
    (copied_under_no_grad, None), (float32_check, "checking-in-float32"),
    (float32_under_no_grad, "check-without-autograd")])
@pytest.mark.parametrize("check", ["check_my_op", "check_my_op_at_x"])
def test_a_check_with_autograd_off_is_named(fn, name, check):
    """A check that runs my_op with autograd off (no_grad, inference_mode, set_grad_enabled,
    a decorator) or on a copy that does not require grad says False (or raises) for a correct
    op: each is named by how the stand-in was called, in both checks that ask about correct
    ops; a copy made under no_grad that requires grad is right."""
    run = {"check_my_op": selfcheck.check_check_my_op,
           "check_my_op_at_x": selfcheck_at_x.check_check_my_op_at_x}[check]
    result = run(fn, np.random.default_rng(5))
    assert result.passed == (name is None) and result.misconception == name, result.message
    if name == "check-without-autograd":
        assert "no_grad" in result.message and "gradcheck" in result.message
    if name == "copy-without-requires-grad":
        assert "requires_grad_()" in result.message
    if fn is float32_under_no_grad:
        assert "float32" in result.message  # both mistakes are told


MyOp = None  # the checks swap the grader's Function in here


def names_the_op(x):
    """Cheats: tells the ops apart by a name instead of checking the gradient."""
    return "broken" not in MyOp.__name__.lower() and MyOp.__name__ != "BrokenFunction"


def by_base_class(x):
    """Cheats: the broken op as a subclass of the correct one."""
    return MyOp.__mro__[1] is torch.autograd.Function


def alternating():
    """Cheats: True, False, True, ... (the order the ops used to come in)."""
    calls = []

    def check_my_op(x):
        calls.append(x)
        return len(calls) % 2 == 1

    return check_my_op


@pytest.mark.parametrize("cheat", [names_the_op, by_base_class])
def test_check_my_op_cannot_be_answered_by_looking_at_the_op(cheat):
    """The correct and the broken op look alike: same name, same base class."""
    result = selfcheck.check_check_my_op(cheat, np.random.default_rng(3))
    assert not result.passed, result.message
    assert MyOp is None


def test_check_my_op_cannot_be_answered_by_the_call_order():
    """Which op comes first in each of the rounds is drawn per grading seed: an alternating
    answer passes only when every round of both dtypes puts the correct op first (one seed in
    2**(2*ROUNDS)); none of these 32 seeds."""
    passed = [selfcheck.check_check_my_op(alternating(), np.random.default_rng(seed)).passed
              for seed in range(32)]
    assert not any(passed), passed


@pytest.mark.parametrize("answer, name", [
    (lambda c, m: torch.device("cuda" if c else "mps" if m else "cpu"), None),
    (lambda c, m: "cuda" if c else "mps" if m else "cpu", "device-as-string"),
    (lambda c, m: torch.device("mps" if m else "cuda" if c else "cpu"), "wrong-preference-order"),
    # cuda never asked for (every way of asking is simulated: test_checks_pick_device_styles)
    (lambda c, m: torch.device("mps" if m else "cpu"), "never-picks-cuda"),
    (lambda c, m: torch.device("cuda" if c else "cpu"), "never-picks-mps"),
])
def test_pick_device(answer, name):
    """Is every simulated availability judged, a string named, and torch restored after?"""
    real = torch.cuda.is_available, torch.backends.mps.is_available
    result = device.check_pick_device(
        lambda: answer(torch.cuda.is_available(), torch.backends.mps.is_available()),
        np.random.default_rng(0))
    assert result.misconception == name and result.passed == (name is None), result.message
    assert (torch.cuda.is_available, torch.backends.mps.is_available) == real


def predict_with(*, assign=True, evaluate=True, no_grad=True, detach=True, move_model=True,
                 copy_out=None):
    def predict(model, batch, where):
        if move_model:
            model.to(where)
        moved = batch.to(where)
        batch = moved if assign else batch
        if evaluate:
            model.eval()
        with torch.set_grad_enabled(not no_grad):
            out = model(batch)
        out = out.detach() if detach else out
        return {None: out, "cpu": lambda: out.cpu(),
                "to-cpu": lambda: out.to("cpu")}[copy_out]() if copy_out else out
    return predict


@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("kwargs, name, only_if_moved", [
    ({}, None, False), ({"evaluate": False}, "eval-missing", False),
    ({"no_grad": False, "detach": False}, "graph-recorded", False),
    ({"assign": False}, "batch-not-moved", True),
    ({"move_model": False}, "model-not-moved", True),
    # the output copied off the device: on CUDA it comes back on the CPU, on meta it raises
    ({"copy_out": "cpu"}, "output-not-on-device", True),
    ({"copy_out": "to-cpu"}, "output-not-on-device", True),
])
def test_predict(moved, kwargs, name, only_if_moved):
    """Is a right predict accepted on both devices and each mistake named where visible?"""
    if name == "eval-missing" and moved and not torch.cuda.is_available():
        pytest.skip("meta tensors hold no values, so dropout is invisible there")
    result = device_predict.check_predict(predict_with(**kwargs), np.random.default_rng(5),
                                          moved=moved)
    expected = None if (only_if_moved and not moved) else name
    assert result.misconception == expected and result.passed == (expected is None), result.message


@pytest.mark.parametrize("moved", [False, True])
def test_predict_detached_after_a_recorded_forward_gets_advice_not_a_penalty(moved):
    """Recording a graph and detaching leaves no trace in the answer; the saved-tensor count
    is heard from the student's process, so it words advice and costs nothing."""
    result = device_predict.check_predict(predict_with(no_grad=False), np.random.default_rng(5),
                                          moved=moved)
    assert result.passed and result.points == result.max_points
    assert result.misconception == "graph-recorded"
    assert "detach() afterwards does not avoid the recording" in result.message


def _cpu_forward(model, batch):
    with torch.no_grad():
        return model.eval()(batch)


def empty_like_after_cpu_forward(model, batch, device):
    out = _cpu_forward(model, batch)  # the forward on the CPU
    model.to(device)
    return torch.empty_like(out, device=device)


def empty_of_out_features(model, batch, device):
    model.to(device).eval()  # moved, never run
    return torch.empty(batch.shape[0], model[-1].out_features, device=device)


def zeros_like_moved(model, batch, device):
    out = _cpu_forward(model, batch)
    model.to(device)
    return torch.zeros_like(out).to(device)


def new_empty_after_cpu_forward(model, batch, device):
    out = _cpu_forward(model, batch)
    model.to(device)
    batch = batch.to(device)
    return out.new_empty(out.shape, device=device)


def forward_of_a_copy_on_the_cpu(model, batch, device):
    import copy
    out = _cpu_forward(copy.deepcopy(model), batch)
    model.to(device)
    return torch.empty(out.shape, device=device)


@pytest.mark.parametrize("predict", [
    empty_like_after_cpu_forward, empty_of_out_features, zeros_like_moved,
    new_empty_after_cpu_forward, forward_of_a_copy_on_the_cpu])
def test_predict_whose_forward_never_ran_on_the_device(predict):
    """An answer made to the output's shape on the device, after moving the model but running
    its forward on the CPU (or not at all), is wrong: on CUDA its values say so; on meta, which
    holds no values, the worker's observation of where the model's forward ran names it."""
    result = device_predict.check_predict(predict, np.random.default_rng(5), moved=True)
    assert not result.passed and result.points == 0.0, result.message
    if not torch.cuda.is_available():
        assert result.misconception == "forward-not-on-device", result.message
        assert "run model(batch) there" in result.message, result.message


def predict_inference_mode(model, batch, device):
    model = model.to(device)
    model.eval()
    with torch.inference_mode():
        return model(batch.to(device, non_blocking=True))


def predict_detached(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device)).detach()


def predict_forward_method(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model.forward(batch.to(device))


def predict_layer_by_layer(model, batch, device):
    model.to(device).eval()
    x = batch.to(device)
    with torch.no_grad():
        for layer in model:
            x = layer(x)
    return x


def predict_keyword_input(model, batch, device):
    model.to(device)
    model.eval()
    with torch.no_grad():
        return model(input=batch.to(device)).clone()


def predict_eval_first(model, batch, device):
    model.eval()
    model.to(device)
    batch = batch.to(device)
    with torch.no_grad():
        out = model(batch)
    return out


@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("predict", [
    predict_inference_mode, predict_detached, predict_forward_method, predict_layer_by_layer,
    predict_keyword_input, predict_eval_first])
def test_every_correct_predict_keeps_full_marks(predict, moved):
    """Every correct style (the model and batch moved either way, non_blocking, inference_mode,
    eval before or after the move, model(batch), its forward method, layer by layer, a keyword
    input, its output detached or cloned) keeps full marks, with no name, on either device."""
    result = device_predict.check_predict(predict, np.random.default_rng(5), moved=moved)
    assert result.passed and result.points == result.max_points, result.message
    assert result.misconception is None, result.message


@pytest.mark.parametrize("predict", [predict_inference_mode, predict_layer_by_layer])
def test_the_forward_is_seen_on_the_device_with_batchnorm_and_one_row(predict):
    """A model with batch norm and dropout, a batch of one row: the observation says the
    model's forward ran on the device it was given, and the answer passes."""
    device_ = device.changed_device()
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(6, 2)).train()
    batch = torch.randn(1, 4)
    expected = device.evaluated(model, batch)
    if device_.type == "meta":
        expected = device_predict.on_meta(expected)
    prediction = device_predict.run_predict(predict, model, batch, device_)
    assert prediction.failure is None and device_.type in prediction.forward_devices
    verdict = device_predict.judge_prediction(prediction.got, prediction.packed, model, expected,
                                              device_, forward=prediction.forward_devices)
    assert verdict.ok, verdict.message
    assert not any(m._forward_hooks for m in model.modules())  # the observer left nothing


def optimizer_first(model, where, lr=0.1):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    model.to(where)
    return opt


@pytest.mark.parametrize("fn, name", [
    (lambda m, d, lr=0.1: torch.optim.SGD(m.to(d).parameters(), lr=lr), None),
    (lambda m, d, lr=0.1: torch.optim.SGD(m.to(d).parameters(), lr=0.1), "lr-ignored"),
    (lambda m, d, lr=0.1: torch.optim.Adam(m.to(d).parameters(), lr=lr), "not-sgd"),
    (optimizer_first, "optimizer-before-move"),
])
def test_make_optimizer_after_move(fn, name):
    """Is building before the move caught on a real device change, and the flag restored?"""
    before = torch.__future__.get_overwrite_module_params_on_conversion()
    result = device.check_make_optimizer(fn, np.random.default_rng(7), moved=True)
    assert result.misconception == name and result.passed == (name is None), result.message
    assert torch.__future__.get_overwrite_module_params_on_conversion() == before


@FAST
@given(seeds, learning_rates, step_counts)
def test_sigmoid_then_log_is_flagged_only_out_of_tolerance(seed, lr, steps):
    """Is sigmoid + log accepted while it stays within tolerance, and named when it does not?"""
    X, y = problem(seed)
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        p = torch.sigmoid(X @ w + b)
        loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        w.grad = b.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    verdict = logreg.judge_losses(losses, X, y, lr, steps)
    assert verdict.ok or verdict.misconception == "sigmoid-log", verdict.message


def or_default(model, where, lr=0.1):
    lr = lr or 0.1
    return torch.optim.SGD(model.to(where).parameters(), lr=lr)


def if_not_default(model, where, lr=None):
    if not lr:
        lr = 0.1
    return torch.optim.SGD(model.to(where).parameters(), lr=lr)


def is_none_default(model, where, lr=None):
    return torch.optim.SGD(model.to(where).parameters(), lr=0.1 if lr is None else lr)


@pytest.mark.parametrize("fn, name", [
    (is_none_default, None),
    (or_default, "falsy-lr-replaced"),
    (if_not_default, "falsy-lr-replaced"),
    (lambda m, d, lr=0.1: torch.optim.SGD(m.to(d).parameters(), lr=lr if lr else 0.01),
     "falsy-lr-replaced"),
    # a constant lr fails on the drawn lr first, as before
    (lambda m, d, lr=0.1: torch.optim.SGD(m.to(d).parameters(), lr=0.1), "lr-ignored"),
], ids=["is-none", "or", "if-not", "conditional-0.01", "constant"])
def test_make_optimizer_asked_for_lr_zero(fn, name):
    """lr=0.0 is a legal learning rate: a falsy default that replaces it is named, on the
    grading device, at every seed; a default tested with `is None` passes."""
    for seed in range(3):
        result = device.check_make_optimizer(fn, np.random.default_rng(seed), moved=False)
        assert result.misconception == name and result.passed == (name is None), result.message
        if name == "falsy-lr-replaced":
            assert "lr=0.0" in result.message and "`lr is None`" in result.message


def test_the_q4_references_are_those_of_a_copy_of_the_model():
    """The q4_device checks keep no deepcopy of the models they draw: the eval forward runs on
    the grader's own model (its modes restored), the probes' model as it arrived is drawn again
    from the generator's state, and the reference on ``meta`` is the CPU output's shape and
    dtype. Each must be what the copies gave: the same output, weights, modes, and the meta
    forward's shape, dtype and strides."""
    import copy

    from autograder.checks.porting.device import draw_model, drawn_again, evaluated
    from autograder.checks.porting.device_predict import on_meta

    for seed in range(12):
        rng = np.random.default_rng(seed)
        state = rng.bit_generator.state
        model, batch = draw_model(rng)
        batch = batch[:1].clone() if seed % 3 == 2 else batch
        pristine = copy.deepcopy(model)
        with torch.no_grad():
            expected = copy.deepcopy(model).eval()(batch)
            meta = copy.deepcopy(model).eval().to("meta")(batch.to("meta"))
        got = evaluated(model, batch)
        assert torch.equal(got, expected) and not got.requires_grad
        assert all(m.training for m in model.modules())
        again = drawn_again(state)
        assert repr(again) == repr(pristine) and all(m.training for m in again.modules())
        assert all(torch.equal(a, b) and a.requires_grad == b.requires_grad for a, b in
                   zip(again.parameters(), pristine.parameters()))
        shown = on_meta(got)
        assert (shown.device, shown.shape, shown.dtype, shown.stride(), shown.requires_grad) \
            == (meta.device, meta.shape, meta.dtype, meta.stride(), meta.requires_grad)
