"""Blind round zzze, autograd-exercises: a q2 ``count_saved`` that runs ``out.sum().backward()``
after its tracked forward lost the untracked check's points (``modified-network``, right), but
was told that its ``track=False`` call set the parameters' ``.grad``: the untracked check calls
track=False, True, False on one network, and the message showed the check's mode, not the mode
of the call that changed the network. Each call is shown in its own mode now."""

from __future__ import annotations

import pytest

from autograder.checks.exercises.saved import check_count_saved
from autograder.checks.seeding import generator

BACKWARD_WHEN_TRACKED = '''
import torch


def count_saved(net, inputs, track=True):
    n, b = [0], [0]

    def pack(t):
        n[0] += 1
        b[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            net(inputs).sum().backward()
        else:
            with torch.no_grad():
                net(inputs)
    return n[0], b[0]
'''


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_the_call_that_ran_backward_is_the_one_shown(seed, track):
    env: dict = {}
    exec(BACKWARD_WHEN_TRACKED, env)
    result = check_count_saved(env["count_saved"], generator(seed), track=track)
    assert not result.passed and result.misconception == "modified-network", result.message
    shown = result.message.split(" changed what it was given")[0]
    assert shown.endswith("track=True)"), result.message
