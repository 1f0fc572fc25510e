"""Blind round zzl, q3: ``MyOp.backward`` with one term computed in float32 inside an otherwise
float64 backward (the sign as ``(x > 0).float() - (x < 0).float()``, ``torch.ones(x.shape)``,
``.float()`` on S, A, one term or ``grad_output``): ~1e-8 of the largest term off, within
rtol=1e-7 at some seeds. Failed on every seed and named ``low-precision`` (confirmed at a
float32-exact x), never told the quotient rule; float64 backwards in any form pass; errors of
that size from something else (finite differences, a smoothed sign, rounding) are not named.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import gradcheck

SEEDS = (0, 1, 2, 3, 11)


def _op(backward_of, forward_of=None):
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            if forward_of is not None:
                return forward_of(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return backward_of(x, grad_output)
    return MyOp


def _grad(x, g, sign=None, S=None, A=None, first=None):
    S = (x ** 3).sum() if S is None else S
    A = x.abs().sum() if A is None else A
    sign = torch.sign(x) if sign is None else sign
    first = 3 * x ** 2 / (1 + A) if first is None else first
    return g * (first - S * sign / (1 + A) ** 2)


def _ones_sign(x, g):
    sign = torch.ones(x.shape)  # float32, the default dtype
    sign[x < 0] = -1
    return _grad(x, g, sign=sign)


def _zzl_student(x, g):  # blind round zzl's student_04, as written
    S = (x ** 3).sum()
    A = x.abs().sum()
    sign = (x > 0).float() - (x < 0).float()
    return g * (3 * x ** 2 / (1 + A) - S * sign / (1 + A) ** 2)


def _one_fraction(x, g, sgn=torch.sgn):
    S, A = (x ** 3).sum(), x.abs().sum()
    return g * (3 * x * x * (1 + A) - S * sgn(x)) / (1 + A) ** 2


PARTLY_FLOAT32 = {
    "mask-float-sign": _op(_zzl_student),
    "where-ones-float32": _op(lambda x, g: _grad(x, g, sign=torch.where(
        x > 0, torch.ones_like(x, dtype=torch.float32),
        -torch.ones_like(x, dtype=torch.float32)))),
    "sign-float": _op(lambda x, g: _grad(x, g, sign=torch.sign(x).float())),
    "ones-default-dtype": _op(_ones_sign),
    "first-term-float": _op(lambda x, g: _grad(x, g, first=3 * x.float() ** 2
                                                / (1 + x.abs().sum()))),
    "S-float": _op(lambda x, g: _grad(x, g, S=(x ** 3).sum().float())),
    "A-float": _op(lambda x, g: _grad(x, g, A=x.abs().sum().float())),
    "grad-output-float": _op(lambda x, g: _grad(x, g.float())),
    "one-fraction-sign-to-float32": _op(lambda x, g: _one_fraction(
        x, g, lambda t: torch.sgn(t).to(torch.float32))),
}


@pytest.mark.parametrize("how", sorted(PARTLY_FLOAT32))
def test_one_float32_term_is_named_on_every_seed(how):
    for seed in SEEDS:
        result = gradcheck.check_backward(PARTLY_FLOAT32[how], np.random.default_rng(seed))
        assert not result.passed, (how, seed)
        assert result.misconception == "low-precision", (seed, result.message)
        assert "float32" in result.message and "quotient rule" not in result.message, \
            result.message


def test_the_message_tells_the_float32_tensor_and_the_fix():
    result = gradcheck.check_backward(PARTLY_FLOAT32["mask-float-sign"],
                                      np.random.default_rng(11))
    for words in ("(x > 0).float()", "part of backward is computed in float32",
                  "a 0-d float64 tensor such as S times a float32 vector is float32",
                  "torch.sign(x)", "[1.5, -0.5, 1.0]"):
        assert words in result.message, (words, result.message)


def test_a_wholly_float32_backward_keeps_its_message_on_every_seed():
    def buffer(x, g):
        S, A, out = (x ** 3).sum(), x.abs().sum(), torch.zeros(x.shape)  # float32 buffer
        out[...] = 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2
        return g * out.to(x.dtype)
    for seed in SEEDS:
        result = gradcheck.check_backward(_op(buffer), np.random.default_rng(seed))
        assert result.misconception == "low-precision", result.message
        assert "its values are float32 numbers" in result.message, result.message


def _func_grad(x, g):
    return g * torch.func.grad(lambda v: (v ** 3).sum() / (1 + v.abs().sum()))(x)


def _log_form(x, g):
    A, S = x.abs().sum(), (x ** 3).sum()
    first = torch.exp(torch.log(torch.tensor(3.0, dtype=x.dtype)) + 2 * torch.log(x.abs())
                      - torch.log1p(A))
    return g * (first - S * torch.sign(x) * torch.exp(-2 * torch.log1p(A)))


def _python_floats(x, g):
    flat = x.reshape(-1).tolist()
    A, S = sum(abs(v) for v in flat), sum(v ** 3 for v in flat)
    out = [3 * v * v / (1 + A) - S * (1 if v > 0 else -1) / (1 + A) ** 2 for v in flat]
    return g * torch.tensor(out, dtype=x.dtype).reshape(x.shape)


FLOAT64 = {
    "formula": _op(lambda x, g: _grad(x, g)),
    "one-fraction-sgn": _op(_one_fraction),
    "func-grad-inside": _op(_func_grad),
    "log-exp-form": _op(_log_form),
    "python-floats": _op(_python_floats),
    "x-over-abs": _op(lambda x, g: _grad(x, g, sign=x / x.abs())),
    # a float32 tensor of an exact constant, dimensioned, promotes to float64 exactly
    "float32-threes": _op(lambda x, g: _grad(x, g, first=torch.full_like(
        x, 3.0, dtype=torch.float32) * x ** 2 / (1 + x.abs().sum()))),
    # a 0-d float32 tensor does not promote a float64 vector
    "float32-scalar-constant": _op(lambda x, g: _grad(x, g, first=torch.tensor(3.0) * x ** 2
                                                      / (1 + x.abs().sum()))),
    "sign-double": _op(lambda x, g: _grad(x, g, sign=((x > 0).double() - (x < 0).double()))),
    "sign-to-x-dtype": _op(lambda x, g: _grad(x, g, sign=(x > 0).to(x.dtype) * 2 - 1)),
}


@pytest.mark.parametrize("how", sorted(FLOAT64))
def test_a_float64_backward_in_any_form_passes(how):
    for seed in SEEDS:
        result = gradcheck.check_backward(FLOAT64[how], np.random.default_rng(seed))
        assert result.passed, (seed, result.message)


def _finite_differences(x, g):
    f = lambda v: (v ** 3).sum() / (1 + v.abs().sum())  # noqa: E731
    out, eps = torch.empty_like(x), 1e-5
    for i in range(x.numel()):
        step = torch.zeros_like(x).reshape(-1)
        step[i] = eps
        step = step.reshape(x.shape)
        out.reshape(-1)[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return g * out


NOT_A_DTYPE = {
    "finite-differences": _op(_finite_differences),
    "sign-smoothed-1e-12": _op(lambda x, g: _grad(x, g, sign=x / torch.sqrt(x * x + 1e-12))),
    "rounded-to-10-decimals": _op(lambda x, g: _grad(x, g).round(decimals=10)),
}
# (a term in float16 is named low-precision as half precision, never as float32:
# tests/test_checks_named_leftovers.py)


@pytest.mark.parametrize("how", sorted(NOT_A_DTYPE))
def test_an_error_of_that_size_from_something_else_is_not_named_float32(how):
    for seed in SEEDS:
        result = gradcheck.check_backward(NOT_A_DTYPE[how], np.random.default_rng(seed))
        assert result.misconception != "low-precision", (seed, result.message)
        assert "computed in float32 and mixed" not in result.message, result.message


def test_finite_differences_are_told_what_was_established():
    result = gradcheck.check_backward(NOT_A_DTYPE["finite-differences"],
                                      np.random.default_rng(11))
    assert not result.passed and result.misconception is None, result.message
    assert "beyond float64's" in result.message and "finite differences" in result.message, \
        result.message
    assert "quotient rule" not in result.message, result.message


def test_a_float32_forward_is_the_forwards_mistake_not_the_backwards():
    # the forward's float32 output makes autograd hand backward a float32 grad_output (blind
    # round v): the backward is right, the forward check names the dtype
    op = _op(lambda x, g: _grad(x, g),
             forward_of=lambda x: torch.tensor(float((x ** 3).sum() / (1 + x.abs().sum()))))
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        assert gradcheck.check_backward(op, rng).passed
    forward = gradcheck.check_forward(lambda x: op.apply(x), op, np.random.default_rng(0))
    assert forward.misconception == "wrong-dtype", forward.message


def test_other_named_backward_mistakes_keep_their_names():
    sign_dropped = _op(lambda x, g: _grad(x, g, sign=torch.ones_like(x)))
    upstream_ignored = _op(lambda x, g: _grad(x, torch.ones_like(g)))
    for op, name in ((sign_dropped, "sign-dropped"), (upstream_ignored, "upstream-ignored")):
        result = gradcheck.check_backward(op, np.random.default_rng(11))
        assert result.misconception == name, result.message
