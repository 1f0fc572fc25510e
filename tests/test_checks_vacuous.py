"""Points for a property of work that was never done (red-team round rt-3): a function that
computes nothing leaves its inputs alone, returns an array independent of t, counts (0, 0)
without tracking, and keeps no state between two graphs. Each of those checks now asks that the
answer depend on its input first (``answer-ignores-input``, ``no-gradient``); the solution and
a wrong-but-working answer keep the check's points, as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.harness import run_check
from notebooks import namespace, solution

SEEDS = (0, 1, 2, 3)


@pytest.fixture(scope="module")
def exercises():
    return namespace(solution("autograd-exercises"))


@pytest.fixture(scope="module")
def porting():
    return namespace(solution("autograd-porting"))


def _zeros_like(x, weights):
    return torch.zeros_like(x)


def _weights_back(x, weights):
    return weights.detach().clone()


def _missing_factor(x, weights):  # wrong values, but a pullback of x: keeps these points
    return x.detach() * weights


def _zeros_array(t):
    return np.zeros(tuple(t.shape), dtype=t.detach().numpy().dtype)


def _shifted_copy(t):  # wrong values, but an export of t: keeps these points
    return t.detach().numpy().copy() + 1


def _constant_counts(net, inputs, track):
    return (0, 0)


def _lesson_counts(net, inputs, track):
    return (4, 272) if track else (0, 0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("key, name, fn, passes", [
    ("q4_vjp/vjp_square_leaves_inputs", "vjp_square", _zeros_like, False),
    ("q4_vjp/vjp_square_leaves_inputs", "vjp_square", _weights_back, False),
    ("q4_vjp/vjp_square_leaves_inputs", "vjp_square", _missing_factor, True),
    ("q5_numpy/export_numpy_independent", "export_numpy", _zeros_array, False),
    ("q5_numpy/export_numpy_independent", "export_numpy", _shifted_copy, True),
    ("q2_saved/count_saved_untracked", "count_saved", _constant_counts, False),
    ("q2_saved/count_saved_untracked", "count_saved", _lesson_counts, False),
])
def test_does_a_property_check_need_the_work_done(exercises, seed, key, name, fn, passes):
    result = run_check({**exercises, name: fn}, "autograd-exercises", key, seed)
    assert result.passed == passes, result.message
    if not passes:
        assert result.misconception == "answer-ignores-input", result.message
        assert "earns nothing" in result.message or "points are for" in result.message
    assert run_check(exercises, "autograd-exercises", key, seed).passed


class _Nothing(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum() * 0

    @staticmethod
    def backward(ctx, grad_output):
        return None


@pytest.mark.parametrize("seed", SEEDS)
def test_does_two_graphs_need_a_gradient(porting, seed):
    result = run_check({**porting, "MyOp": _Nothing}, "autograd-porting",
                       "q3_gradcheck/two_graphs", seed)
    assert not result.passed and result.misconception == "no-gradient", result.message
    assert run_check(porting, "autograd-porting", "q3_gradcheck/two_graphs", seed).passed


_buffers: dict = {}


def _reused_buffer(t):  # a copy, into one buffer per shape: the values check's to name
    values = t.detach().cpu().numpy()
    out = _buffers.setdefault((values.shape, values.dtype), np.empty_like(values))
    out[...] = values
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_is_a_reused_buffer_no_answer_that_ignores_its_input(exercises, seed):
    """The same array object back from both calls is not the same answer: in-process, as
    through the sealed judge's worker (whose replies are copies), independence is judged on
    what each call returned when it returned (otter run and the judge gave 1.0 and 2.5)."""
    result = run_check({**exercises, "export_numpy": _reused_buffer}, "autograd-exercises",
                       "q5_numpy/export_numpy_independent", seed)
    assert result.passed, result.message
