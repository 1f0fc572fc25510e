"""Blind round zh's porting classes that lost points unnamed, each with the variants a student
writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg`` whose loss is divided by a constant, not by ``len(X)`` (the notebook's
  global ``m = 200``, a hard-coded 200, the global data's row count, ``X.shape[1]``):
  ``loss-divided-by-wrong-count``;
- q3: ``MyOp`` whose ``A`` is ``torch.linalg.norm(x, 1)`` (a matrix norm for a 2-D x), or
  another matrix norm: ``matrix-norm``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import gradcheck, logreg

# --- q1: the loss divided by a constant ---------------------------------------------------------

X_GLOBAL = torch.zeros(200, 5)  # the notebook's data cell: m = 200 rows
m = 200


def _train(loss_of):
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = loss_of(X, y, X @ w + b)
            losses.append(loss.item())
            w.grad = b.grad = None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses

    return train_logreg


def _bce(z, y):
    return F.binary_cross_entropy_with_logits(z, y, reduction="none")


DIVIDED = {
    "sum-over-global-m": _train(  # blind round zh's porting/student_02
        lambda X, y, z: F.binary_cross_entropy_with_logits(z, y, reduction="sum") / m),
    "sum-over-200": _train(lambda X, y, z: _bce(z, y).sum() / 200),
    "global-data-rows": _train(lambda X, y, z: _bce(z, y).sum() / X_GLOBAL.shape[0]),
    "by-hand-over-150": _train(
        lambda X, y, z: -(y * F.logsigmoid(z) + (1 - y) * F.logsigmoid(-z)).sum() / 150.0),
    "over-columns": _train(lambda X, y, z: _bce(z, y).sum() / X.shape[1]),
}
RIGHT = {
    "sum-over-len": _train(lambda X, y, z: _bce(z, y).sum() / len(X)),
    "mean": _train(lambda X, y, z: _bce(z, y).mean()),
}


@pytest.mark.parametrize("part", ["losses", "params"])
@pytest.mark.parametrize("how", sorted(DIVIDED))
def test_a_loss_divided_by_a_constant_is_named(how, part):
    result = logreg.check_train_logreg(DIVIDED[how], np.random.default_rng(0), part=part)
    assert not result.passed, how
    assert result.misconception == "loss-divided-by-wrong-count", result.message
    assert "len(X)" in result.message, result.message
    if how != "over-columns":
        assert "M = 200" in result.message or "M = 150" in result.message, result.message
        assert "global" in result.message, result.message


@pytest.mark.parametrize("how", sorted(RIGHT))
def test_a_loss_divided_by_the_rows_passes(how):
    for part in ("losses", "params"):
        assert logreg.check_train_logreg(RIGHT[how], np.random.default_rng(0), part=part).passed


@pytest.mark.parametrize("part", ["losses", "params"])
def test_a_mean_loss_halved_is_not_named_a_count(part):
    halved = _train(lambda X, y, z: 0.5 * _bce(z, y).mean())  # M = 2m on every data set
    result = logreg.check_train_logreg(halved, np.random.default_rng(0), part=part)
    assert not result.passed
    assert result.misconception != "loss-divided-by-wrong-count", result.message


def test_a_loss_divided_by_a_constant_is_named_in_the_regimes():
    from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes

    result = check_train_logreg_regimes(DIVIDED["sum-over-global-m"], np.random.default_rng(11))
    assert not result.passed
    assert result.misconception == "loss-divided-by-wrong-count", result.message
    assert "M = 200" in result.message, result.message


def test_a_summed_loss_keeps_its_name():
    summed = _train(lambda X, y, z: _bce(z, y).sum())
    result = logreg.check_train_logreg(summed, np.random.default_rng(0), part="losses")
    assert result.misconception == "sum-not-mean", result.message


def test_a_constant_with_another_mistake_is_not_named_a_count():
    def not_cleared(X, y, lr=0.5, steps=300):  # / 200 and gradients never cleared
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for _ in range(steps):
            loss = _bce(X @ w + b, y).sum() / 200
            losses.append(loss.item())
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses

    result = logreg.check_train_logreg(not_cleared, np.random.default_rng(0), part="losses")
    assert not result.passed
    assert result.misconception != "loss-divided-by-wrong-count", result.message


# --- q3: a matrix norm for sum |x| ----------------------------------------------------------------


def _op(norm):
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + norm(x))

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            S, A = (x ** 3).sum(), norm(x)
            return grad_output * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)

    return Op


NORMS = {
    "linalg-norm-1": _op(lambda x: torch.linalg.norm(x, 1)),  # blind round zh's student_04
    "linalg-norm-ord-1": _op(lambda x: torch.linalg.norm(x, ord=1)),
    "numpy-norm-1": _op(lambda x: torch.as_tensor(np.linalg.norm(x.detach().numpy(), 1))),
    "linalg-norm-1-0d-safe": _op(lambda x: torch.linalg.norm(x.reshape(-1), 1) if x.dim() < 2
                                 else torch.linalg.norm(x, 1)),
    "matrix-norm": _op(lambda x: torch.linalg.matrix_norm(x, 1) if x.dim() == 2
                       else x.abs().sum()),
}
VECTOR = {  # legal
    "vector-norm": _op(lambda x: torch.linalg.vector_norm(x, 1)),
    "norm-p1": _op(lambda x: torch.norm(x, p=1)),
    "abs-sum": _op(lambda x: x.abs().sum()),
}


@pytest.mark.parametrize("how", sorted(NORMS))
def test_a_matrix_norm_for_the_sum_of_abs_is_named(how):
    op = NORMS[how]
    for result in (gradcheck.check_forward(op.apply, op, np.random.default_rng(0)),
                   gradcheck.check_backward(op, np.random.default_rng(0))):
        assert not result.passed, how
        assert result.misconception == "matrix-norm", result.message
        assert "vector_norm(x, 1)" in result.message and "x.abs().sum()" in result.message


@pytest.mark.parametrize("how", sorted(VECTOR))
def test_a_vector_norm_passes(how):
    op = VECTOR[how]
    assert gradcheck.check_forward(op.apply, op, np.random.default_rng(0)).passed
    assert gradcheck.check_backward(op, np.random.default_rng(0)).passed


def test_a_wrong_op_of_another_kind_is_not_named_a_matrix_norm():
    op = _op(lambda x: x.sum().abs())  # |sum x|, not sum |x|
    result = gradcheck.check_forward(op.apply, op, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception != "matrix-norm", result.message
