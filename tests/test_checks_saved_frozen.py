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


# Blind round zp, student 02: code that expects a tracked forward to save something raises on
# the frozen network, where (0, 0) is the answer; told only what raised. Told now that this
# network is frozen, so nothing is saved, and that code expecting something saved fails on it.
EXPECTS_SAVED = {
    "assert calls > 0 (round zp)": _COUNT + '''
def count_saved(net, inputs, track):
    calls, nbytes = _count(net, inputs, track)
    assert not track or calls > 0, "tracked forward saved no tensors: hooks not active?"
    return calls, nbytes
''',
    "bytes per call, a division by the count": _COUNT + '''
def count_saved(net, inputs, track):
    calls, nbytes = _count(net, inputs, track)
    per_call = nbytes / calls if track else 0  # the bytes of one saved tensor, on average
    return calls, round(per_call * calls)
''',
    "the first saved tensor's dtype read": '''
def count_saved(net, inputs, track):
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    if track:
        size = packed[0].element_size()
        return len(packed), sum(t.numel() for t in packed) * size
    return 0, 0
''',
    "max over the saved sizes": _COUNT + '''
def count_saved(net, inputs, track):
    calls, nbytes = _count(net, inputs, track)
    if track and max([nbytes]) == 0:
        raise RuntimeError("nothing was saved: is the hook registered?")
    return calls, nbytes
''',
}
SAVES_NOTHING = "a tracked forward saves nothing and (0, 0) is the answer"


@pytest.mark.parametrize("how", sorted(EXPECTS_SAVED))
@pytest.mark.parametrize("seed", SEEDS)
def test_code_that_expects_something_saved_is_told_the_network_is_frozen(seed, how):
    result = saved.check_count_saved(_local(EXPECTS_SAVED[how]), generator(seed), track=True)
    assert not result.passed, result.message
    for words in (SAVES_NOTHING, "frozen", "does not require grad", "expects something saved"):
        assert words in result.message, result.message


def test_the_frozen_hint_is_told_through_the_worker():
    result = saved.check_count_saved(Loopback(EXPECTS_SAVED["assert calls > 0 (round zp)"])
                                     .function("count_saved"), generator(11), track=True)
    assert not result.passed and SAVES_NOTHING in result.message, result.message


def test_a_backward_on_the_frozen_network_keeps_its_hint():
    backward = _COUNT + '''
def count_saved(net, inputs, track):
    if track:
        net(inputs).sum().backward()
        net.zero_grad(set_to_none=True)  # the grads left as they were
    return _count(net, inputs, track)
'''
    result = saved.check_count_saved(_local(backward), generator(0), track=True)
    assert "needs only the forward, no backward" in result.message, result.message
    assert "does not require grad" in result.message, result.message


def test_a_raise_on_a_network_that_saves_is_not_told_it_saves_nothing():
    """Raising on the partly frozen network (its later layers save): not this hint."""
    raising = _COUNT + '''
def count_saved(net, inputs, track):
    if any(not p.requires_grad for p in net.parameters()) and any(
            p.requires_grad for p in net.parameters()):
        raise ValueError("mixed requires_grad flags")
    return _count(net, inputs, track)
'''
    result = saved.check_count_saved(_local(raising), generator(0), track=True)
    assert not result.passed and "mixed requires_grad" in result.message, result.message
    assert SAVES_NOTHING not in result.message, result.message


# -- a partly frozen network counted as a frozen one (blind round zs) -------------------------

PARTLY = {
    "all written for any (round zs)": _COUNT + '''
def count_saved(net, inputs, track):
    if not all(p.requires_grad for p in net.parameters()) and not inputs.requires_grad:
        return (0, 0)
    return _count(net, inputs, track)
''',
    "the first parameter's flag decides": _COUNT + '''
def count_saved(net, inputs, track):
    if not next(net.parameters()).requires_grad:
        return 0, 0
    return _count(net, inputs, track)
''',
    "no_grad as soon as one layer is frozen": _COUNT + '''
def count_saved(net, inputs, track):
    frozen = any(not p.requires_grad for p in net.parameters())
    return _count(net, inputs, track and not frozen)
''',
}


@pytest.mark.parametrize("how", sorted(PARTLY))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_partly_frozen_network_counted_as_frozen_is_named(seed, how):
    result = saved.check_count_saved(_local(PARTLY[how]), generator(seed), track=True)
    assert not result.passed and result.misconception == "partly-frozen-as-frozen", \
        result.message
    assert "only the first Linear is frozen" in result.message, result.message


def test_an_answer_of_zero_on_every_network_keeps_its_own_verdict():
    """(0, 0) everywhere fails long before the frozen cases, not with this name."""
    result = saved.check_count_saved(_local("def count_saved(net, inputs, track):\n"
                                            "    return (0, 0)\n"), generator(0), track=True)
    assert not result.passed and result.misconception != "partly-frozen-as-frozen"
