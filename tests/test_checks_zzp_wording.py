"""Feedback wording from blind round zzp: each wrong answer already lost its points; these pin
that the message names what the student did.

- A gradient rounded to 4 decimals: the example shows the expected value with the digits that
  rounding dropped (it read "1.1288 became 1.1288").
- ``reuse_raises`` False from an experiment whose first backward kept the graph: the message
  names ``retain_graph=True``.
- A ``vjp_square`` whose "fresh" leaf is the caller's x itself (``torch.as_tensor(x)``,
  ``x.requires_grad_()``): the message says the leaf was x, not a copy.
"""

from __future__ import annotations

import re

import pytest
import torch

from autograder.checks.exercises import accumulation_reuse, multipath, vjp_untouched
from autograder.checks.probes.values import rounded
from autograder.checks.seeding import generator

SEEDS = range(3)


def test_the_rounded_example_shows_the_dropped_digits():
    diagnosis = rounded([1.1288, 2.5], [1.12880004, 2.5])
    assert "(1.12880004 became 1.1288)" in diagnosis.message, diagnosis.message


def _rounded_multipath(x, y):
    x = torch.tensor(float(x), requires_grad=True)
    y = torch.tensor(float(y), requires_grad=True)
    (x * y + x ** 2).backward()  # the lesson's w, right but for the rounding
    return round(x.grad.item(), 4), round(y.grad.item(), 4)


@pytest.mark.parametrize("seed", SEEDS)
def test_rounded_gradients_are_named_with_a_readable_example(seed):
    result = multipath.check_grads(_rounded_multipath, generator(seed), split=False)
    assert not result.passed
    found = re.search(r"\(([-0-9.e]+) became ([-0-9.e]+)\)", result.message)
    assert found, result.message
    assert found.group(1) != found.group(2), result.message


def _retained_experiment() -> bool:
    p = torch.tensor(2.0, requires_grad=True)
    q = p ** 2
    q.backward(retain_graph=True)
    try:
        q.backward()
    except RuntimeError:
        return True
    return False


def test_a_retained_graph_experiment_is_named():
    reuse_raises = _retained_experiment()
    assert reuse_raises is False
    result = accumulation_reuse.check_reuse_raises(reuse_raises, generator(0))
    assert not result.passed
    assert "retain_graph=True" in result.message, result.message


def test_the_right_answer_is_not_told_of_retain_graph():
    result = accumulation_reuse.check_reuse_raises(True, generator(0))
    assert result.passed
    assert "retain_graph" not in result.message


def _as_tensor_leaf(x, weights):
    leaf = torch.as_tensor(x, dtype=x.dtype).requires_grad_(True)
    (leaf ** 2).backward(weights)
    return leaf.grad


def _requires_grad_in_place(x, weights):
    x.requires_grad_()
    (x ** 2).backward(weights)
    return x.grad


def _copied_leaf_kept_grad(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    x.grad = leaf.grad.clone()  # writes the caller's grad, but x is not the leaf
    return leaf.grad


@pytest.mark.parametrize("fn", [_as_tensor_leaf, _requires_grad_in_place])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_caller_s_x_used_as_the_leaf_is_named(fn, seed):
    result = vjp_untouched.check_untouched(fn, generator(seed))
    assert not result.passed
    assert "Its leaf was x itself" in result.message, result.message


def test_a_copy_that_wrote_x_grad_is_not_told_the_leaf_was_x():
    result = vjp_untouched.check_untouched(_copied_leaf_kept_grad, generator(0))
    assert not result.passed
    assert "Its leaf was x itself" not in result.message, result.message
