"""q2 ``count_saved`` whose pack hook reads each saved tensor through ``.view``: blind round zm
counted elements as ``t.view(-1).size(0)``, right on contiguous saved tensors (the lesson's),
but a saved ``weight.t()`` of a later Linear, or a strided batch, is not viewable, and the
tracked forward raised torch's "view size is not compatible with input tensor's size and
stride", which was all the student was told. Named ``view-on-saved`` (the points of a raise
kept); near-misses that count by ``numel``, ``reshape(-1)`` or ``nelement()`` pass."""

from __future__ import annotations

import pytest

from autograder.checks.exercises import saved
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(3)
VIEWED = "view-on-saved"
ZM = "t.view(-1).size(0) * element_size (round zm)"

_COUNT = '''
def count_saved(net, inputs, track):
    sizes = []

    def pack(t):
        sizes.append(SIZE)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(sizes), sum(sizes)
'''


def _source(size: str) -> str:
    return _COUNT.replace("SIZE", size)


VIEWING = {
    ZM: _source(
        "t.view(-1).size(0) * t.element_size()"),
    "len(t.view(-1))": _source("len(t.view(-1)) * t.element_size()"),
    "t.view(t.numel()).shape[0]": _source("t.view(t.numel()).shape[0] * t.element_size()"),
    "t.view(-1).numel()": _source("t.view(-1).numel() * t.element_size()"),
    "bytes of t.view(torch.uint8)": _source("t.view(-1).view(torch.uint8).numel()"),
}

RIGHT = {
    "numel": _source("t.numel() * t.element_size()"),
    "reshape(-1)": _source("t.reshape(-1).size(0) * t.element_size()"),
    "nelement()": _source("t.nelement() * t.element_size()"),
    "contiguous().view(-1)": _source("t.contiguous().view(-1).size(0) * t.element_size()"),
}


def _local(source: str):
    space = {"__name__": "__main__"}
    exec("import torch\nfrom torch import nn\n" + source, space)
    return space["count_saved"]


@pytest.mark.parametrize("how", sorted(VIEWING))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_view_of_each_saved_tensor_is_named(seed, how):
    result = saved.check_count_saved(_local(VIEWING[how]), generator(seed), track=True)
    assert not result.passed and result.misconception == VIEWED, result.message
    for words in ("view size is not compatible", "non-contiguous", "weight.t()", "t.numel()",
                  "reshape"):
        assert words in result.message, result.message


def test_named_at_the_grading_seed_through_the_worker():
    result = saved.check_count_saved(Loopback(VIEWING[ZM]).function(
        "count_saved"), generator(11), track=True)
    assert result.misconception == VIEWED, result.message
    assert result.points == 0


@pytest.mark.parametrize("how", sorted(RIGHT))
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_counts_without_view_pass(seed, track, how):
    result = saved.check_count_saved(_local(RIGHT[how]), generator(seed), track=track)
    assert result.passed, result.message


def test_another_raise_is_not_named():
    other = _source("t.view(-1).size(0) * t.element_size() if t.dim() < 2 else 1 // 0")
    result = saved.check_count_saved(_local(other), generator(0), track=True)
    assert not result.passed and result.misconception != VIEWED, result.message
