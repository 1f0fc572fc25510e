"""q1 ``square_grads`` recording into a fixed buffer of 8 slots (red team rt-4): right for every
``repeats`` of 1 to 8, the hidden range then, so it kept 5/5. Each check now makes one longer
run, 9 to 16 repeats, drawn after every earlier draw."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises.accumulation import check_square_grads
from autograder.checks.seeding import generator
from test_checks_exercises_causes import _leaf, _square_grads

_RIGHT = _square_grads(_leaf())  # the contract's loop


def _buffer_of_eight(p0, repeats, clear):
    p = torch.tensor(p0, requires_grad=True)
    slots = [0.0] * 8
    for k in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        slots[k % 8] = p.grad.item()
    return slots[:repeats]


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_a_buffer_of_eight_loses_the_point(seed, clear):
    result = check_square_grads(_buffer_of_eight, generator(seed), clear=clear)
    assert not result.passed, result.message
    assert "returned 8 values" in result.message, result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_the_right_answer_keeps_it(seed, clear):
    result = check_square_grads(_RIGHT, generator(seed), clear=clear)
    assert result.passed, result.message
