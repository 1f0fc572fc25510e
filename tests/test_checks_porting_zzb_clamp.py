"""Blind round zzb's q2 class: ``accumulated_grad`` clamping the logits at a bound that acts
only on some draw (``torch.clamp(Xj @ w, -50, 50)`` acts only on the overflow problem, a small
bound on the first draws): ``logits-clamped`` whatever the bound, told the range that fits;
correct answers, a clamp above every drawn logit and other named mistakes keep their verdicts.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import microbatch


def _micro(logits_of, loss_of=F.binary_cross_entropy_with_logits):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B, start = sum(sizes), 0
        for size in sizes:
            Xj, yj = X[start:start + size], y[start:start + size]
            (loss_of(logits_of(Xj @ w), yj) * size / B).backward()
            start += size
        return w.grad.clone()
    return accumulated_grad


def _in_place(z):
    return z.clamp_(-60.0, 60.0)


CLAMPED = {
    "clamp-50": _micro(lambda z: torch.clamp(z, min=-50.0, max=50.0)),  # zzb's student_01
    "clamp-88-in-place": _micro(lambda z: z.clamp_(-88.0, 88.0)),
    "clamp-60-in-place": _micro(_in_place),
    "where-50": _micro(lambda z: torch.where(z.abs() > 50, 50 * torch.sign(z), z)),
    "minmax-80": _micro(lambda z: torch.minimum(torch.maximum(z, torch.tensor(-80.0)),
                                                torch.tensor(80.0))),
    "clamp-33": _micro(lambda z: z.clamp(-33, 33)),
    "clamp-8": _micro(lambda z: z.clamp(-8, 8)),
    "clamp-3": _micro(lambda z: z.clamp(-3, 3)),
    "max-only-50": _micro(lambda z: z.clamp(max=50.0)),
}
CORRECT = {
    "with-logits": _micro(lambda z: z),
    "clamp-100": _micro(lambda z: z.clamp(-100, 100)),  # above every drawn logit: never acts
    "clamp-1e4": _micro(lambda z: torch.clamp(z, -1e4, 1e4)),
    "logsigmoid": _micro(lambda z: z, lambda z, y: -(y * F.logsigmoid(z)
                                                     + (1 - y) * F.logsigmoid(-z)).mean()),
}
SEEDS = (0, 1, 2, 3)


@pytest.mark.parametrize("how", sorted(CLAMPED))
def test_a_clamp_at_any_bound_is_named(how):
    for seed in SEEDS:
        result = microbatch.check_accumulated_grad(CLAMPED[how], np.random.default_rng(seed),
                                                   stale=seed % 2 == 1)
        assert not result.passed, (how, seed)
        assert result.misconception == "logits-clamped", (how, seed, result.message)
        assert "with_logits" in result.message and "fits" in result.message


def test_the_bound_found_is_told():
    result = microbatch.check_accumulated_grad(CLAMPED["clamp-50"], np.random.default_rng(0),
                                               stale=False)
    assert "c = 50" in result.message, result.message
    assert "[-c, c]" in result.message


def test_a_one_sided_clamp_is_told_so():
    for seed in SEEDS:
        result = microbatch.check_accumulated_grad(CLAMPED["max-only-50"],
                                                   np.random.default_rng(seed), stale=False)
        assert "clamp(max=c)" in result.message, result.message


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_right_answers_and_a_clamp_that_never_acts_pass(how):
    for seed in SEEDS:
        for stale in (False, True):
            result = microbatch.check_accumulated_grad(CORRECT[how],
                                                       np.random.default_rng(seed), stale=stale)
            assert result.passed, (how, seed, result.message)


def test_other_named_mistakes_keep_their_names():
    sigmoid_log = _micro(lambda z: z, lambda z, y: F.binary_cross_entropy(torch.sigmoid(z), y))
    exp_form = _micro(lambda z: z, lambda z, y: (torch.log1p(torch.exp(z)) - y * z).mean())
    for seed in SEEDS:
        rng = np.random.default_rng
        assert microbatch.check_accumulated_grad(sigmoid_log, rng(seed), stale=False
                                                 ).misconception == "sigmoid-log"
        assert microbatch.check_accumulated_grad(exp_form, rng(seed), stale=False
                                                 ).misconception == "exp-overflow"


def test_zeros_and_rows_dropped_by_position_are_not_named_clamped():
    def zeros(w, X, y, sizes):
        return torch.zeros_like(w)

    def last_row_skipped(w, X, y, sizes):
        w.grad = None
        B, start = sum(sizes), 0
        for size in sizes:
            Xj, yj = X[start:start + size - 1], y[start:start + size - 1]
            (F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum") / B).backward()
            start += size
        return w.grad

    for fn in (zeros, last_row_skipped):
        for seed in SEEDS:
            result = microbatch.check_accumulated_grad(fn, np.random.default_rng(seed),
                                                       stale=False)
            assert not result.passed
            assert result.misconception != "logits-clamped", result.message
