"""Every raised call says the usual cause of a common error beside torch's words
(``checks.raised_hints``): blind round zv's ``if w.grad: w.grad.zero_()`` and round zu's
``torch.dot`` on a 2-D tensor, through the real checks, and each table entry raised for real.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.calling import call
from autograder.checks.exercises.vjp import check_vjp
from autograder.checks.porting.microbatch import check_accumulated_grad
from autograder.checks.raised_hints import HINTS, hint_for


def _truthy_grad(w, X, y, sizes):
    if w.grad:  # blind round zv's student_03: True/False of a tensor of several values
        w.grad.zero_()
    total = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * (len(yj) / total)).backward()
    return w.grad.clone()


def test_a_truth_test_of_a_stale_grad_is_told_is_not_none():
    result = check_accumulated_grad(_truthy_grad, np.random.default_rng(11), stale=True)
    assert not result.passed
    assert "write `is not None`" in result.message, result.message


def test_torch_dot_on_a_2d_tensor_is_told_to_multiply_and_sum():
    def vjp_square(x, weights):
        x = x.detach().clone().requires_grad_(True)
        torch.dot(weights, x ** 2).backward()
        return x.grad
    result = check_vjp(vjp_square, np.random.default_rng(11))
    assert not result.passed
    assert "take one-dimensional tensors only" in result.message, result.message


def test_vmap_of_grad_on_a_2d_tensor_is_told_it_sees_slices():
    # blind round zze's student_05: right on 1-D x; under vmap each call sees a row of a 2-D x
    def vjp_square(x, weights):
        return weights * torch.func.vmap(torch.func.grad(lambda s: s ** 2))(x.detach())
    result = check_vjp(vjp_square, np.random.default_rng(11))
    assert not result.passed
    assert "one slice along the first dimension" in result.message, result.message
    assert "torch.func.vmap over the first dimension" in result.message, result.message


def _asserting(a, b):
    assert a + b == 0.3, "paths do not add up"  # noqa: S101 - blind round zy's student_05


def _raise_each():
    x = torch.ones(2, 2, requires_grad=True)
    yield "bool", lambda: bool(x)
    yield "dot", lambda: torch.dot(x, x)
    yield "implicit", lambda: (x * 2).backward()
    y = (x * x).sum()
    y.backward()
    yield "twice", lambda: y.backward()
    yield "no-grad-fn", lambda: torch.ones(2).sum().backward()
    yield "item", lambda: x.sum(0).item()
    yield "float", lambda: float(x.sum(0))
    yield "legacy-constructor", lambda: torch.DoubleTensor(torch.ones(2))
    yield "assert", lambda: _asserting(0.1, 0.2)
    yield "func-grad", lambda: torch.func.vmap(torch.func.grad(torch.square))(torch.ones(2, 2))
    a = torch.ones(2, requires_grad=True)
    b = a.exp()
    yield "inplace", lambda: (b.mul_(2), b.sum().backward())


@pytest.mark.parametrize("case", [name for name, _ in _raise_each()])
def test_each_common_error_gets_its_advice(case):
    raising = dict(_raise_each())[case]

    def fn():
        return raising()
    _, failure = call(fn, "f")
    assert failure is not None and failure.misconception == "raised"
    advice = hint_for(failure.message)
    assert advice is not None and failure.message.endswith(advice), failure.message


def test_a_right_call_and_an_unknown_error_say_nothing_more():
    assert call(lambda: 1, "f") == (1, None)
    _, failure = call(lambda: {}["k"], "f")
    assert failure.message == "f() raised KeyError: 'k'"


def test_the_advice_names_no_size():
    # name_foreign_size reads the sizes in a raised message: the advice must add none
    assert not any(ch.isdigit() for _, advice in HINTS for ch in advice)
