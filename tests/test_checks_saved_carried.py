"""q2 ``count_saved`` whose tally is reset only when something changes (blind round zg: a
global tally reset when ``(id(net), track)`` changes). Three calls in turn (tracked,
untracked, tracked) reset it each time, so they agree; a tracked call right after another on
the same network adds up: named ``carried-over``, told the sum. Near-misses: a right count
passes, a cache per network keeps ``counts-cached``."""

from __future__ import annotations

import pytest

from autograder.checks.exercises import saved
from autograder.checks.seeding import generator
from test_checks_saved_cached import _COUNT, CACHES, _local

SEEDS = range(4)

RESET_ON_CHANGE = {
    "reset when (id(net), track) changes": _COUNT + '''
_tally = {"key": None, "calls": 0, "bytes": 0}

def count_saved(net, inputs, track):
    key = (id(net), bool(track))
    if _tally["key"] != key:
        _tally.update(key=key, calls=0, bytes=0)
    calls, nbytes = _count(net, inputs, track)
    _tally["calls"] += calls
    _tally["bytes"] += nbytes
    return _tally["calls"], _tally["bytes"]
''',
    "a list cleared when the mode flips": _COUNT + '''
_saved = []
_mode = [None]

def count_saved(net, inputs, track):
    if _mode[0] != track:
        _saved.clear()
        _mode[0] = track
    calls, nbytes = _count(net, inputs, track)
    _saved.append((calls, nbytes))
    return sum(c for c, _ in _saved), sum(b for _, b in _saved)
''',
}


@pytest.mark.parametrize("how", sorted(RESET_ON_CHANGE))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_tally_reset_only_on_change_is_told_it_carried_over(seed, how):
    result = saved.check_count_saved(_local(RESET_ON_CHANGE[how]), generator(seed), track=True)
    assert not result.passed
    assert result.misconception == "carried-over", result.message
    # the list cleared on a mode flip also carries over from an earlier network: either way
    if how.startswith("reset when"):
        assert "plus this one's" in result.message, result.message


def test_a_right_count_passes():
    right = _COUNT + "\ndef count_saved(net, inputs, track):\n    return _count(net, inputs, track)\n"
    assert saved.check_count_saved(_local(right), generator(0), track=True).passed


def test_a_cache_per_network_is_not_told_it_summed():
    result = saved.check_count_saved(_local(CACHES["WeakKeyDictionary per net and track"]),
                                     generator(0), track=True)
    assert result.misconception == "counts-cached" and "plus this one's" not in result.message
