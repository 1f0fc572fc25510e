"""Blind round zj's porting classes that lost points unnamed, each with the variants a student
writes and the near-misses that must keep their verdicts:

- q2: ``accumulated_grad`` that clamps the logits to [-c, c] before the loss ("keep the logits
  in a safe range"): ``logits-clamped``;
- q3: ``MyOp`` whose backward sums S and A along one dimension (``dim=-1, keepdim=True``)
  while the forward sums over all of x: ``sum-over-one-dim``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import gradcheck, microbatch

# --- q2: the logits clamped ---------------------------------------------------------------------


def _micro(logits_of, loss_of=F.binary_cross_entropy_with_logits):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B, start = sum(sizes), 0
        for size in sizes:
            Xj, yj = X[start:start + size], y[start:start + size]
            (loss_of(logits_of(Xj @ w), yj) * size / B).backward()
            start += size
        return w.grad
    return accumulated_grad


def _clamped_in_place(z):
    return z.clamp_(-15.0, 15.0)


def _logsigmoid(z, y):
    return -(y * F.logsigmoid(z) + (1 - y) * F.logsigmoid(-z)).mean()


CLAMPED = {
    "clamp-20": _micro(lambda z: torch.clamp(z, -20.0, 20.0)),  # blind round zj's student_03
    "clamp-15-in-place": _micro(_clamped_in_place),
    "clip-10": _micro(lambda z: torch.clip(z, min=-10, max=10)),
    "clamp-30": _micro(lambda z: z.clamp(-30, 30)),
    "clamp-20-logsigmoid": _micro(lambda z: z.clamp(-20, 20), _logsigmoid),
    "minmax-20": _micro(lambda z: torch.minimum(torch.maximum(z, torch.tensor(-20.0)),
                                                torch.tensor(20.0))),
}
NOT_CLAMPED = {  # legal
    "with-logits": _micro(lambda z: z),
    "clamp-100": _micro(lambda z: z.clamp(-100, 100)),  # nothing reaches it
    "logsigmoid": _micro(lambda z: z, _logsigmoid),
}


@pytest.mark.parametrize("how", sorted(CLAMPED))
def test_clamped_logits_are_named(how):
    for stale in (False, True):
        result = microbatch.check_accumulated_grad(CLAMPED[how], np.random.default_rng(0),
                                                   stale=stale)
        assert not result.passed, how
        assert result.misconception == "logits-clamped", result.message
        assert "clamp" in result.message and "with_logits" in result.message, result.message


@pytest.mark.parametrize("how", sorted(NOT_CLAMPED))
def test_logits_left_as_they_are_pass(how):
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(NOT_CLAMPED[how], np.random.default_rng(0),
                                                 stale=stale).passed


def test_a_sigmoid_then_log_keeps_its_name():
    fn = _micro(lambda z: z, lambda z, y: F.binary_cross_entropy(torch.sigmoid(z), y))
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=False)
    assert result.misconception == "sigmoid-log", result.message


def test_rows_dropped_by_position_are_not_named_clamped():
    def first_row_skipped(w, X, y, sizes):  # drops each micro-batch's first row, whatever z
        w.grad = None
        B, start = sum(sizes), 0
        for size in sizes:
            Xj, yj = X[start + 1:start + size], y[start + 1:start + size]
            (F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum") / B).backward()
            start += size
        return w.grad

    result = microbatch.check_accumulated_grad(first_row_skipped, np.random.default_rng(0),
                                               stale=False)
    assert not result.passed
    assert result.misconception != "logits-clamped", result.message


def test_a_clamp_only_on_the_saturated_draw_is_not_named():
    calls = []

    def clamped_once(w, X, y, sizes):  # clamps on one call only: the second draw disagrees
        calls.append(1)
        fn = CLAMPED["clamp-20"] if len(calls) == 7 else NOT_CLAMPED["with-logits"]
        return fn(w, X, y, sizes)

    result = microbatch.check_accumulated_grad(clamped_once, np.random.default_rng(0),
                                               stale=False)
    assert not result.passed
    assert result.misconception != "logits-clamped", result.message


# --- q3: S and A summed along one dimension -------------------------------------------------------


def _op(sums):
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            S, A = sums(x)
            return grad_output * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)

    return Op


PER_DIM = {
    "dim-1-keepdim": _op(lambda x: ((x ** 3).sum(dim=-1, keepdim=True),  # blind zj student_04
                                    x.abs().sum(dim=-1, keepdim=True))),
    "dim1-keepdim": _op(lambda x: ((x ** 3).sum(dim=x.dim() - 1, keepdim=True),
                                   x.abs().sum(dim=x.dim() - 1, keepdim=True))),
    "dim0-keepdim": _op(lambda x: ((x ** 3).sum(dim=0, keepdim=True) if x.dim() else x ** 3,
                                   x.abs().sum(dim=0, keepdim=True) if x.dim() else x.abs())),
    "S-per-row": _op(lambda x: ((x ** 3).sum(dim=-1, keepdim=True), x.abs().sum())),
    "A-per-row": _op(lambda x: ((x ** 3).sum(), x.abs().sum(-1, keepdim=True))),
}
WHOLE = {  # legal
    "sum": _op(lambda x: ((x ** 3).sum(), x.abs().sum())),
    "sum-dims": _op(lambda x: ((x ** 3).sum(dim=tuple(range(x.dim()))),
                               x.abs().sum(dim=tuple(range(x.dim()))))),
}


@pytest.mark.parametrize("how", sorted(PER_DIM))
def test_sums_along_one_dim_are_named(how):
    op = PER_DIM[how]
    result = gradcheck.check_backward(op, np.random.default_rng(0))
    assert not result.passed, how
    assert result.misconception == "sum-over-one-dim", result.message
    assert "ALL entries" in result.message and ".sum()" in result.message, result.message


@pytest.mark.parametrize("how", sorted(WHOLE))
def test_sums_over_all_of_x_pass(how):
    op = WHOLE[how]
    assert gradcheck.check_backward(op, np.random.default_rng(0)).passed
    assert gradcheck.check_forward(op.apply, op, np.random.default_rng(0)).passed


def test_a_wrong_formula_per_row_is_not_named_one_dim():
    op = _op(lambda x: (x.sum(dim=-1, keepdim=True), x.abs().sum(dim=-1, keepdim=True)))
    result = gradcheck.check_backward(op, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception != "sum-over-one-dim", result.message


def test_a_quotient_slip_keeps_its_name():
    class Slip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            S, A = (x ** 3).sum(), x.abs().sum()
            return grad_output * (3 * x ** 2 / (1 + A) + S * torch.sign(x) / (1 + A) ** 2)

    result = gradcheck.check_backward(Slip, np.random.default_rng(0))
    assert result.misconception == "quotient-sign-flipped", result.message
