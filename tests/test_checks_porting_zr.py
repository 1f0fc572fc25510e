"""Blind round zr's porting classes that kept full marks, each with the variants a student
writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg`` that caches its runs by the arguments' metadata (shape, dtype, lr,
  steps, id()) and hands a later problem of the same key the first one's answer
  (``answer-cached``);
- q2: ``accumulated_grad`` that sums ``torch.autograd.grad`` in an accumulator of its own and
  leaves a stale ``w.grad`` as it arrived (``stale-grad-left``);
- q4: ``predict`` that drops the output dimension of a one-output model (``output-squeezed``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import device_predict, logreg, microbatch

# --- q1: an answer cached by the arguments' metadata ------------------------------------------


def _run(X, y, lr, steps):
    w = torch.zeros(X.shape[1], dtype=X.dtype, requires_grad=True)
    b = torch.zeros(1, dtype=X.dtype, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = b.grad = None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w, b, losses


def _memoised(key_of, copy=False):
    cache = {}

    def train_logreg(X, y, lr=0.5, steps=300):
        key = key_of(X, y, lr, steps)
        if key not in cache:
            cache[key] = _run(X, y, lr, steps)
        w, b, losses = cache[key]
        return (w.detach().clone(), b.detach().clone(), list(losses)) if copy else (w, b, losses)
    return train_logreg


CACHED = {  # blind round zr's porting/student_02 first
    "shape-lr-steps": _memoised(lambda X, y, lr, steps: (tuple(X.shape), lr, steps)),
    "size-dtype": _memoised(lambda X, y, lr, steps: (X.size(), X.dtype, y.shape, lr, steps)),
    "str-shape": _memoised(lambda X, y, lr, steps: f"{list(X.shape)}-{lr}-{steps}", copy=True),
    "numel": _memoised(lambda X, y, lr, steps: (X.numel(), X.shape[1], float(lr), int(steps))),
}
BY_VALUES = {  # legal: keyed by the data's values
    "bytes": _memoised(lambda X, y, lr, steps: (X.numpy().tobytes(), y.numpy().tobytes(), lr,
                                                steps), copy=True),
    "none": lambda X, y, lr=0.5, steps=300: _run(X, y, lr, steps),
}


@pytest.mark.parametrize("how", list(CACHED))
@pytest.mark.parametrize("part", ["losses", "params"])
def test_an_answer_cached_by_shape_is_named(how, part):
    result = logreg.check_train_logreg(CACHED[how], np.random.default_rng(0), part=part)
    assert not result.passed, how
    assert result.misconception == "answer-cached", result.message
    assert "not only their shape" in result.message, result.message


@pytest.mark.parametrize("how", list(BY_VALUES))
def test_an_answer_cached_by_values_passes(how):
    for part in ("losses", "params"):
        assert logreg.check_train_logreg(BY_VALUES[how], np.random.default_rng(0),
                                         part=part).passed


def test_a_wrong_run_of_the_same_shape_is_not_named_cached():
    def fixed_lr(X, y, lr=0.5, steps=300):  # another mistake: the lr ignored
        return _run(X, y, 0.5, steps)
    result = logreg.check_train_logreg(fixed_lr, np.random.default_rng(0), part="losses")
    assert not result.passed and result.misconception != "answer-cached"


# --- q2: the stale grad left in w.grad --------------------------------------------------------


def bce(w, Xj, yj):
    return F.binary_cross_entropy_with_logits(Xj @ w, yj)


def own_total(w, X, y, sizes):  # blind round zr's porting/student_03
    B, start, total = sum(sizes), 0, torch.zeros_like(w)
    for bj in sizes:
        total += torch.autograd.grad(bce(w, X[start:start + bj], y[start:start + bj]) * (bj / B),
                                     w)[0]
        start += bj
    return total


def own_list(w, X, y, sizes):
    B = sum(sizes)
    grads = [torch.autograd.grad(bce(w, Xj, yj) * len(yj) / B, w)[0]
             for Xj, yj in zip(X.split(sizes), y.split(sizes))]
    return torch.stack(grads).sum(0)


def on_a_copy(w, X, y, sizes):
    v = w.detach().clone().requires_grad_()
    B = sum(sizes)
    for Xj, yj in zip(X.split(sizes), y.split(sizes)):
        (bce(v, Xj, yj) * len(yj) / B).backward()
    return v.grad


def copied_back(w, X, y, sizes):  # legal: the result copied into w.grad
    w.grad = own_total(w, X, y, sizes)
    return w.grad.clone()


def cleared_then_grad(w, X, y, sizes):  # legal: w.grad cleared, the answer returned
    w.grad = None
    return own_total(w, X, y, sizes)


def by_backward(w, X, y, sizes):  # legal
    w.grad = None
    B = sum(sizes)
    for Xj, yj in zip(X.split(sizes), y.split(sizes)):
        (bce(w, Xj, yj) * len(yj) / B).backward()
    return w.grad


@pytest.mark.parametrize("fn", [own_total, own_list, on_a_copy])
def test_a_stale_grad_left_in_w_grad_is_named(fn):
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=True)
    assert not result.passed, fn.__name__
    assert result.misconception == "stale-grad-left", result.message
    assert "optimizer" in result.message and "backward()" in result.message, result.message


@pytest.mark.parametrize("fn", [own_total, copied_back, cleared_then_grad, by_backward])
def test_without_a_stale_grad_or_with_w_grad_handled_it_passes(fn):
    assert microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=False).passed
    if fn is not own_total:
        assert microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=True).passed


# --- q4: a one-output model's output squeezed -------------------------------------------------


def _predict(after):
    def predict(model, batch, device):
        model.to(device).eval()
        with torch.no_grad():
            return after(model(batch.to(device)))
    return predict


SQUEEZED = {  # blind round zr's porting/student_05 first
    "squeeze-1": _predict(lambda out: out.squeeze(-1)),
    "squeeze-dim1": _predict(lambda out: out.squeeze(1)),
    "view": _predict(lambda out: out.view(-1) if out.shape[-1] == 1 else out),
    "column": _predict(lambda out: out[:, 0] if out.shape[-1] == 1 else out),
}


@pytest.mark.parametrize("how", list(SQUEEZED))
@pytest.mark.parametrize("moved", [False, True])
def test_a_squeezed_output_is_named(how, moved):
    result = device_predict.check_predict(SQUEEZED[how], np.random.default_rng(0), moved=moved)
    assert not result.passed, how
    assert result.misconception == "output-squeezed", result.message
    assert "(n, 1) becomes (n,)" in result.message, result.message


def test_the_output_as_it_is_passes():
    for moved in (False, True):
        assert device_predict.check_predict(_predict(lambda out: out), np.random.default_rng(0),
                                            moved=moved).passed


def test_a_wrong_one_output_answer_is_not_named_squeezed():
    result = device_predict.check_predict(_predict(
        lambda out: (out + 1).squeeze(-1) if out.shape[-1] == 1 else out),
        np.random.default_rng(0), moved=False)
    assert not result.passed and result.misconception != "output-squeezed", result.message
