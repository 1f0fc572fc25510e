"""q5 ``export_numpy`` in blind round zh: the storage read with t's strides but from the
storage's start (``storage_offset()`` ignored) is right for every view that starts at its
storage's first element and wrong for one that starts inside it (``base[1::2]``,
``base[:, 2:]``): named ``storage-offset-ignored``, in-process and through the worker, whose
views now arrive with their storage offset (``wire.encoding._lead``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.seeding import generator
from autograder.worker import wire

SEEDS = range(4)

FROMBUFFER = '''
def export_numpy(t):
    """Blind round zh, student 04."""
    src = t.detach().cpu()
    dtype = src.numpy().dtype
    raw = np.frombuffer(bytes(src.untyped_storage()), dtype=dtype)
    strides = tuple(s * raw.itemsize for s in src.stride())
    return np.lib.stride_tricks.as_strided(raw, shape=tuple(src.shape), strides=strides).copy()
'''
IGNORED = {
    "frombuffer-as_strided": FROMBUFFER,
    "torch.as_strided-offset-0": '''
def export_numpy(t):
    src = t.detach()
    return torch.as_strided(src, src.shape, src.stride(), 0).numpy().copy()
''',
    "set_-storage-0": '''
def export_numpy(t):
    src = t.detach()
    whole = torch.empty(0, dtype=src.dtype).set_(src.untyped_storage(), 0, src.shape, src.stride())
    return whole.numpy().copy()
''',
    "flat-storage-as_strided": '''
def export_numpy(t):
    src = t.detach()
    flat = src.new_empty(0).set_(src.untyped_storage())  # the whole storage, flat
    return flat.as_strided(src.shape, src.stride()).clone().numpy()
''',
}
RIGHT = {  # near-misses: the storage read from t's offset, and the plain export
    "frombuffer-from-offset": '''
def export_numpy(t):
    src = t.detach().cpu()
    raw = np.frombuffer(bytes(src.untyped_storage()), dtype=src.numpy().dtype)
    raw = raw[src.storage_offset():]
    strides = tuple(s * raw.itemsize for s in src.stride())
    return np.lib.stride_tricks.as_strided(raw, shape=tuple(src.shape), strides=strides).copy()
''',
    "torch.as_strided-own-offset": '''
def export_numpy(t):
    src = t.detach()
    return torch.as_strided(src, src.shape, src.stride(), src.storage_offset()).numpy().copy()
''',
    "numpy-copy": '''
def export_numpy(t):
    return t.detach().cpu().numpy().copy()
''',
}
AS_IF_CONTIGUOUS = '''
def export_numpy(t):
    src = t.detach()
    raw = np.frombuffer(bytes(src.untyped_storage()), dtype=src.numpy().dtype)
    return raw[:src.numel()].reshape(tuple(src.shape)).copy()
'''


def _here(source: str):
    space = {"np": np, "torch": torch}
    exec(source, space)
    return space["export_numpy"]


def _remote(source: str):
    from test_observations import Loopback

    return Loopback("import numpy as np\n" + source).function("export_numpy")


@pytest.mark.parametrize("where", ["here", "worker"])
@pytest.mark.parametrize("how", sorted(IGNORED))
def test_the_offset_ignored_is_named(how, where):
    fn = (_here if where == "here" else _remote)(IGNORED[how])
    for seed in SEEDS:
        result = export.check_export(fn, generator(seed))
        assert not result.passed and result.misconception == "storage-offset-ignored", (
            seed, result.message)
        for word in ("t.storage_offset()", "the read began at 0", export.EXPORT):
            assert word in result.message, result.message


VIEWS = {"b[1::2]": lambda b: b[1::2], "b[:, 2:]": lambda b: b[:, 2:], "b[1:]": lambda b: b[1:],
         "b[:, 1:2]": lambda b: b[:, 1:2], "b.t()": lambda b: b.t(), "b[3:, 5:]": lambda b: b[3:, 5:]}


@pytest.mark.parametrize("view", ["b[1::2]", "b[:, 2:]"])
def test_each_view_that_starts_inside_its_storage_names_it(view):
    t = VIEWS[view](torch.arange(24.0).reshape(4, 6))
    verdict = export.judge_export(_here(FROMBUFFER)(t), t)
    assert verdict.misconception == "storage-offset-ignored", verdict.message
    assert "element 6" in verdict.message or "element 2" in verdict.message


def test_a_contiguous_view_read_from_its_storage_start_keeps_read_in_storage_order():
    """b[1:] is contiguous: its strides read from 0 are the storage read as if contiguous, the
    older name, whose message names the storage offset too."""
    t = torch.arange(24.0).reshape(4, 6)[1:]
    verdict = export.judge_export(_here(FROMBUFFER)(t), t)
    assert verdict.misconception == "read-in-storage-order", verdict.message
    assert "storage offset 6" in verdict.message, verdict.message


@pytest.mark.parametrize("where", ["here", "worker"])
@pytest.mark.parametrize("how", sorted(RIGHT))
def test_a_read_from_t_own_offset_passes(how, where):
    fn = (_here if where == "here" else _remote)(RIGHT[how])
    for seed in SEEDS:
        result = export.check_export(fn, generator(seed))
        assert result.passed, result.message


def test_a_read_as_if_contiguous_keeps_its_own_name():
    for seed in SEEDS:
        result = export.check_export(_here(AS_IF_CONTIGUOUS), generator(seed))
        assert result.misconception == "read-in-storage-order", result.message


def test_the_new_view_is_drawn_last():
    """A view that starts inside its storage, non-contiguous (``check_export`` draws it after
    the 0-d tensor, so every earlier case stays the seed's own: the goldens)."""
    from autograder.checks.exercises.export_offset import draw_offset_view

    for seed in SEEDS:
        t, base = draw_offset_view(np.random.default_rng(seed))
        assert t.storage_offset() > 0 and not t.is_contiguous() and t._base is base


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_the_wire_carries_a_views_storage_offset(view):
    t = VIEWS[view](torch.arange(24, dtype=torch.int64).reshape(4, 6))
    back = wire.decode_tensor(wire.encode(t))
    assert torch.equal(back, t) and back.stride() == t.stride()
    # the storage before the view goes with it where it is no larger than the view's reach
    assert back.storage_offset() == (t.storage_offset() if view != "b[3:, 5:]" else 0)
    assert wire.encode(back) == wire.encode(t)


def test_a_forged_offset_is_refused():
    sent = wire.encode(torch.arange(24.0).reshape(4, 6)[1::2])
    for offset in (-1, True, 7):
        with pytest.raises(wire.WireError):
            wire.decode_tensor({**sent, "offset": offset})
