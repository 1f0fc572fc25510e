"""q3_gradcheck's contract checks: ``check_my_op`` must leave the caller's ``x`` alone and
check ``my_op`` (not ``MyOp.apply``); ``MyOp``'s backward must read only what its own graph
kept. The answers are written the way students write them; the checks swap their stand-ins
into this module's ``MyOp``/``my_op`` (``swap_globals``), in this process."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.checks.porting import gradcheck, selfcheck, selfcheck_at_x

FAST = settings(deadline=None, max_examples=6)
seeds = st.integers(0, 2**32 - 1)

MyOp = my_op = None  # the checks swap their stand-ins in here during each call


def contract(x):
    x64 = x.detach().to(torch.float64).requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


def via_lambda(x):
    x64 = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(lambda t: my_op(t), [x64], eps=1e-6, atol=1e-8,
                                    raise_exception=False)


def marks_callers_x(x):
    x64 = x.double().requires_grad_()  # x itself when x is float64
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


def checks_myop_apply(x):
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(MyOp.apply, (x64,), eps=1e-6, atol=1e-8,
                                    raise_exception=False)


def always_true(x):
    return True


def via_numpy(x):
    x64 = torch.tensor(x.numpy(), dtype=torch.float64, requires_grad=True)  # no bfloat16
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


def single_or_double_only(x):
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"expected float32 or float64, got {x.dtype}")
    return contract(x)


@FAST
@given(seeds)
@pytest.mark.parametrize("fn", [contract, via_lambda, checks_myop_apply])
def test_correct_styles_keep_both_checks(fn, seed):
    """MyOp.apply is my_op by the contract's own definition: checking it is checking my_op."""
    for check in (selfcheck.check_check_my_op, selfcheck_at_x.check_check_my_op_at_x):
        result = check(fn, np.random.default_rng(seed))
        assert result.passed, result.message


@pytest.mark.parametrize("fn, check, name, phrase", [
    (marks_callers_x, selfcheck.check_check_my_op, "modified-input",
     "x.requires_grad became True"),
    (always_true, selfcheck.check_check_my_op, "accepts-broken-op",
     "rather than a constant"),
    (via_numpy, selfcheck.check_check_my_op, "numpy-bfloat16", "x.numpy() has no bfloat16"),
    (single_or_double_only, selfcheck.check_check_my_op, "raises-for-half-precision",
     "float16 and bfloat16 included"),
], ids=["marks-x", "constant", "numpy-copy", "half-refused"])
def test_contract_mistakes_are_named(fn, check, name, phrase):
    for seed in range(3):
        result = check(fn, np.random.default_rng(seed))
        assert not result.passed and result.misconception == name, result.message
        assert phrase in result.message


def test_half_precision_inputs_come_last_with_values_away_from_0():
    """float16 and bfloat16 points, drawn after the float32 and float64 ones, each |x| >= 0.19
    (the values draw_x gives, rounded to their precision)."""
    rng = np.random.default_rng(4)
    xs = [gradcheck.draw_x(rng).to(d) for d in selfcheck.HALF_DTYPES]
    assert [x.dtype for x in xs] == [torch.float16, torch.bfloat16]
    assert all(bool((x.double().abs() >= 0.19).all()) for x in xs)
    assert selfcheck.judge_half_precision(contract, xs).ok


def test_the_callers_x_is_left_as_it_was_by_a_copy():
    x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
    got, failure, _, _ = selfcheck.run_with_op(contract, x)
    assert got is True and failure is None
    got, failure, _, _ = selfcheck.run_with_op(marks_callers_x, x)
    assert failure.misconception == "modified-input" and not x.requires_grad


class Formula:
    """The backward's formula, for the MyOps below."""

    @staticmethod
    def grad(x, g):
        S, A = (x ** 3).sum(), x.abs().sum()
        return g * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)


class OnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x.detach().clone()  # an attribute on ctx: one per graph
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, g):
        return Formula.grad(ctx.x, g)


class OnClass(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        OnClass.x = x.detach()
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, g):
        return Formula.grad(OnClass.x, g)


class QuotientMissing(torch.autograd.Function):
    """Wrong with one graph as with two: ``backward``'s to score, not ``two_graphs``'."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 / (1 + x.abs().sum())


@pytest.mark.parametrize("op, passes", [(OnCtx, True), (OnClass, False),
                                        (QuotientMissing, True)])
def test_two_graphs_alive(op, passes):
    for seed in range(3):
        result = gradcheck.check_two_graphs(op, np.random.default_rng(seed))
        assert result.passed == passes, result.message
        if not passes:
            assert result.misconception == "state-outside-ctx"
            assert "with its graph alone" in result.message
