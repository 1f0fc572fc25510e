"""Blind round zn's porting classes that lost points without their cause, each with the
variants a student writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg`` stepping b by another rate than w: ``bias-step-size``;
- q2: ``accumulated_grad`` whose offsets find a size's first micro-batch
  (``sum(sizes[:sizes.index(bj)])``), wrong only when a size repeats: ``wrong-offsets``;
- q3: ``MyOp.backward`` computed in float32 and cast back: ``low-precision``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import gradcheck, microbatch
from autograder.checks.porting.logreg import check_train_logreg

# --- q1: bias-step-size -------------------------------------------------------------------------


def _train(step_b=None, optimizer=None, step_w=None):
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = optimizer(w, b, lr) if optimizer else None
        losses = []
        for _ in range(steps):
            loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
            w.grad = None
            b.grad = None
            loss.backward()
            losses.append(loss.item())
            if opt is not None:
                opt.step()
                continue
            with torch.no_grad():
                w -= (step_w(lr) if step_w else lr) * w.grad
                b -= (step_b(lr) if step_b else lr) * b.grad
        return w, b, losses
    return train_logreg


BIAS_STEPS = {
    "lesson-lr-hard-coded": _train(step_b=lambda lr: 0.5),  # blind round zn's student_02
    "half-lr": _train(step_b=lambda lr: lr / 2),
    "twice-lr": _train(step_b=lambda lr: 2 * lr),
    "lr-forgotten": _train(step_b=lambda lr: 1.0),
    "param-group": _train(optimizer=lambda w, b, lr: torch.optim.SGD(
        [{"params": [w]}, {"params": [b], "lr": 0.1}], lr=lr)),
    "two-optimizers": _train(optimizer=lambda w, b, lr: _Both(
        torch.optim.SGD([w], lr=lr), torch.optim.SGD([b], lr=0.05))),
}


class _Both:
    def __init__(self, *opts):
        self.opts = opts

    def step(self):
        for opt in self.opts:
            opt.step()


@pytest.mark.parametrize("how", sorted(BIAS_STEPS))
@pytest.mark.parametrize("part", ["losses", "params"])
def test_a_bias_step_of_its_own_is_named(how, part):
    result = check_train_logreg(BIAS_STEPS[how], np.random.default_rng(11), part=part)
    assert not result.passed, how
    assert result.misconception == "bias-step-size", result.message
    assert "same lr" in result.message and "step size of" in result.message, result.message


def test_the_hard_coded_lesson_lr_is_told():
    result = check_train_logreg(BIAS_STEPS["lesson-lr-hard-coded"], np.random.default_rng(11),
                                part="losses")
    assert "0.5, the lesson's lr" in result.message, result.message


RIGHT = {
    "plain": _train(),
    "one-optimizer": _train(optimizer=lambda w, b, lr: torch.optim.SGD([w, b], lr=lr)),
    "one-group-each-at-lr": _train(optimizer=lambda w, b, lr: torch.optim.SGD(
        [{"params": [w], "lr": lr}, {"params": [b], "lr": lr}], lr=0.01)),
}


@pytest.mark.parametrize("how", sorted(RIGHT))
def test_the_same_step_size_passes(how):
    for part in ("losses", "params"):
        assert check_train_logreg(RIGHT[how], np.random.default_rng(11), part=part).passed


def test_b_step_over_m_keeps_its_name():
    def train_logreg(X, y, lr=0.5, steps=300):
        return _train(step_b=lambda lr_: lr_ / X.shape[0])(X, y, lr, steps)
    result = check_train_logreg(train_logreg, np.random.default_rng(11), part="losses")
    assert result.misconception == "update-scaled-by-m", result.message


def test_w_stepped_by_its_own_rate_is_not_named_bias():
    result = check_train_logreg(_train(step_w=lambda lr: 0.5), np.random.default_rng(11),
                                part="losses")
    assert not result.passed
    assert result.misconception != "bias-step-size", result.message


# --- q2: offsets at a size's first micro-batch ------------------------------------------------


def _micro(start_of):
    def accumulated_grad(w, X, y, sizes):
        B = sum(sizes)
        w.grad = None
        for j, bj in enumerate(sizes):
            start = start_of(sizes, j, bj)
            Xj, yj = X[start:start + bj], y[start:start + bj]
            (F.binary_cross_entropy_with_logits(Xj @ w, yj) * (bj / B)).backward()
        return w.grad.clone()
    return accumulated_grad


FIRST_OF_SIZE = {
    "index-of-size": _micro(lambda s, j, bj: sum(s[:s.index(bj)])),  # zn's student_03
    "index-of-size-in-list": _micro(lambda s, j, bj: sum(list(s)[:list(s).index(s[j])])),
    "dict-of-first-starts": _micro(
        lambda s, j, bj: {size: sum(s[:i]) for i, size in reversed(list(enumerate(s)))}[bj]),
}
# a dict from each size to its start filled in order: a repeated size keeps its LAST start
# (blind round zs's student_03)
LAST_OF_SIZE = {
    "dict-of-last-starts": _micro(lambda s, j, bj: {size: sum(s[:i]) for i, size
                                                    in enumerate(s)}[bj]),
    "rindex-of-size": _micro(lambda s, j, bj: sum(s[:len(s) - 1 - s[::-1].index(bj)])),
}
RUNNING = {
    "running-offset": _micro(lambda s, j, bj: sum(s[:j])),
    "split": None,  # below
}


def _split(w, X, y, sizes):
    B = sum(sizes)
    w.grad = None
    for Xj, yj in zip(torch.split(X, list(sizes)), torch.split(y, list(sizes))):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum") / B).backward()
    return w.grad.clone()


RUNNING["split"] = _split


@pytest.mark.parametrize("how", sorted(FIRST_OF_SIZE))
@pytest.mark.parametrize("stale", [False, True])
def test_offsets_at_a_sizes_first_batch_are_named(how, stale):
    result = microbatch.check_accumulated_grad(FIRST_OF_SIZE[how], np.random.default_rng(11),
                                               stale=stale)
    assert not result.passed, how
    assert result.misconception == "wrong-offsets", result.message
    assert "repeat" in result.message and "never used" in result.message, result.message


@pytest.mark.parametrize("how", sorted(LAST_OF_SIZE))
@pytest.mark.parametrize("stale", [False, True])
@pytest.mark.parametrize("seed", [11, 3])
def test_offsets_at_a_sizes_last_batch_are_named(how, stale, seed):
    result = microbatch.check_accumulated_grad(LAST_OF_SIZE[how], np.random.default_rng(seed),
                                               stale=stale)
    assert not result.passed, how
    assert result.misconception == "wrong-offsets", result.message
    assert "last micro-batch" in result.message and "never used" in result.message, \
        result.message


@pytest.mark.parametrize("how", sorted(RUNNING))
def test_a_running_offset_passes(how):
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(RUNNING[how], np.random.default_rng(11),
                                                 stale=stale).passed


def test_j_times_size_keeps_its_offsets_text():
    result = microbatch.check_accumulated_grad(_micro(lambda s, j, bj: j * bj),
                                               np.random.default_rng(11), stale=False)
    assert result.misconception == "wrong-offsets", result.message
    assert "j times its own size" in result.message, result.message


# --- q3: a float32 backward -------------------------------------------------------------------


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


def _grad(x):
    A, S = x.abs().sum(), (x ** 3).sum()
    return 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2


def _one_fraction(x):
    A, S = x.abs().sum(), (x ** 3).sum()
    return (3 * x * x * (1 + A) - S * torch.sgn(x)) / (1 + A) ** 2


FLOAT32 = {
    "float-then-cast": _op(lambda x, g: g * _grad(x.float()).to(x.dtype)),  # zn's student_04
    "to-float32-one-fraction": _op(lambda x, g: (g.float() * _one_fraction(
        x.to(torch.float32))).double()),
    "tensor-without-dtype": _op(lambda x, g: g * _grad(torch.tensor(x.tolist()))),
    "float32-constant": _op(lambda x, g: g * (torch.tensor(3.0) * x.float() ** 2 / (
        1 + x.float().abs().sum()) - (x.float() ** 3).sum() * torch.sign(x.float()) / (
        1 + x.float().abs().sum()) ** 2).to(torch.float64)),
}
FLOAT64 = {
    "float64": _op(lambda x, g: g * _grad(x)),
    "one-fraction": _op(lambda x, g: g * _one_fraction(x)),
    "float64-tensor": _op(lambda x, g: g * torch.tensor(_grad(x).tolist(),
                                                         dtype=torch.float64)),
}


@pytest.mark.parametrize("how", sorted(FLOAT32))
def test_a_float32_backward_is_named(how):
    result = gradcheck.check_backward(FLOAT32[how], np.random.default_rng(11))
    assert not result.passed, how
    assert result.misconception == "low-precision", result.message
    assert "float64" in result.message and "gradcheck" in result.message, result.message


@pytest.mark.parametrize("how", sorted(FLOAT64))
def test_a_float64_backward_passes(how):
    for seed in (0, 11):
        assert gradcheck.check_backward(FLOAT64[how], np.random.default_rng(seed)).passed


def test_a_wrong_formula_is_not_named_low_precision():
    op = _op(lambda x, g: g * (_grad(x) * (1 + 1e-6)))
    result = gradcheck.check_backward(op, np.random.default_rng(11))
    assert not result.passed
    assert result.misconception != "low-precision", result.message


def test_a_bfloat16_backward_is_named_for_its_dtype():
    op = _op(lambda x, g: g * _grad(x.to(torch.bfloat16)).to(x.dtype))
    result = gradcheck.check_backward(op, np.random.default_rng(11))
    assert result.misconception == "low-precision", result.message
    assert "bfloat16" in result.message, result.message


def test_finite_differences_in_float64_are_not_named_low_precision():
    def numeric(x, g):
        eps, out = 1e-5, torch.empty_like(x)
        for i in range(x.numel()):
            e = torch.zeros_like(x).reshape(-1)
            e[i] = eps
            e = e.reshape(x.shape)
            f = lambda v: (v ** 3).sum() / (1 + v.abs().sum())  # noqa: E731
            out.reshape(-1)[i] = (f(x + e) - f(x - e)) / (2 * eps)
        return g * out
    result = gradcheck.check_backward(_op(numeric), np.random.default_rng(11))
    assert result.misconception != "low-precision", result.message
