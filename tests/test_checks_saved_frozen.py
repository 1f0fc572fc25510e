"""q2 ``count_saved`` on a frozen network: blind round zk called ``net.requires_grad_(True)``
before a tracked run, right on every network whose parameters require grad, but on a frozen
one (inputs not requiring grad) the right counts are (0, 0), and the caller's network came
back unfrozen. A hidden case drawn last (a frozen network, one with its first Linear frozen)
names it ``network-unfrozen``: the caller's parameters switched on, or the answer equal to the
same network's unfrozen counts. Near-misses: correct answers in other styles pass, and other
mistakes keep their own names."""

from __future__ import annotations

import pytest

from autograder.checks.exercises import saved
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(3)
UNFROZEN = "network-unfrozen"
ZK = "net.requires_grad_(True) when tracking (round zk)"

_COUNT = '''
def _count(net, inputs, track):
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(sizes), sum(sizes)
'''

UNFREEZING = {
    "net.requires_grad_(True) when tracking (round zk)": _COUNT + '''
def count_saved(net, inputs, track):
    if track:
        net.requires_grad_(True)
    return _count(net, inputs, track)
''',
    "p.requires_grad = True for each parameter": _COUNT + '''
def count_saved(net, inputs, track):
    for p in net.parameters():
        p.requires_grad = True
    return _count(net, inputs, track)
''',
    "unfrozen for the count, then restored": _COUNT + '''
def count_saved(net, inputs, track):
    flags = [p.requires_grad for p in net.parameters()]
    for p in net.parameters():
        p.requires_grad_(True)
    try:
        return _count(net, inputs, track)
    finally:
        for p, flag in zip(net.parameters(), flags):
            p.requires_grad_(flag)
''',
    "a deep copy unfrozen and counted": _COUNT + '''
import copy

def count_saved(net, inputs, track):
    return _count(copy.deepcopy(net).requires_grad_(True), inputs, track)
''',
    "each Linear's weight and bias switched on": _COUNT + '''
def count_saved(net, inputs, track):
    for m in net.modules():
        if isinstance(m, nn.Linear):
            m.weight.requires_grad_()
            if m.bias is not None:
                m.bias.requires_grad_()
    return _count(net, inputs, track)
''',
}

CORRECT = {
    "set_grad_enabled(track)": _COUNT + '''
def count_saved(net, inputs, track):
    return _count(net, inputs, track)
''',
    "enable_grad / no_grad branches": '''
def count_saved(net, inputs, track):
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        with (torch.enable_grad() if track else torch.no_grad()):
            net(inputs)
    return len(packed), sum(t.numel() * t.element_size() for t in packed)
''',
    "flags read but never changed": _COUNT + '''
def count_saved(net, inputs, track):
    if not any(p.requires_grad for p in net.parameters()) and not inputs.requires_grad:
        assert _count(net, inputs, track) == (0, 0)
    return _count(net, inputs, track)
''',
}


def _local(source: str):
    space = {"__name__": "__main__"}
    exec("import torch\nfrom torch import nn\n" + source, space)
    return space["count_saved"]


@pytest.mark.parametrize("how", sorted(UNFREEZING))
@pytest.mark.parametrize("seed", SEEDS)
def test_an_unfrozen_network_is_named(seed, how):
    result = saved.check_count_saved(_local(UNFREEZING[how]), generator(seed), track=True)
    assert not result.passed and result.misconception == UNFROZEN, result.message
    for words in ("frozen", "records nothing to save", "another network"):
        assert words in result.message, result.message


def test_the_caller_is_told_their_network_was_unfrozen():
    result = saved.check_count_saved(_local(UNFREEZING[ZK]), generator(0),
                                     track=True)
    assert "requires_grad became True" in result.message, result.message


@pytest.mark.parametrize("how", sorted(CORRECT))
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answers_pass_on_frozen_networks(seed, track, how):
    result = saved.check_count_saved(_local(CORRECT[how]), generator(seed), track=track)
    assert result.passed, result.message


def test_other_mistakes_keep_their_names():
    made_tracked = _COUNT + '''
def count_saved(net, inputs, track):
    return _count(net, inputs.detach().clone().requires_grad_(track), track)
'''
    result = saved.check_count_saved(_local(made_tracked), generator(0), track=True)
    assert result.misconception == "inputs-made-tracked", result.message


def test_named_through_the_worker_and_a_correct_frozen_net_stays_frozen():
    """Through the worker the network crosses the wire: a frozen one must arrive frozen (its
    right counts) and come back as it went (or as the student left it)."""
    wrong = saved.check_count_saved(Loopback(UNFREEZING[ZK]).function(
        "count_saved"), generator(1), track=True)
    assert (wrong.passed, wrong.misconception) == (False, UNFROZEN), wrong.message
    right = saved.check_count_saved(Loopback(CORRECT["set_grad_enabled(track)"]).function(
        "count_saved"), generator(1), track=True)
    assert right.passed, right.message
