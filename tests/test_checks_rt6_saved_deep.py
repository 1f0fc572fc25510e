"""q2 ``count_saved`` keeping its records in a ring of 16 slots (red team rt-6): the count capped
at 16 and the bytes of the last 16 packs only, right on every hidden network (none saved more
than 16 tensors): it kept 4/4. Each check now also asks about a network of 6 to 9 Linear
layers."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import saved
from autograder.checks.seeding import generator


def _count(net, inputs, track=True, ring=None):
    records = []

    def pack(t):
        records.append(t.numel() * t.element_size())
        if ring is not None and len(records) > ring:
            records.pop(0)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            net(inputs)
        else:
            with torch.no_grad():
                net(inputs)
    return len(records), sum(records)


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_a_ring_of_sixteen_loses_the_tracked_point(seed, track):
    result = saved.check_count_saved(lambda n, i, track=True: _count(n, i, track, ring=16),
                                     generator(seed), track=track)
    assert result.passed is (not track), result.message  # untracked: nothing saved either way


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_every_pack_counted_keeps_it(seed, track):
    assert saved.check_count_saved(_count, generator(seed), track=track).passed
