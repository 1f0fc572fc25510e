"""Blind round zzzt: a ``square_grads`` whose leaf was made once at module level and refilled
on every call (``p.data.fill_(p0)``), its ``.grad`` never cleared between calls, lost its
uncleared check rightly, but was told only that the answer "depends on something besides the
arguments (a global list or counter, a cached result, another random generator)". Two calls on
one input now say what the difference is: the second answer is the first plus one amount at
every element (a sequence of gradients), or plus the whole right answer (one gradient), which
is what a gradient kept from one call to the next adds.
"""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import accumulation, vjp
from autograder.checks.probes.repetition import carried_over
from autograder.checks.seeding import generator

_P = torch.zeros((), requires_grad=True)


def module_leaf(p0, repeats, clear):
    """The blind answer: one leaf for every call, refilled; cleared only when asked."""
    with torch.no_grad():
        _P.fill_(float(p0))
    record = []
    for _ in range(repeats):
        if clear and _P.grad is not None:
            _P.grad.zero_()
        (_P ** 2).backward()
        record.append(float(_P.grad))
    return record


_X: dict = {}


def kept_vjp_leaf(x, weights):
    """vjp_square with its leaf kept per shape between calls, never cleared."""
    leaf = _X.setdefault((tuple(x.shape), x.dtype), torch.zeros_like(x).requires_grad_())
    with torch.no_grad():
        leaf.copy_(x)
    (leaf ** 2).backward(weights.detach())
    return leaf.grad.detach().clone()


@pytest.mark.parametrize("seed", range(8))
def test_a_leaf_kept_between_calls_is_told_its_gradients_carry_over(seed):
    _P.grad = None
    result = accumulation.check_square_grads(module_leaf, generator(seed), clear=False)
    assert not result.passed
    assert "the same amount" in result.message and "carried over" in result.message, \
        result.message


@pytest.mark.parametrize("seed", range(4))
def test_a_vjp_leaf_kept_between_calls_keeps_its_own_named_cause(seed):
    # q4 names this mistake itself, before any probe: the probe's words must not replace it
    _X.clear()
    result = vjp.check_vjp(kept_vjp_leaf, generator(seed))
    assert result.misconception == "grad-accumulated-across-calls", result.message


def test_carried_over_says_nothing_for_other_differences():
    assert carried_over([1.0, 2.0], [3.0, 4.0], None).startswith(" The second answer is the "
                                                                 "first plus the same amount, 2")
    assert "whole right answer" in carried_over([1.0, 2.0], [4.0, 7.0], [3.0, 5.0])
    assert carried_over([1.0, 2.0], [3.0, 5.0], [1.0, 1.0]) == ""  # neither
    assert carried_over([1.0], [3.0], None) == ""  # one number: no "every element"
    assert carried_over([1.0, 2.0], [1.0, 2.0], [1.0, 2.0]) == ""  # the same answer
    assert carried_over(None, [1.0], None) == "" and carried_over([1.0], [1.0, 2.0], None) == ""
    assert carried_over([1.0, float("nan")], [2.0, 3.0], None) == ""
