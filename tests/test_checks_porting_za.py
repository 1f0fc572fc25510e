"""Blind round za's porting classes that kept full marks or went unnamed, each with the variants
a student writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg``/``logreg_grads`` that mark the caller's X or y as requiring grad
  (``modified-input``, told that the data now requires grad and carries a ``.grad``);
- q2: ``accumulated_grad`` whose gradient buffer is made in a fixed dtype (``grad-dtype-fixed``,
  shown by a float64 problem drawn last);
- q4: ``predict`` that casts the batch to float32 (``batch-dtype-changed``, shown by a float64
  model drawn last);
- q3: ``check_my_op`` that adds gradgradcheck to gradcheck's verdict (``second-order-checked``,
  heard from the stand-in's backward run with grad mode on).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import (
    device_predict,
    logreg,
    logreg_grads,
    logreg_grads_trained,
    microbatch,
    selfcheck,
    selfcheck_at_x,
)

# --- q1: the caller's X (or y) made to require grad -------------------------------------------


def _train(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = b.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


def x_requires_grad_true(X, y, lr=0.5, steps=300):  # blind round za's porting/student_02
    X.requires_grad_(True)
    return _train(X, y, lr, steps)


def x_requires_grad_bare(X, y, lr=0.5, steps=300):
    X.requires_grad_()
    return _train(X, y, lr, steps)


def x_flag_assigned(X, y, lr=0.5, steps=300):
    X.requires_grad = True
    return _train(X, y, lr, steps)


def y_requires_grad(X, y, lr=0.5, steps=300):
    y.requires_grad_()
    return _train(X, y, lr, steps)


def detached_copy(X, y, lr=0.5, steps=300):  # legal: a copy of its own
    return _train(X.detach().requires_grad_(), y, lr, steps)


def cloned_copy(X, y, lr=0.5, steps=300):  # legal
    return _train(X.clone().requires_grad_(), y, lr, steps)


MARKED = {"X.requires_grad_(True)": x_requires_grad_true, "X.requires_grad_()": x_requires_grad_bare,
          "X.requires_grad = True": x_flag_assigned, "y.requires_grad_()": y_requires_grad}


@pytest.mark.parametrize("how", list(MARKED))
@pytest.mark.parametrize("part", ["losses", "params"])
def test_train_logreg_marking_the_callers_data_is_named(how, part):
    result = logreg.check_train_logreg(MARKED[how], np.random.default_rng(0), part=part)
    assert not result.passed, how
    assert result.misconception == "modified-input", result.message
    name = "y" if how.startswith("y") else "X"
    assert f"{name} now requires grad" in result.message, result.message
    assert ".grad" in result.message and "mark w and b" in result.message, result.message


@pytest.mark.parametrize("fn", [detached_copy, cloned_copy])
def test_train_logreg_on_its_own_copy_passes(fn):
    for part in ("losses", "params"):
        assert logreg.check_train_logreg(fn, np.random.default_rng(0), part=part).passed


def _closed(X, y, w, b):
    with torch.no_grad():
        r = torch.sigmoid(X @ w + b) - y
        return X.T @ r / X.shape[0], r.mean().reshape(b.shape)


def grads_marking_x(X, y, w, b):
    X.requires_grad_()
    loss = F.binary_cross_entropy_with_logits(X @ w.detach() + b.detach(), y)
    loss.backward()
    return _closed(X, y, w, b)


def grads_on_copy(X, y, w, b):
    Xc = X.clone().requires_grad_()
    F.binary_cross_entropy_with_logits(Xc @ w.detach() + b.detach(), y).backward()
    return _closed(X, y, w, b)


@pytest.mark.parametrize("check", [logreg_grads.check_logreg_grads,
                                   logreg_grads_trained.check_logreg_grads_trained])
def test_logreg_grads_marking_x_is_named(check):
    result = check(grads_marking_x, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception == "modified-input", result.message
    assert "X now requires grad" in result.message, result.message
    # a copy of its own leaves the caller's X alone; its backward is autograd all the same,
    # which the contract rules out in logreg_grads: asked under inference mode, it raises
    # (logreg_closed; red team rt-11), where the trained-point check does not ask so
    other = check(grads_on_copy, np.random.default_rng(0))
    assert other.passed or other.misconception == "autograd-used", other.message


# --- q2: a gradient buffer in a fixed dtype ---------------------------------------------------


def _accumulate(w, X, y, sizes, start):
    B, offset = sum(sizes), 0
    for size in sizes:
        Xj, yj = X[offset:offset + size], y[offset:offset + size]
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * size / B).backward()
        offset += size
    return w.grad.detach().clone()


def zeros_of_shape(w, X, y, sizes):  # blind round za's porting/student_03
    w.grad = torch.zeros(w.shape)
    return _accumulate(w, X, y, sizes, 0)


def zeros_of_n(w, X, y, sizes):
    w.grad = torch.zeros(X.shape[1])
    return _accumulate(w, X, y, sizes, 0)


def float32_accumulator(w, X, y, sizes):
    total, B, offset = torch.zeros(w.shape[0]), sum(sizes), 0
    for size in sizes:
        w.grad = None
        Xj, yj = X[offset:offset + size], y[offset:offset + size]
        F.binary_cross_entropy_with_logits(Xj @ w, yj).backward()
        total += w.grad * size / B
        offset += size
    return total


def answer_cast(w, X, y, sizes):
    w.grad = None
    return _accumulate(w, X, y, sizes, 0).float()


def zeros_like_w(w, X, y, sizes):  # legal
    w.grad = torch.zeros_like(w)
    return _accumulate(w, X, y, sizes, 0)


def zeros_in_ws_dtype(w, X, y, sizes):  # legal
    w.grad = torch.zeros(w.shape, dtype=w.dtype, device=w.device)
    return _accumulate(w, X, y, sizes, 0)


def unweighted(w, X, y, sizes):  # another mistake: keeps its name
    w.grad = torch.zeros_like(w)
    offset = 0
    for size in sizes:
        Xj, yj = X[offset:offset + size], y[offset:offset + size]
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) / len(sizes)).backward()
        offset += size
    return w.grad.detach().clone()


@pytest.mark.parametrize("fn", [zeros_of_shape, zeros_of_n, float32_accumulator, answer_cast])
@pytest.mark.parametrize("stale", [False, True])
def test_a_fixed_dtype_gradient_buffer_is_named(fn, stale):
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=stale)
    assert not result.passed, fn.__name__
    assert result.misconception == "grad-dtype-fixed", result.message
    assert "float64" in result.message and "zeros_like" in result.message, result.message


@pytest.mark.parametrize("fn", [zeros_like_w, zeros_in_ws_dtype])
def test_a_buffer_in_ws_dtype_passes(fn):
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=stale).passed


def test_another_microbatch_mistake_keeps_its_name():
    result = microbatch.check_accumulated_grad(unweighted, np.random.default_rng(0), stale=False)
    assert result.misconception == "unweighted-mean", result.message


# --- q4: the batch cast to float32 ------------------------------------------------------------


def _predict(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch)


def cast_float(model, batch, device):  # blind round za's porting/student_05
    return _predict(model, batch.to(device).float(), device)


def cast_to_float32(model, batch, device):
    return _predict(model, batch.to(device, torch.float32), device)


def cast_type(model, batch, device):
    return _predict(model, batch.type(torch.FloatTensor).to(device), device)


def cast_to_params_dtype(model, batch, device):  # legal
    dtype = next(model.parameters()).dtype
    return _predict(model, batch.to(device=device, dtype=dtype), device)


def moved_only(model, batch, device):  # legal
    return _predict(model, batch.to(device), device)


@pytest.mark.parametrize("fn", [cast_float, cast_to_float32, cast_type])
def test_a_batch_cast_to_float32_is_named(fn):
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert not result.passed, fn.__name__
    assert result.misconception == "batch-dtype-changed", result.message
    assert "float64" in result.message and "model" in result.message, result.message


@pytest.mark.parametrize("fn", [cast_to_params_dtype, moved_only])
def test_a_batch_only_moved_passes(fn):
    for moved in (False, True):
        assert device_predict.check_predict(fn, np.random.default_rng(0), moved=moved).passed


# --- q3: gradgradcheck added to gradcheck's verdict -------------------------------------------


def my_op(x):  # replaced by the stand-ins during each call (swap_globals)
    raise AssertionError("the check swaps in its own op")


def with_gradgradcheck(x):  # blind round za's porting/student_04
    leaf = x.detach().double().requires_grad_()
    first = torch.autograd.gradcheck(my_op, (leaf,), eps=1e-6, atol=1e-8, raise_exception=False)
    second = torch.autograd.gradgradcheck(my_op, (leaf,), eps=1e-6, atol=1e-8,
                                          raise_exception=False)
    return first and second


def both_by_all(x):
    leaf = x.detach().to(torch.float64).requires_grad_(True)
    return all(check(my_op, (leaf,), eps=1e-6, atol=1e-8, raise_exception=False)
               for check in (torch.autograd.gradcheck, torch.autograd.gradgradcheck))


def with_batched_grad(x):  # legal: batched grad needs no double backward
    leaf = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(my_op, (leaf,), eps=1e-6, atol=1e-8, raise_exception=False,
                                     check_batched_grad=True)


def loosened(x):  # another mistake: keeps its own name
    leaf = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(my_op, (leaf,), eps=1e-6, atol=1e-8, rtol=1e-2,
                                     raise_exception=False)


@pytest.mark.parametrize("fn", [with_gradgradcheck, both_by_all])
@pytest.mark.parametrize("check", [selfcheck.check_check_my_op,
                                   selfcheck_at_x.check_check_my_op_at_x])
def test_a_second_order_check_is_named(fn, check):
    result = check(fn, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception == "second-order-checked", result.message
    assert "gradgradcheck" in result.message and "first derivative" in result.message


def test_batched_grad_passes_and_a_loosened_check_keeps_its_name():
    for check in (selfcheck.check_check_my_op, selfcheck_at_x.check_check_my_op_at_x):
        assert check(with_batched_grad, np.random.default_rng(0)).passed
    result = selfcheck_at_x.check_check_my_op_at_x(loosened, np.random.default_rng(0))
    assert result.misconception != "second-order-checked", result.message
