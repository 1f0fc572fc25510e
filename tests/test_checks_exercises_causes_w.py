"""Mistake classes of ``autograd-exercises`` answers that blind round w lost points on without
being told why, each named from its own evidence with the student's variants, and never on
its near-misses: q1 gradients stored as whole numbers (``gradients-truncated-to-integers``),
q2 each saved tensor's bytes taken from its strides (``bytes-from-first-stride``,
``bytes-from-largest-stride``), q4 a pullback through the square roots of the weights, NaN
where a weight is negative (``weights-through-sqrt``), q5 an export that reads the tensor's
memory in storage order (``read-in-storage-order``)."""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np
import pytest
import torch

from autograder.checks.exercises import accumulation, export, saved, vjp
from autograder.checks.seeding import generator
from test_checks_exercises import _count  # count_saved with each saved tensor's size given

SEEDS = range(3)

# ---------------------------------------------------------------- q1_accumulation


def _recorded(buffer, store, out):
    """A square_grads that writes each p.grad into ``buffer(repeats)`` with ``store`` and
    returns ``out(buffer)``."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(p0, requires_grad=True)
        grads = buffer(repeats)
        for k in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            grads[k] = store(p.grad)
        return out(grads)
    return square_grads


def _floats(grads):
    return [float(g) for g in grads]


#: Gradients kept as whole numbers, and the word the message gives for how.
INTEGER = {
    "np.zeros_like(np.arange(n))": (_recorded(lambda n: np.zeros_like(np.arange(n)),
                                              lambda g: g.item(), _floats), "truncated"),
    "torch long buffer": (_recorded(lambda n: torch.zeros(n, dtype=torch.long), lambda g: g,
                                    lambda b: b.double().tolist()), "truncated"),
    "[0] * n with int()": (_recorded(lambda n: [0] * n, lambda g: int(g), _floats),
                           "truncated"),
    "np.int32 buffer": (_recorded(lambda n: np.zeros(n, dtype=np.int32), lambda g: g.item(),
                                  lambda b: b.astype(float).tolist()), "truncated"),
    "math.floor": (_recorded(lambda n: [0.0] * n, lambda g: math.floor(g.item()), _floats),
                   "rounded down"),
    "round()": (_recorded(lambda n: [0.0] * n, lambda g: round(g.item()), _floats),
                "rounded to the nearest"),
    "torch.round": (_recorded(lambda n: [0.0] * n, lambda g: g.round().item(), _floats),
                    "rounded to the nearest"),
}


def _plain(make_leaf=lambda p0: torch.tensor(p0, requires_grad=True), read=lambda g: g.item()):
    def square_grads(p0, repeats, clear):
        p, grads = make_leaf(p0), []
        for _ in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            grads.append(read(p.grad))
        return grads
    return square_grads


def _truncated_when_negative(p0, repeats, clear):
    """Whole numbers only for a negative p0: right at the confirming point, so not named."""
    read = (lambda g: float(int(g.item()))) if p0 < 0 else (lambda g: g.item())
    return _plain(read=read)(p0, repeats, clear)


NOT_INTEGER = {
    "p0 truncated": _plain(lambda p0: torch.tensor(float(int(p0)), requires_grad=True)),
    "p0 rounded": _plain(lambda p0: torch.tensor(float(round(p0)), requires_grad=True)),
    "rounded to 1 decimal": _plain(read=lambda g: round(g.item(), 1)),
    "whole numbers for negative p0 only": _truncated_when_negative,
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(INTEGER))
@pytest.mark.parametrize("seed", SEEDS)
def test_gradients_stored_as_integers_are_named(seed, how, clear):
    """Is a square_grads whose gradients lost their fractions (an integer buffer, int(),
    floor, round) named for it, with how they were made whole and float storage as the fix?"""
    fn, word = INTEGER[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception == "gradients-truncated-to-integers", result.message
    for words in (word, "integer", "float"):
        assert words in result.message, result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_INTEGER))
@pytest.mark.parametrize("seed", SEEDS)
def test_integer_gradients_named_only_on_their_evidence(seed, how, clear):
    result = accumulation.check_square_grads(NOT_INTEGER[how], generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception != "gradients-truncated-to-integers", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_float_buffers_pass(seed, clear):
    """A buffer of floats filled by index (NumPy float64, zeros_like with a float dtype,
    torch float32) keeps every fraction."""
    for buffer in (lambda n: np.zeros(n), lambda n: np.zeros_like(np.arange(n), dtype=float),
                   lambda n: torch.zeros(n)):
        fn = _recorded(buffer, lambda g: g.item(), _floats)
        assert accumulation.check_square_grads(fn, generator(seed), clear=clear).passed

# ---------------------------------------------------------------- q2_saved


def _span(t):
    return t.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


#: Each saved tensor's bytes from its memory layout, and the name that layout is given.
LAYOUT = {
    "stride(0) * shape[0]": ("bytes-from-first-stride", lambda t: (
        t.stride(0) * t.shape[0] if t.dim() else 1) * t.element_size()),
    "size(0) * stride()[0] itemsize": ("bytes-from-first-stride", lambda t: (
        t.size(0) * t.stride()[0]) * t.dtype.itemsize),
    "len(t) * stride(0)": ("bytes-from-first-stride",
                           lambda t: len(t) * t.stride(0) * t.element_size()),
    "largest stride * size": ("bytes-from-largest-stride", lambda t: max(
        s * n for s, n in zip(t.stride(), t.shape)) * t.element_size()),
    "untyped_storage().nbytes()": ("storage-bytes", lambda t: t.untyped_storage().nbytes()),
    "offset + span": ("storage-bytes", lambda t: _span(t) * t.element_size()),
}


@pytest.mark.parametrize("how", sorted(LAYOUT))
@pytest.mark.parametrize("seed", SEEDS)
def test_bytes_from_the_memory_layout_are_named(seed, how):
    """Is a count whose bytes come from each saved tensor's strides or storage (right on a
    contiguous tensor, wrong on a saved weight.t() or the strided batch) named for that, with
    numel() * element_size() as the fix, and the untracked check left passing?"""
    name, size = LAYOUT[how]
    mutant = functools.partial(_count, size=size)
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == name, result.message
    assert "numel() * element_size()" in result.message.replace("t.numel()", "numel()") \
        .replace("t.element_size()", "element_size()"), result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


def _base_of(t):
    return t._base if t._base is not None else t


#: Each saved view's bytes taken as those of the tensor it is a view of (``t._base``): right
#: wherever a saved view has as many elements as its base (a Linear's ``weight.t()``), wrong on
#: the strided batch, whose base holds the rows between its own.
BASE_COUNTED = {
    "_base numel": lambda t: _base_of(t).numel() * t.element_size(),
    "_base nbytes": lambda t: _base_of(t).nbytes,
    "_is_view": lambda t: (t._base.numel() if t._is_view() else t.numel()) * t.dtype.itemsize,
    "_base storage": lambda t: _base_of(t).untyped_storage().nbytes(),
}
#: Near the mistake, not it: right answers that read the base, and a count of elements.
NOT_BASE_COUNTED = {
    "base's element size": (True, lambda t: t.numel() * _base_of(t).element_size()),
    "_base numel, no element size": (False, lambda t: _base_of(t).numel()),
}


@pytest.mark.parametrize("how", sorted(BASE_COUNTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_view_counted_by_its_base_is_named(seed, how):
    """Is a count that takes each saved view's bytes from its base (the whole larger batch
    a strided batch is every other row of) named, told what a view's base is and what to
    count, with the untracked check left passing?"""
    mutant = functools.partial(_count, size=BASE_COUNTED[how])
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == "storage-bytes", result.message
    for words in ("_base", "strided batch", "t.numel() * t.element_size()"):
        assert words in result.message, result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


@pytest.mark.parametrize("how", sorted(NOT_BASE_COUNTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_near_a_base_count_is_not_named_so(seed, how):
    right, size = NOT_BASE_COUNTED[how]
    result = saved.check_count_saved(functools.partial(_count, size=size), generator(seed),
                                     track=True)
    assert result.passed == right, result.message
    assert result.misconception != "storage-bytes", result.message


def _first_stride_for_float64(t):
    """Strides for float64 tensors only: not the answers on the float32 networks."""
    rows = t.stride(0) * t.shape[0] if t.dtype == torch.float64 else t.numel()
    return rows * t.element_size()


NOT_LAYOUT = {
    "first dimension": ("bytes-from-first-dimension", lambda t: len(t) * t.element_size()),
    "strides for float64 only": (None, _first_stride_for_float64),
}
RIGHT_SIZES = {
    "t.nbytes": lambda t: t.nbytes,
    "contiguous().stride(0) * shape[0]": lambda t: (
        t.contiguous().stride(0) * t.shape[0] * t.element_size()),
    "contiguous() storage": lambda t: t.contiguous().untyped_storage().nbytes(),
    "clone() storage": lambda t: t.clone().untyped_storage().nbytes(),
}


@pytest.mark.parametrize("how", sorted(NOT_LAYOUT))
@pytest.mark.parametrize("seed", SEEDS)
def test_strides_named_only_on_their_evidence(seed, how):
    name, size = NOT_LAYOUT[how]
    result = saved.check_count_saved(functools.partial(_count, size=size), generator(seed),
                                     track=True)
    assert not result.passed, result.message
    assert result.misconception not in ("bytes-from-first-stride", "bytes-from-largest-stride")
    if name:
        assert result.misconception == name, result.message


@pytest.mark.parametrize("how", sorted(RIGHT_SIZES))
@pytest.mark.parametrize("seed", SEEDS)
def test_sizes_of_contiguous_copies_pass(seed, how):
    mutant = functools.partial(_count, size=RIGHT_SIZES[how])
    assert saved.check_count_saved(mutant, generator(seed), track=True).passed

# ---------------------------------------------------------------- q4_vjp


def _through_sqrt(product):
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        product(leaf, weights).backward()
        return leaf.grad
    return vjp_square


def _ones_vector(x, weights):
    leaf = x.detach().clone().requires_grad_()
    v = (weights ** 0.5 * leaf) ** 2
    v.backward(torch.ones_like(v))
    return leaf.grad


SQRT = {
    "(weights.sqrt() * leaf) ** 2": _through_sqrt(lambda leaf, w: ((w.sqrt() * leaf) ** 2).sum()),
    "torch.square(leaf * torch.sqrt(w))": _through_sqrt(
        lambda leaf, w: torch.square(leaf * torch.sqrt(w)).sum()),
    "pow(2) of w ** 0.5": _through_sqrt(lambda leaf, w: (w ** 0.5 * leaf).pow(2).sum()),
    "backward(ones)": _ones_vector,
}


@pytest.mark.parametrize("how", sorted(SQRT))
@pytest.mark.parametrize("seed", SEEDS)
def test_weights_through_a_square_root_are_named(seed, how):
    """Is a pullback that folds the weights in through their square roots (NaN exactly where
    a weight is negative, right elsewhere, the NaN moving with the negated weights) named?"""
    result = vjp.check_vjp(SQRT[how], generator(seed))
    assert not result.passed and result.misconception == "weights-through-sqrt", result.message
    for words in ("NaN", "negative", "sqrt", "v.backward(weights)"):
        assert words in result.message, result.message


def _sqrt_of_leaf(x, weights):
    """NaN where x is negative (a square root of the leaf): not the weights' signs."""
    leaf = x.detach().clone().requires_grad_()
    (weights * (leaf.abs().sqrt() ** 4) * torch.sign(leaf).sqrt()).sum().backward()
    return leaf.grad


NOT_SQRT = {
    "sqrt of |weights|": _through_sqrt(lambda leaf, w: ((w.abs().sqrt() * leaf) ** 2).sum()),
    "sqrt of the leaf": _sqrt_of_leaf,
    "NaN everywhere": _through_sqrt(lambda leaf, w: (w * leaf ** 2).sum() * torch.tensor(
        float("nan"), dtype=leaf.dtype)),
}


@pytest.mark.parametrize("how", sorted(NOT_SQRT))
@pytest.mark.parametrize("seed", SEEDS)
def test_weights_through_sqrt_named_only_on_its_evidence(seed, how):
    result = vjp.check_vjp(NOT_SQRT[how], generator(seed))
    assert not result.passed and result.misconception != "weights-through-sqrt", result.message

# ---------------------------------------------------------------- q5_numpy


def _np_dtype(t):
    return torch.empty(0, dtype=t.dtype).numpy().dtype


def _from_storage_bytes(t):
    src = t.detach().cpu()
    raw = bytes(src.untyped_storage())
    return np.frombuffer(raw, dtype=_np_dtype(src))[:src.numel()].copy().reshape(src.shape)


def _from_typed_storage(t):
    src = t.detach()
    values = src.untyped_storage()
    flat = torch.tensor([], dtype=src.dtype).set_(values)  # the whole storage, from 0
    return np.array(flat.tolist()[:src.numel()], dtype=_np_dtype(src)).reshape(src.shape)


def _from_data_ptr(t):
    src = t.detach()
    kind = {torch.float32: ctypes.c_float, torch.float64: ctypes.c_double,
            torch.int64: ctypes.c_int64}[src.dtype]
    buffer = (kind * src.numel()).from_address(src.data_ptr())
    return np.ctypeslib.as_array(buffer).copy().reshape(src.shape)


def _contiguous_strides(t):
    src = t.detach()
    strides = torch.empty(src.shape).stride()
    return src.as_strided(src.shape, strides).numpy().copy()


STORAGE_ORDER = {
    "frombuffer(bytes(untyped_storage()))": _from_storage_bytes,
    "storage set_ then tolist": _from_typed_storage,
    "ctypes at data_ptr()": _from_data_ptr,
    "as_strided with contiguous strides": _contiguous_strides,
    "ravel(order='K')": lambda t: t.detach().numpy().ravel(order="K").copy().reshape(t.shape),
}


@pytest.mark.parametrize("how", sorted(STORAGE_ORDER))
@pytest.mark.parametrize("seed", SEEDS)
def test_exports_in_storage_order_are_named(seed, how):
    """Is an export that reads the tensor's memory as it lies (right on a contiguous tensor,
    a transpose in its base's order, a slice's neighbours) named, with the strides and the
    fix?"""
    result = export.check_export(STORAGE_ORDER[how], generator(seed))
    assert not result.passed and result.misconception == "read-in-storage-order", result.message
    for words in ("storage", "strides", "t.detach().cpu().numpy().copy()"):
        assert words in result.message, result.message


NOT_STORAGE_ORDER = {
    "transposed back": lambda t: t.detach().T.numpy().copy().reshape(t.shape),
    "reversed for views only": lambda t: (t.detach().numpy().copy() if t.is_contiguous()
                                          else t.detach().numpy()[::-1].copy()),
}
RIGHT_EXPORTS = {
    "ravel then reshape": lambda t: t.detach().numpy().ravel().copy().reshape(t.shape),
    "np.array order='K'": lambda t: np.array(t.detach().numpy(), order="K", copy=True),
    "contiguous storage": lambda t: _from_storage_bytes(t.detach().contiguous()),
    "clone storage": lambda t: _from_storage_bytes(t.detach().clone(
        memory_format=torch.contiguous_format)),
}


@pytest.mark.parametrize("how", sorted(NOT_STORAGE_ORDER))
@pytest.mark.parametrize("seed", SEEDS)
def test_storage_order_named_only_on_its_evidence(seed, how):
    result = export.check_export(NOT_STORAGE_ORDER[how], generator(seed))
    assert not result.passed, result.message
    assert result.misconception != "read-in-storage-order", result.message


@pytest.mark.parametrize("how", sorted(RIGHT_EXPORTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_storage_reads_of_a_contiguous_copy_pass(seed, how):
    assert export.check_export(RIGHT_EXPORTS[how], generator(seed)).passed


@pytest.mark.parametrize("view", ["rows 1:", "step 2", "column 1:2"])
def test_a_view_read_from_its_storage_or_its_first_element_is_named(view):
    """A view that starts past its storage's start (the judge's own tensor) or a step slice:
    its memory read from the storage's start (bytes(untyped_storage())) or from its first
    element (data_ptr(); the student's process holds a view's storage from there) is named."""
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    t = {"rows 1:": base[1:], "step 2": base[:, ::2], "column 1:2": base[:, 1:2]}[view]
    reads = (_from_storage_bytes,) if t.is_contiguous() else (_from_storage_bytes,
                                                                _from_data_ptr)
    for read in reads:  # a contiguous view read from its first element is right
        verdict = export.judge_export(read(t), t)
        assert verdict.misconception == "read-in-storage-order", verdict.message
        assert f"strides {tuple(t.stride())}" in verdict.message, verdict.message
