"""q2 ``count_saved`` memoised per network: blind round za kept its first answer per network
(and ``track``) in a ``WeakKeyDictionary`` keyed by the module, so every later call on that
network returned the first batch's counts. A sealed worker decodes each call's network anew,
so the check asks the first network again right after its first batch in one request
(``call_first``). Named ``counts-cached``, here and through the worker alike; a cache keyed by
``id(net)``, which there meets a new network at a freed one's id, is named where its wrong
answer is another network's counts from an earlier call. Near-misses: a counter that carries
over keeps ``carried-over``, and a cache that keys on the batch too passes."""

from __future__ import annotations

import builtins
import itertools

import pytest
import torch

from autograder.checks.exercises import saved
from autograder.checks.exercises.saved_cached import CACHED
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(3)

_COUNT = '''
def _count(net, inputs, track):
    calls = 0
    nbytes = 0

    def pack(t):
        nonlocal calls, nbytes
        calls += 1
        nbytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            net(inputs)
        else:
            with torch.no_grad():
                net(inputs)
    return calls, nbytes
'''

CACHES = {
    "WeakKeyDictionary per net and track": _COUNT + '''
import weakref
_saved = weakref.WeakKeyDictionary()

def count_saved(net, inputs, track):
    per_net = _saved.setdefault(net, {})
    if track not in per_net:
        per_net[track] = _count(net, inputs, track)
    return per_net[track]
''',
    "dict keyed by (id(net), track)": _COUNT + '''
_seen = {}

def count_saved(net, inputs, track):
    key = (id(net), track)
    if key not in _seen:
        _seen[key] = _count(net, inputs, track)
    return _seen[key]
''',
    "lru_cache on (net, track)": _COUNT + '''
import functools

@functools.lru_cache(maxsize=None)
def _cached(net, track, inputs_box):
    return _count(net, inputs_box[0], track)

class _Box(tuple):
    __hash__ = lambda self: 0
    __eq__ = lambda self, other: True

def count_saved(net, inputs, track):
    return _cached(net, track, _Box((inputs,)))
''',
    "keyed by str(net)": _COUNT + '''
_by_layers = {}

def count_saved(net, inputs, track):
    key = (str(net), bool(track))
    if key not in _by_layers:
        _by_layers[key] = _count(net, inputs, track)
    return tuple(_by_layers[key])
''',
}


def _local(source: str):
    space = {"__name__": "__main__"}
    exec("import torch\n" + source, space)
    return space["count_saved"]


@pytest.mark.parametrize("how", sorted(CACHES))
@pytest.mark.parametrize("seed", SEEDS)
def test_counts_kept_per_network_are_named(seed, how):
    result = saved.check_count_saved(_local(CACHES[how]), generator(seed), track=True)
    assert not result.passed and result.misconception == CACHED, result.message
    for words in ("kept per network", "earlier call", "depends on the inputs",
                  "right after that one"):
        assert words in result.message, result.message


@pytest.mark.parametrize("how", ["WeakKeyDictionary per net and track", "keyed by str(net)"])
def test_counts_kept_per_network_are_named_through_the_worker(how):
    """Through the worker, where each call's network is a new object, as here. (A cache keyed
    by ``id(net)`` meets recycled ids there: ``_recycling`` below.)"""
    here = saved.check_count_saved(_local(CACHES[how]), generator(1), track=True)
    remote = saved.check_count_saved(Loopback(CACHES[how]).function("count_saved"),
                                     generator(1), track=True)
    assert (remote.passed, remote.misconception) == (False, CACHED), remote.message
    assert here.misconception == CACHED, here.message


NOT_CACHED = {
    "kept per batch shape, dtype and requires_grad too": (_COUNT + '''
_seen = {}

def count_saved(net, inputs, track):
    key = (id(net), tuple(inputs.shape), inputs.dtype, inputs.requires_grad, track)
    if key not in _seen:
        _seen[key] = _count(net, inputs, track)
    return _seen[key]
''', None),
    "plain": (_COUNT + '''
def count_saved(net, inputs, track):
    return _count(net, inputs, track)
''', None),
    "a counter that carries over": ('''
_packed = []

def count_saved(net, inputs, track):
    def pack(t):
        _packed.append(t.numel() * t.element_size())
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(_packed), sum(_packed)
''', "carried-over"),
}


@pytest.mark.parametrize("how", sorted(NOT_CACHED))
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_are_not_taken_for_a_cache(seed, track, how):
    source, name = NOT_CACHED[how]
    result = saved.check_count_saved(_local(source), generator(seed), track=track)
    if name is None:
        assert result.passed, result.message
    else:
        assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("how", sorted(CACHES))
def test_the_untracked_counts_of_a_cache_are_right(how):
    """With track=False nothing is saved whatever the batch: the cache's (0, 0) is right."""
    assert saved.check_count_saved(_local(CACHES[how]), generator(0), track=False).passed


def _recycling(source: str, ids=None):
    """``source``'s count_saved where every network has one same id, as in a sealed worker
    that decodes each call's network anew and frees it after the call, so that the next one
    may get its id (there it depends on the allocator; here it always does, or each call takes
    the next of ``ids``)."""
    ids = itertools.cycle(ids or [7])
    space = {"__name__": "__main__",
             "id": lambda obj: next(ids) if isinstance(obj, torch.nn.Module) else builtins.id(obj)}
    exec("import torch\n" + source, space)
    return space["count_saved"]


BY_ID = {
    "dict keyed by (id(net), track)": CACHES["dict keyed by (id(net), track)"],
    "per id(net), then per track": _COUNT + '''
_saved_counts = {}

def count_saved(net, inputs, track):
    per_net = _saved_counts.setdefault(id(net), {})
    if track not in per_net:
        per_net[track] = _count(net, inputs, track)
    return per_net[track]
''',
    "a default argument keyed by an f-string of id(net)": _COUNT + '''
def count_saved(net, inputs, track, _memo={}):
    key = f"{id(net)}/{int(track)}"
    if key not in _memo:
        _memo[key] = list(_count(net, inputs, track))
    calls, nbytes = _memo[key]
    return calls, nbytes
''',
}


@pytest.mark.parametrize("how", sorted(BY_ID))
@pytest.mark.parametrize("seed", range(6))
def test_counts_kept_per_recycled_id_are_named(seed, how):
    """Another network's counts, at the id of one that is gone: named, never carried-over."""
    result = saved.check_count_saved(_recycling(BY_ID[how]), generator(seed), track=True)
    assert not result.passed and result.misconception == CACHED, result.message
    for words in ("kept per network", "earlier call", "depends on the inputs"):
        assert words in result.message, result.message
    assert "carried over" not in result.message, result.message


@pytest.mark.parametrize("how", ["plain", "a counter that carries over"])
@pytest.mark.parametrize("seed", range(6))
def test_recycled_ids_leave_the_near_misses_as_they_were(seed, how):
    source, name = NOT_CACHED[how]
    result = saved.check_count_saved(_recycling(source), generator(seed), track=True)
    if name is None:
        assert result.passed, result.message
    else:
        assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", range(3))
def test_the_lesson_networks_counts_at_a_recycled_id_are_named(seed):
    """The notebook (or the public test) asked the lesson's network first: its (4, 272) comes
    back at that id for the check's first network."""
    fn = _recycling(BY_ID["per id(net), then per track"], ids=[7, 8, 9])
    lesson = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    assert fn(lesson, torch.ones(3, 4), True) == (4, 272)
    result = saved.check_count_saved(fn, generator(seed), track=True)
    assert not result.passed and result.misconception == CACHED, result.message
    assert "(4, 272) are the counts of the lesson's network" in result.message, result.message
