"""Blind round zx's q3 class: ``MyOp.backward`` with sign(x) smoothed to keep it finite at 0
(``x / (x.abs() + 1e-6)``, ``x / sqrt(x**2 + eps)``, ``tanh(k*x)``, softsign), off by a
little at every entry, most where |x| is smallest. It was told ``abs-derivative-wrong-in-region``
with "d|x|/dx taken as 1.00, but ... 1 there": now ``sign-smoothed``, confirmed by one more
call at an x of very different magnitudes. Near-misses keep their verdicts: sign(x) exact away
from 0 (``torch.sign``, ``x / x.abs()``, ``x / x.abs().clamp(min=eps)``) passes, a derivative
of |x| truly wrong on a region keeps ``abs-derivative-wrong-in-region``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import gradcheck
from autograder.checks.porting.gradcheck_mistakes import diagnose_backward, wrong_on_region

SEEDS = (0, 1, 2, 3, 11)


def _op(d_abs):
    """A student's MyOp whose backward takes ``d_abs(x)`` as the derivative of |x|."""
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            S, A = (x ** 3).sum(), x.abs().sum()
            return grad_output * (3 * x ** 2 / (1 + A) - S * d_abs(x) / (1 + A) ** 2)
    return MyOp


class Blind(torch.autograd.Function):
    """Blind round zx's student_01, as written."""

    @staticmethod
    def forward(ctx, x):
        S = (x ** 3).sum()
        A = x.abs().sum()
        ctx.save_for_backward(x)
        return S / (1 + A)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        S = (x ** 3).sum()
        A = x.abs().sum()
        # d|x|/dx = x / |x|; the small epsilon keeps it finite at x = 0
        sign = x / (x.abs() + 1e-6)
        grad = 3 * x ** 2 / (1 + A) - S * sign / (1 + A) ** 2
        return grad_output * grad


SMOOTHED = {
    "abs-plus-eps": _op(lambda x: x / (x.abs() + 1e-6)),
    "torch-abs-plus-1e-4": _op(lambda x: x / (torch.abs(x) + 1e-4)),
    "abs-plus-1e-3": _op(lambda x: x / (x.abs() + 1e-3)),
    "sqrt-square-plus-eps": _op(lambda x: x / torch.sqrt(x ** 2 + 1e-8)),
    "sqrt-square-plus-1e-6": _op(lambda x: x / (x * x + 1e-6).sqrt()),
    "tanh-10x": _op(lambda x: torch.tanh(10 * x)),
    "tanh-3x": _op(lambda x: torch.tanh(3 * x)),
    "softsign": _op(lambda x: F.softsign(1e3 * x)),
    "softsign-by-hand": _op(lambda x: 1e5 * x / (1 + (1e5 * x).abs())),
}

#: sign(x) exact away from 0, where the contract's inputs lie: each passes
EXACT = {
    "torch-sign": _op(torch.sign),
    "x-over-abs": _op(lambda x: x / x.abs()),
    "x-over-clamped-abs": _op(lambda x: x / x.abs().clamp(min=1e-6)),
    "x-over-clamp-min": _op(lambda x: x / torch.clamp_min(x.abs(), 1e-8)),
    "sgn": _op(torch.sgn),
    "copysign": _op(lambda x: torch.copysign(torch.ones_like(x), x)),
    "masks": _op(lambda x: (x > 0).to(x.dtype) - (x < 0).to(x.dtype)),
    # 1 to float64 for |x| >= 1e-4, the nearest entries graded (gradcheck_inputs.NEAR);
    # tanh(1e4 * x), 1 only from |x| >= 0.002, is near-zero-entries (below)
    "tanh-1e6x": _op(lambda x: torch.tanh(1e6 * x)),
}

#: A derivative of |x| truly wrong on a region, or everywhere: each keeps its name
WRONG = {
    "relu-mask": ("abs-derivative-wrong-in-region", _op(lambda x: (x > 0).to(x.dtype))),
    "negatives-mask": ("abs-derivative-wrong-in-region", _op(lambda x: -(x < 0).to(x.dtype))),
    "minus-one": ("abs-derivative-wrong-in-region", _op(lambda x: -torch.ones_like(x))),
    "one-everywhere": ("sign-dropped", _op(torch.ones_like)),
}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_blind_backward_is_told_a_smoothed_sign(seed):
    result = gradcheck.check_backward(Blind, np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception == "sign-smoothed", result.message
    assert "torch.sign(x)" in result.message and "smoothed" in result.message, result.message
    assert "wrong at every" not in result.message, result.message


@pytest.mark.parametrize("how", sorted(SMOOTHED))
def test_a_smoothed_sign_is_named_in_both_checks(how):
    """Wherever either check fails it (a small epsilon's error may stay within a draw's
    tolerance, and gradcheck's rtol=1e-3 passes most), it is named; the backward check fails
    it at some seed."""
    failed = 0
    for seed in SEEDS:
        for check in (gradcheck.check_backward, gradcheck.check_gradcheck):
            result = check(SMOOTHED[how], np.random.default_rng(seed))
            failed += check is gradcheck.check_backward and not result.passed
            if not result.passed:
                assert result.misconception == "sign-smoothed", (how, seed, result.message)
    assert failed, how


@pytest.mark.parametrize("how", sorted(EXACT))
def test_sign_exact_away_from_zero_passes(how):
    for seed in SEEDS:
        for check in (gradcheck.check_backward, gradcheck.check_gradcheck):
            result = check(EXACT[how], np.random.default_rng(seed))
            assert result.passed, (how, seed, result.message)
            assert result.misconception in (None, "nan-at-zero"), (how, result.message)


@pytest.mark.parametrize("how", sorted(WRONG))
def test_a_truly_wrong_derivative_of_abs_keeps_its_name(how):
    name, op = WRONG[how]
    for seed in SEEDS:
        for check in (gradcheck.check_backward, gradcheck.check_gradcheck):
            result = check(op, np.random.default_rng(seed))
            assert not result.passed and result.misconception == name, (how, result.message)


def _blind_grad(x, upstream):
    leaf = x.clone().requires_grad_()
    Blind.apply(leaf).backward(torch.tensor(upstream, dtype=x.dtype))
    return leaf.grad


def test_the_region_is_not_told_when_its_derivative_is_about_sign():
    """Blind round zx's evidence: right where |x| > 1, wrong at the one entry with |x| < 1,
    where the implied derivative of |x| is 0.999996: no "taken as 1.00, but ... 1 there"."""
    x = torch.tensor([1.7, -0.4, 2.3, -1.9], dtype=torch.float64)
    got = _blind_grad(x, 2.5)
    assert not torch.allclose(got, 2.5 * gradcheck.analytic_grad(x), rtol=1e-7, atol=1e-9)
    assert wrong_on_region(got, x, 2.5) is None
    name, told = diagnose_backward(got, x, 2.5)  # no call to confirm a smoothing: no name
    assert name is None, told


def test_a_smoothing_unconfirmed_at_the_probe_is_not_named():
    """A backward that fits a smoothing at the drawn x but is exact at the second x (whose
    entries span three decades) is not named: the guess is not confirmed."""
    def d_abs(x):
        return x / (x.abs() + 1e-6) if bool((x.abs() >= 0.2).all()) else torch.sign(x)
    for seed in SEEDS:
        result = gradcheck.check_backward(_op(d_abs), np.random.default_rng(seed))
        assert not result.passed
        assert result.misconception not in ("sign-smoothed", "abs-derivative-wrong-in-region"), \
            result.message


def test_a_constant_shortfall_is_not_a_smoothing():
    """sign(x) times one constant a hair below 1 is short by as much at every |x|: not named
    a smoothing (nor a wrong region)."""
    for seed in SEEDS:
        result = gradcheck.check_backward(_op(lambda x: torch.sign(x) * (1 - 1e-6)),
                                          np.random.default_rng(seed))
        assert not result.passed
        assert result.misconception not in ("sign-smoothed", "abs-derivative-wrong-in-region"), \
            result.message


def test_a_sign_smoothed_only_near_zero_is_named_there():
    """tanh(1e4 * x) is sign(x) to float64 from |x| >= 0.002 only: the backward's entries in
    [1e-4, 1e-3] show it (red team rt-9's band), where it was once taken as exact."""
    for seed in SEEDS:
        result = gradcheck.check_backward(_op(lambda x: torch.tanh(1e4 * x)),
                                          np.random.default_rng(seed))
        assert not result.passed and result.misconception == "near-zero-entries", result.message
