"""Blind round zm's porting classes that kept full marks, each with the variants a student
writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg`` on mini-batches (or a row subset) once X has many rows: ``mini-batches``;
- q2: ``accumulated_grad`` whose loss is built from exp(z), which overflows in float32:
  ``exp-overflow``;
- q3: ``check_my_op`` that flattens its float64 copy of x: ``checked-flattened``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import microbatch, selfcheck_at_x
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes

# --- q1: mini-batches ---------------------------------------------------------------------------


def _train(rows_of, record_all=False):
    def train_logreg(X, y, lr=0.5, steps=300):
        w = torch.zeros(X.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        losses = []
        for step in range(steps):
            at = rows_of(step, X.shape[0])
            loss = F.binary_cross_entropy_with_logits(X[at] @ w + b, y[at])
            if record_all:
                with torch.no_grad():
                    losses.append(F.binary_cross_entropy_with_logits(X @ w + b, y).item())
            else:
                losses.append(loss.item())
            w.grad = None
            b.grad = None
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
        return w, b, losses
    return train_logreg


def _cycling(k):  # blind round zm's student_02 at k = 256
    return lambda s, m: slice((s * k) % m, (s * k) % m + k) if m > k else slice(None)


def _per_epoch(k):
    return lambda s, m: slice((s % -(-m // k)) * k, (s % -(-m // k) + 1) * k)


BATCHED = {
    "cycling-256": _train(_cycling(256)),
    "cycling-128": _train(_cycling(128)),
    "per-epoch-64": _train(_per_epoch(64)),
    "first-256-rows": _train(lambda s, m: slice(0, 256)),
    "first-100-rows-recorded-on-all": _train(lambda s, m: slice(0, 100), record_all=True),
    # once legal here, as every draw fitted in one batch: the regimes now draw 1100-2100
    # rows too (red team rt-10)
    "cycling-1024": _train(_cycling(1024)),
}
FULL = {  # legal
    "all-rows": _train(lambda s, m: slice(None)),
    "all-rows-by-index": _train(lambda s, m: torch.arange(m)),
    "batch-of-4096": _train(_cycling(4096)),  # every draw fits in one batch
}


@pytest.mark.parametrize("how", sorted(BATCHED))
def test_mini_batches_are_named(how):
    result = check_train_logreg_regimes(BATCHED[how], np.random.default_rng(11))
    assert not result.passed, how
    assert result.misconception == "mini-batches", result.message
    assert "every row" in result.message, result.message


@pytest.mark.parametrize("how", sorted(FULL))
def test_full_batch_passes(how):
    for seed in (0, 11):
        assert check_train_logreg_regimes(FULL[how], np.random.default_rng(seed)).passed


# --- q2: exp(z) overflows -----------------------------------------------------------------------


def _micro(loss_of):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B = sum(sizes)
        for Xj, yj in zip(torch.split(X, list(sizes)), torch.split(y, list(sizes))):
            z = Xj @ w
            (loss_of(z, yj).mean() * len(yj) / B).backward()
        return w.grad.clone()
    return accumulated_grad


OVERFLOWING = {
    "log1p-exp": _micro(lambda z, y: torch.log1p(torch.exp(z)) - y * z),  # student_03
    "log-1-plus-exp": _micro(lambda z, y: torch.log(1 + torch.exp(z)) - y * z),
    "log1p-exp-minus": _micro(lambda z, y: torch.log1p(torch.exp(-z)) + (1 - y) * z),
    "minus-log-sigmoid": _micro(lambda z, y: -(y * torch.log(torch.sigmoid(z))
                                               + (1 - y) * torch.log(torch.sigmoid(-z)))),
}
STABLE = {  # legal
    "with-logits": _micro(lambda z, y: F.binary_cross_entropy_with_logits(z, y,
                                                                           reduction="none")),
    "softplus": _micro(lambda z, y: F.softplus(-(2 * y - 1) * z)),
    "softplus-minus-yz": _micro(lambda z, y: F.softplus(z) - y * z),
    "logsigmoid": _micro(lambda z, y: -(y * F.logsigmoid(z) + (1 - y) * F.logsigmoid(-z))),
    "logaddexp": _micro(lambda z, y: torch.logaddexp(torch.zeros_like(z), z) - y * z),
}


@pytest.mark.parametrize("how", sorted(OVERFLOWING))
def test_an_overflowing_loss_is_named(how):
    for stale in (False, True):
        result = microbatch.check_accumulated_grad(OVERFLOWING[how], np.random.default_rng(0),
                                                   stale=stale)
        assert not result.passed, how
        assert result.misconception == "exp-overflow", result.message
        assert "88.7" in result.message and "with_logits" in result.message, result.message


@pytest.mark.parametrize("how", sorted(STABLE))
def test_a_stable_loss_passes(how):
    for stale in (False, True):
        for seed in (0, 11):
            assert microbatch.check_accumulated_grad(STABLE[how], np.random.default_rng(seed),
                                                     stale=stale).passed, how


def test_a_sigmoid_then_log_keeps_its_name():
    fn = _micro(lambda z, y: -(y * torch.log(torch.sigmoid(z))
                               + (1 - y) * torch.log(1 - torch.sigmoid(z))))
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(0), stale=False)
    assert result.misconception == "sigmoid-log", result.message


def test_a_finite_wrong_answer_is_not_named_overflow():
    def zeroed_large(z, y):  # drops the rows past 80 by a mask: finite, wrong
        return F.binary_cross_entropy_with_logits(z, y, reduction="none") * (z.abs() < 80)
    result = microbatch.check_accumulated_grad(_micro(zeroed_large), np.random.default_rng(0),
                                               stale=False)
    assert not result.passed and result.misconception != "exp-overflow", result.message


# --- q3: check_my_op at a flattened x -----------------------------------------------------------


def my_op(x):  # replaced by the stand-ins during each call (swap_globals)
    raise AssertionError("the check swaps in its own op")


def _check(copy_of):
    def check_my_op(x):
        return torch.autograd.gradcheck(my_op, (copy_of(x).requires_grad_(True),), eps=1e-6,
                                        atol=1e-8, raise_exception=False)
    return check_my_op


FLATTENED = {
    "flatten": _check(lambda x: x.detach().to(torch.float64).flatten().clone()),  # student_04
    "reshape": _check(lambda x: x.detach().double().reshape(-1).clone()),
    "view": _check(lambda x: x.detach().double().contiguous().view(-1).clone()),
    "ravel": _check(lambda x: torch.tensor(x.detach().reshape(-1).tolist(),
                                           dtype=torch.float64)),
    "numpy-ravel": _check(lambda x: torch.from_numpy(
        x.detach().float().numpy().astype(np.float64).ravel())),
}
AT_X = {  # legal
    "clone": _check(lambda x: x.detach().double().clone()),
    "to": _check(lambda x: x.detach().to(torch.float64)),
    "tolist": _check(lambda x: torch.tensor(x.detach().tolist(), dtype=torch.float64)),
    "reshape-back": _check(lambda x: x.detach().double().reshape(-1).reshape(x.shape).clone()),
}


@pytest.mark.parametrize("how", sorted(FLATTENED))
def test_a_flattened_check_is_named(how):
    for seed in (0, 11):
        result = selfcheck_at_x.check_check_my_op_at_x(FLATTENED[how],
                                                       np.random.default_rng(seed))
        assert not result.passed, how
        assert result.misconception == "checked-flattened", result.message
        assert "x.flatten()" in result.message, result.message


@pytest.mark.parametrize("how", sorted(AT_X))
def test_a_check_at_x_passes(how):
    for seed in (0, 11):
        assert selfcheck_at_x.check_check_my_op_at_x(AT_X[how],
                                                     np.random.default_rng(seed)).passed, how
