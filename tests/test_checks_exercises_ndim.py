"""An answer that works on 1-D tensors only (blind round zu's ``torch.dot(weights, y)`` in
``vjp_square``): right on every 1-D input, raising or wrong on a 2-D one. The probes step out of
the ``multi-dimensional`` class (the same entries flattened, as tracked as before) and tell
that the answer was right there, with what works for every shape.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises.export import check_export
from autograder.checks.exercises.vjp import check_vjp


def _dot(x, weights):
    x = x.detach().clone().requires_grad_(True)
    torch.dot(weights, x ** 2).backward()
    return x.grad


def _inner(x, weights):
    x = x.detach().clone().requires_grad_(True)
    torch.inner(weights, x ** 2).backward()
    return x.grad


def _entry_loop(x, weights):
    x = x.detach().clone().requires_grad_(True)
    y = x ** 2
    total = 0
    for i in range(len(y)):
        total = total + y[i] * weights[i]
    total.backward()
    return x.grad


ONE_D_ONLY_VJP = {"torch.dot": _dot, "torch.inner": _inner, "entry-loop": _entry_loop}


@pytest.mark.parametrize("how", sorted(ONE_D_ONLY_VJP))
def test_a_vjp_for_1d_only_is_told_so(how):
    result = check_vjp(ONE_D_ONLY_VJP[how], np.random.default_rng(11))
    assert not result.passed, how
    assert result.misconception == "probe.input-class.multi-dimensional", result.message
    assert "y.backward(weights) works for every shape" in result.message, result.message


def _export_by_floats(t):
    return np.array([float(v) for v in t.detach()], dtype=t.detach().numpy().dtype)


def test_an_export_for_1d_only_is_told_so():
    result = check_export(_export_by_floats, np.random.default_rng(11))
    assert not result.passed
    assert result.misconception == "probe.input-class.multi-dimensional", result.message


def test_right_answers_of_any_shape_pass():
    def vjp(x, weights):
        x = x.detach().clone().requires_grad_(True)
        (x ** 2).backward(weights)
        return x.grad

    def vjp_flat_dot(x, weights):  # 1-D tools on flattened tensors: right for every shape
        x = x.detach().clone().requires_grad_(True)
        torch.dot(weights.reshape(-1), (x ** 2).reshape(-1)).backward()
        return x.grad

    for fn in (vjp, vjp_flat_dot):
        assert check_vjp(fn, np.random.default_rng(11)).passed, fn.__name__
    assert check_export(lambda t: t.detach().cpu().numpy().copy(),
                        np.random.default_rng(11)).passed
