"""Five mistakes the checks scored but did not name, each in two or more spellings: exercises
q1 ``gradient-multiplied`` (a vjp pullback called twice, backward twice, p.grad added to by
hand), porting q4 ``in-place-on-to-result`` (``batch.to(device).detach_()`` on the batch's own
device), q2 ``inference-tensor`` (a buffer made under ``torch.inference_mode()``), q3
``low-precision`` told as half precision (one float16 or bfloat16 term), q1 ``epsilon-in-log``
(``log(sigmoid(z) + eps)``). Do the right answers pass, and do the mistakes beside them (the
batch detached directly, a clamped probability, a float32 term) keep their own names?
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.exercises.accumulation import check_square_grads
from autograder.checks.porting import gradcheck
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes
from autograder.checks.porting.microbatch import check_accumulated_grad, check_same_objects
from autograder.checks.porting.recording import check_predict_no_graph

SEEDS = (0, 1, 2, 3)
#: q2's three checks: the weighted sizes, a stale gradient cleared, the same objects twice
MICRO_CHECKS = (lambda fn, rng: check_accumulated_grad(fn, rng, stale=False),
                lambda fn, rng: check_accumulated_grad(fn, rng, stale=True), check_same_objects)


def _vjp_twice(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    total, grads = torch.zeros(()), []
    for _ in range(repeats):
        if clear:
            total = torch.zeros(())
        _, pullback = torch.func.vjp(lambda t: t ** 2, p.detach())
        total += pullback(torch.ones(()))[0]
        total += pullback(torch.ones(()))[0]
        grads.append(total.item())
    return grads


def _backward_twice(p0, repeats, clear, times=2, by_hand=False):
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        q = p ** 2
        for _ in range(times - 1 - by_hand):
            q.backward(retain_graph=True)
        q.backward()
        if by_hand:  # backward already added it into p.grad
            p.grad += torch.autograd.grad(p ** 2, p)[0]
        grads.append(p.grad.item())
    return grads


MULTIPLIED = {"vjp-pullback-twice": (_vjp_twice, "twice"),
              "backward-twice": (_backward_twice, "twice"),
              "grad-added-by-hand": (partial(_backward_twice, by_hand=True), "twice"),
              "backward-three-times": (partial(_backward_twice, times=3), "three times")}


@pytest.mark.parametrize("how", sorted(MULTIPLIED))
@pytest.mark.parametrize("clear", (True, False))
def test_a_gradient_added_more_than_once_is_named(how, clear):
    fn, times = MULTIPLIED[how]
    for seed in SEEDS:
        result = check_square_grads(fn, np.random.default_rng(seed), clear=clear)
        assert not result.passed and result.misconception == "gradient-multiplied", result.message
        assert f"each step's gradient was added {times}" in result.message, result.message
        assert "At another p0 too" in result.message, result.message


def test_right_and_other_accumulation_answers_keep_their_verdicts():
    def right(p0, repeats, clear):
        return _backward_twice(p0, repeats, clear, 1)
    for clear in (True, False):
        assert check_square_grads(right, np.random.default_rng(0), clear=clear).passed

    def never_cleared(p0, repeats, clear):
        return _backward_twice(p0, repeats, False, 1)
    result = check_square_grads(never_cleared, np.random.default_rng(0), clear=True)
    assert result.misconception == "not-cleared", result.message


def _predict(prepare):
    def predict(model, batch, device):
        model = model.to(device)
        batch = prepare(batch, device)
        model.eval()
        with torch.no_grad():
            return model(batch)
    return predict


def _detach_inside_call(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device).detach_())


THROUGH_TO = {
    "to-then-detach_": _predict(lambda batch, device: batch.to(device).detach_()),
    "to-then-requires_grad_": _predict(lambda batch, dev: batch.to(dev).requires_grad_(False)),
    "detach_-inside-call": _detach_inside_call,
}


@pytest.mark.parametrize("how", sorted(THROUGH_TO))
def test_an_in_place_detach_through_to_is_named(how):
    for seed in SEEDS[:2]:
        result = check_predict_no_graph(THROUGH_TO[how], np.random.default_rng(seed))
        assert result.misconception == "in-place-on-to-result", result.message
        assert "Tensor.to returns the very same tensor, not a copy" in result.message


def test_the_callers_batch_detached_directly_stays_a_modified_input():
    def detach_first(batch, device):
        batch.detach_()
        return batch.to(device)
    result = check_predict_no_graph(_predict(detach_first), np.random.default_rng(0))
    assert result.misconception == "modified-input", result.message
    assert "Tensor.to returns" not in result.message
    out_of_place = _predict(lambda batch, device: batch.to(device).detach())
    assert check_predict_no_graph(out_of_place, np.random.default_rng(0)).passed


def _micro(start, add):
    """A micro-batch loop: ``start(w)`` makes the buffer, ``add(w, total)`` takes in each
    micro-batch's gradient (left in ``w.grad``)."""
    def accumulated_grad(w, X, y, sizes):
        total, B = start(w), sum(sizes)
        for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
            w.grad = None
            (F.binary_cross_entropy_with_logits(Xj @ w, yj) * len(yj) / B).backward()
            total = add(w, total)
        return total
    return accumulated_grad


def _in_inference(w):
    with torch.inference_mode():
        return torch.zeros_like(w)


@torch.inference_mode()
def _zeros_decorated(w):
    return torch.zeros_like(w)


def _add_in_place(w, total):
    total += w.grad
    return total


def _grad_set_in_inference(w, X, y, sizes):
    with torch.inference_mode():
        w.grad = torch.zeros_like(w)
    B = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * len(yj) / B).backward()
    return w.grad.clone()


def _weights_made_in_inference(w, X, y, sizes):
    with torch.inference_mode():
        weights = torch.tensor(sizes, dtype=X.dtype) / sum(sizes)
    w.grad = None
    for Xj, yj, weight in zip(torch.split(X, sizes), torch.split(y, sizes), weights):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * weight).backward()
    return w.grad.clone()


INFERENCE = {
    "buffer-plus-equals": _micro(_in_inference, _add_in_place),
    "decorated-helper-add_": _micro(_zeros_decorated, lambda w, t: t.add_(w.grad)),
    "grad-set-in-inference-mode": _grad_set_in_inference,
    "weights-made-in-inference-mode": _weights_made_in_inference,
}


@pytest.mark.parametrize("how", sorted(INFERENCE))
def test_a_tensor_made_under_inference_mode_is_named(how):
    for check in MICRO_CHECKS:
        result = check(INFERENCE[how], np.random.default_rng(0))
        assert not result.passed and result.misconception == "inference-tensor", result.message
        assert "That tensor was made under torch.inference_mode()" in result.message


def test_a_buffer_made_under_no_grad_passes():
    def under_no_grad(w):
        with torch.no_grad():
            return torch.zeros_like(w)
    fn = _micro(under_no_grad, _add_in_place)
    for check in MICRO_CHECKS:
        assert check(fn, np.random.default_rng(0)).passed


def _op(backward_of):
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return backward_of(x, grad_output)
    return MyOp


def _grad(x, g, sign=None, first=None):
    S, A = (x ** 3).sum(), x.abs().sum()
    sign = torch.sign(x) if sign is None else sign
    first = 3 * x ** 2 / (1 + A) if first is None else first
    return g * (first - S * sign / (1 + A) ** 2)


HALF_TERM = {
    "sign-half": _op(lambda x, g: _grad(x, g, sign=torch.sign(x).half())),
    "sign-to-float16": _op(lambda x, g: _grad(x, g, sign=torch.sign(x).to(torch.float16))),
    "sign-bfloat16": _op(lambda x, g: _grad(x, g, sign=torch.sign(x).bfloat16())),
    "first-term-half": _op(lambda x, g: _grad(x, g, first=3 * x.half() ** 2
                                              / (1 + x.abs().sum()))),
}


@pytest.mark.parametrize("how", sorted(HALF_TERM))
def test_one_half_precision_term_is_named(how):
    for seed in SEEDS:
        result = gradcheck.check_backward(HALF_TERM[how], np.random.default_rng(seed))
        assert not result.passed and result.misconception == "low-precision", result.message
        assert "computed in half precision (float16 or bfloat16)" in result.message
        assert "computed in float32 and mixed" not in result.message


def test_a_float32_term_is_still_told_float32():
    op = _op(lambda x, g: _grad(x, g, sign=torch.sign(x).float()))
    result = gradcheck.check_backward(op, np.random.default_rng(0))
    assert result.misconception == "low-precision", result.message
    assert "computed in float32 and mixed" in result.message
    assert "half precision" not in result.message


def _train(row_loss):
    def train_logreg(X, y, lr=0.5, steps=300):
        w, b = torch.zeros(X.shape[1], requires_grad=True), torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = row_loss(X @ w + b, y).mean()
            w.grad, b.grad = None, None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
            losses.append(loss.item())
        return w, b, losses
    return train_logreg


def _eps_inside(eps):
    def loss(z, y):
        p = torch.sigmoid(z)
        return -(y * torch.log(p + eps) + (1 - y) * torch.log(1 - p + eps))
    return loss


EPSILON = {"log-plus-1e-8": _train(_eps_inside(1e-8)),
           "log-method-plus-1e-7": _train(lambda z, y: -(y * (z.sigmoid() + 1e-7).log() + (
               1 - y) * (1 - z.sigmoid() + 1e-7).log())),
           "log-plus-1e-6": _train(_eps_inside(1e-6))}


@pytest.mark.parametrize("how", sorted(EPSILON))
def test_an_epsilon_inside_the_log_is_named(how):
    for seed in SEEDS[:3]:
        result = check_train_logreg_regimes(EPSILON[how], np.random.default_rng(seed))
        assert not result.passed and result.misconception == "epsilon-in-log", result.message
        assert "with an epsilon inside the log" in result.message


def test_a_clamped_probability_is_not_named_an_epsilon():
    def clamped(z, y):
        p = torch.sigmoid(z).clamp(1e-7, 1 - 1e-7)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p))
    result = check_train_logreg_regimes(_train(clamped), np.random.default_rng(0))
    assert not result.passed and result.misconception != "epsilon-in-log", result.message
    right = _train(lambda z, y: F.binary_cross_entropy_with_logits(z, y, reduction="none"))
    assert check_train_logreg_regimes(right, np.random.default_rng(0)).passed
