"""Mistake classes of ``autograd-exercises`` answers that blind round z kept full marks for:
q2 a count_saved that skips the saved tensors of some small size (``numel() > 1``: a (1, 1)
output a Sigmoid keeps is "a scalar, not an activation"), named ``small-tensors-skipped`` where
the tensors of one element are what it left out, and failing wherever it skips any; never named
on its near-misses (right counts in unusual styles, the other known mistakes)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from autograder.checks.exercises import saved
from autograder.checks.seeding import generator

SEEDS = range(4)


def _skipping(keep, size=lambda t: t.numel() * t.element_size()):
    """A count_saved whose pack hook counts a tensor (call and bytes) only where ``keep(t)``."""
    def count_saved(net, inputs, track):
        calls, total = 0, 0

        def pack(t):
            nonlocal calls, total
            if keep(t):
                calls += 1
                total += size(t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            if track:
                net(inputs)
            else:
                with torch.no_grad():
                    net(inputs)
        return calls, total
    return count_saved


def _early_return(net, inputs, track):
    """``if t.numel() == 1: return t`` before the tally (the same skip, written as a guard)."""
    sizes = []

    def pack(t):
        if t.numel() == 1:
            return t
        sizes.append(t.nbytes)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(sizes), sum(sizes)


#: Counts that leave out the saved tensors of one element (round z: ``numel() > 1``).
ONE_ELEMENT = {
    "numel() > 1 (round z)": _skipping(lambda t: t.numel() > 1),
    "numel() >= 2": _skipping(lambda t: t.numel() >= 2),
    "nelement() != 1": _skipping(lambda t: t.nelement() != 1),
    "prod(shape) > 1": _skipping(lambda t: math.prod(t.shape) > 1),
    "early return on numel() == 1": _early_return,
}


@pytest.mark.parametrize("how", sorted(ONE_ELEMENT))
@pytest.mark.parametrize("seed", SEEDS)
def test_one_element_tensors_skipped_are_named(seed, how):
    """Is a count that leaves out every saved tensor of one element named for it, with the
    size it skipped and the rule (every tensor pack receives counts), and the untracked check,
    where nothing is saved, left passing?"""
    mutant = ONE_ELEMENT[how]
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == "small-tensors-skipped", result.message
    for words in ("one element", "(1, 1)", "whatever its size"):
        assert words in result.message, result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


#: Counts that skip saved tensors of another small size: they must lose their points.
OTHER_SMALL = {
    "numel() > 4": _skipping(lambda t: t.numel() > 4),
    "numel() >= 10": _skipping(lambda t: t.numel() >= 10),
    "shape[0] > 1": _skipping(lambda t: t.shape[0] > 1),
    "size(0) != 1": _skipping(lambda t: t.dim() == 0 or t.size(0) != 1),
    "shape[-1] > 1": _skipping(lambda t: t.shape[-1] > 1),
}


@pytest.mark.parametrize("how", sorted(OTHER_SMALL))
@pytest.mark.parametrize("seed", SEEDS)
def test_other_small_sizes_skipped_lose_their_points(seed, how):
    result = saved.check_count_saved(OTHER_SMALL[how], generator(seed), track=True)
    assert not result.passed, result.message


def test_the_round_z_networks_are_left_to_the_other_networks():
    """Are the label's networks left unnamed by themselves: the first (a one-row batch into
    Linear(8, 1) then Sigmoid: its (1, 1) output skipped), where the one tensor of one element
    is also the network's output (left out by a comparison with the output too), and the second
    (a (1, 1) batch into Linear(1, 4) then Tanh), where it is also the one leaf? The check's
    other networks and networks of the grader's own tell them apart
    (test_one_element_tensors_skipped_are_named; test_checks_saved_output.py)."""
    torch.manual_seed(0)
    first = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
    second = nn.Sequential(nn.Linear(1, 4), nn.Tanh())
    for net, inputs, got, name in ((first, torch.ones(1, 4), (4, 112), None),
                                   (second, torch.ones(1, 1), (1, 16), None)):
        pred = saved.predict(net, inputs)
        verdict = saved.judge_counts([got, (0, 0), got], pred, True, "count_saved(...)")
        assert not verdict.ok and verdict.misconception == name, verdict.message


#: Right counts in unusual styles, and filters that skip nothing these networks save.
RIGHT = {
    "numel() >= 1": _skipping(lambda t: t.numel() >= 1),
    "dim() > 0 (no 0-d tensor is saved here)": _skipping(lambda t: t.dim() > 0),
    "len(flatten())": _skipping(lambda t: True, lambda t: len(t.flatten()) * t.element_size()),
    "reshape(-1).shape[0] itemsize": _skipping(
        lambda t: True, lambda t: t.reshape(-1).shape[0] * t.dtype.itemsize),
    "early return on numel() == 0": _skipping(lambda t: t.numel() != 0, lambda t: t.nbytes),
}


@pytest.mark.parametrize("how", sorted(RIGHT))
@pytest.mark.parametrize("seed", SEEDS)
def test_right_counts_in_unusual_styles_pass(seed, how):
    for track in (True, False):
        result = saved.check_count_saved(RIGHT[how], generator(seed), track=track)
        assert result.passed, result.message


#: Other mistakes, some together with the one-element skip: they keep their own names.
OTHERS = {
    "first dimension": ("bytes-from-first-dimension", _skipping(
        lambda t: True, lambda t: len(t) * t.element_size())),
    "last dimension": ("bytes-from-last-dimension", _skipping(
        lambda t: True, lambda t: t.shape[-1] * t.element_size())),
    "numel() alone": ("bytes-without-element-size", _skipping(lambda t: True, torch.numel)),
    "4 bytes each": ("bytes-assume-float32", _skipping(lambda t: True, lambda t: 4 * t.numel())),
    "weights left out": ("weights-left-out", _skipping(
        lambda t: t._base is None or not isinstance(t._base, nn.Parameter))),
}


@pytest.mark.parametrize("how", sorted(OTHERS))
@pytest.mark.parametrize("seed", SEEDS)
def test_other_mistakes_keep_their_names(seed, how):
    name, mutant = OTHERS[how]
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_two_mistakes_at_once_are_not_named_for_one(seed):
    """Is a count with each tensor's bytes from its first dimension that also skips the
    tensors of one element named neither for the skip nor for the first dimension alone (the
    one-row network's answer fits neither)?"""
    mutant = _skipping(lambda t: t.numel() > 1, lambda t: len(t) * t.element_size())
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed, result.message
    assert result.misconception not in ("small-tensors-skipped", "bytes-from-first-dimension")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_right_answer_costs_one_more_network(seed):
    """Does a right answer get called on one network more than before (3 calls), and on the
    first network once more right after its first batch (2 calls, saved_cached), and one of
    the first two in the other dtype right after itself (2 calls, saved_dtype), and a frozen
    network and a partly frozen one (1 call each, saved_frozen), a deep network (3 calls,
    red team rt-6), and a network of other activations (3 calls, red team rt-10), no more?"""
    calls = []

    def counted(net, inputs, track):
        calls.append(track)
        return _skipping(lambda t: True)(net, inputs, track)

    assert saved.check_count_saved(counted, generator(seed), track=True).passed
    assert len(calls) == 3 * 8 + 2 + 2 + 2

