"""q2 ``count_saved`` whose pack hook counts only contiguous tensors (blind round zn's
``if t.is_contiguous()``: "a non-contiguous saved tensor is a transposed weight view, not an
activation"): it drops every saved weight.t() of a Linear with more than one output and a
strided batch. Named ``non-contiguous-left-out``, not ``weights-left-out``; near-misses: the
weights left out by storage, every view left out, and a right count that reads a contiguous
copy are not taken for it."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import saved
from autograder.checks.exercises.saved_contiguous import CONTIGUOUS_ONLY
from autograder.checks.seeding import generator

SEEDS = range(5)


def _counting(keep):
    """A count_saved that counts the packed tensors ``keep(tensor)`` picks."""
    def count_saved(net, inputs, track):
        calls = [0, 0]

        def pack(t):
            if keep(t):
                calls[0] += 1
                calls[1] += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.set_grad_enabled(track):
                net(inputs)
        return calls[0], calls[1]
    return count_saved


def _views(t):
    try:
        t.view(-1)
    except RuntimeError:
        return False
    return True


CONTIGUOUS_ONLY_MUTANTS = {
    "if t.is_contiguous()": _counting(lambda t: t.is_contiguous()),
    "contiguous_format asked": _counting(
        lambda t: t.is_contiguous(memory_format=torch.contiguous_format)),
    "only where view(-1) succeeds": _counting(_views),
    "strides equal a contiguous copy's": _counting(lambda t: t.stride() == t.contiguous().stride()
                                                   or t.numel() <= 1 or 1 in t.shape),
}


@pytest.mark.parametrize("how", sorted(CONTIGUOUS_ONLY_MUTANTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_count_of_contiguous_tensors_only_is_named(seed, how):
    mutant = CONTIGUOUS_ONLY_MUTANTS[how]
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == CONTIGUOUS_ONLY, result.message
    for words in ("is_contiguous()", "weight.t()", "strided", "saves all the same"):
        assert words in result.message, result.message
    assert "share a parameter's storage" not in result.message, result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


def _shares_a_parameter(t, net_params):
    return t.untyped_storage().data_ptr() in net_params


def _weights_by_storage(net, inputs, track):
    storages = {p.untyped_storage().data_ptr() for p in net.parameters()}
    return _counting(lambda t: not _shares_a_parameter(t, storages))(net, inputs, track)


NEAR_MISSES = {
    "weights left out by storage": (_weights_by_storage, "weights-left-out"),
    "right, counting a contiguous copy": (_counting(lambda t: t.contiguous() is not None), None),
}


@pytest.mark.parametrize("how", sorted(NEAR_MISSES))
@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_are_not_taken_for_a_contiguity_filter(seed, how):
    mutant, name = NEAR_MISSES[how]
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert result.passed == (name is None), result.message
    assert result.misconception != CONTIGUOUS_ONLY, result.message
    if name:
        assert result.misconception == name, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_every_view_left_out_is_not_taken_for_a_contiguity_filter(seed):
    """``if t._base is None`` drops the contiguous weight.t() of a one-output Linear too."""
    result = saved.check_count_saved(_counting(lambda t: t._base is None), generator(seed),
                                     track=True)
    assert not result.passed and result.misconception != CONTIGUOUS_ONLY, result.message
