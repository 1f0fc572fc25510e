"""Do the ``autograd-exercises`` judges accept the reference for any input, and does each known
mistake fail with its own misconception id? Property tests over bounded inputs (q2-q5)."""

from __future__ import annotations

import functools
import math
import sys

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

from autograder.checks.exercises import (
    accumulation,
    export,
    multipath,
    multipath_points,
    saved,
    saved_patterns,
    saved_reference,
    vjp,
    vjp_untouched,
)
from autograder.checks.seeding import generator

FAST = settings(deadline=None, max_examples=30)
SOME = settings(deadline=None, max_examples=8)

# ---------------------------------------------------------------- q1_accumulation


def _square_grads(update=None, make_opt=None, clear_by_opt=False):
    """A student's square_grads that changes p after each backward: ``update(p)`` under
    no_grad (a hand-written step, an in-place change of p), or ``make_opt([p]).step()``; with
    clear, p.grad set to None (or the optimizer's zero_grad() when ``clear_by_opt``)."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(p0, requires_grad=True)
        opt = make_opt([p]) if make_opt else None
        grads = []
        for _ in range(repeats):
            if clear:
                if clear_by_opt and opt is not None:
                    opt.zero_grad(set_to_none=True)
                else:
                    p.grad = None
            (p ** 2).backward()
            grads.append(p.grad.item())
            if opt is not None:
                opt.step()
            if update is not None:
                with torch.no_grad():
                    update(p)
        return grads
    return square_grads


def _sub_(p, lr):
    p -= lr * p.grad


#: Ways of moving p between the backward calls: the rule the message must mention.
MOVED = {
    "SGD default lr, zero_grad": (_square_grads(make_opt=torch.optim.SGD, clear_by_opt=True),
                                  "SGD"),
    "SGD lr=0.1": (_square_grads(make_opt=lambda ps: torch.optim.SGD(ps, lr=0.1)), "SGD"),
    "p -= 0.05 * p.grad": (_square_grads(update=lambda p: _sub_(p, 0.05)), "lr=0.05"),
    "p.data.add_": (_square_grads(update=lambda p: p.data.add_(p.grad, alpha=-0.02)),
                    "lr=0.02"),
    "SGD momentum": (_square_grads(
        make_opt=lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9)), "momentum=0.9"),
    "SGD weight decay": (_square_grads(
        make_opt=lambda ps: torch.optim.SGD(ps, lr=0.01, weight_decay=0.5)), "SGD"),
    "Adam": (_square_grads(make_opt=lambda ps: torch.optim.Adam(ps, lr=0.01)), "Adam"),
    "AdamW default": (_square_grads(make_opt=torch.optim.AdamW, clear_by_opt=True), "Adam"),
    "p.data *= 0.9": (_square_grads(update=lambda p: p.data.mul_(0.9)), "0.9"),
    "p.data *= 1.1": (_square_grads(update=lambda p: p.data.mul_(1.1)), "1.1"),
    "RMSprop": (_square_grads(make_opt=lambda ps: torch.optim.RMSprop(ps, lr=0.003)),
                "RMSprop"),
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(MOVED))
@pytest.mark.parametrize("seed", range(3))
def test_p_moved_between_backwards_is_named(seed, how, clear):
    """Is a square_grads that changes p between the backward calls (an optimizer's step, a
    hand-written update of any lr, an in-place change of p) named for it, with the rule that
    fits and what to do instead?"""
    fn, rule = MOVED[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=clear)
    assert not result.passed and result.misconception == "p-moved-between-backwards", \
        result.message
    assert rule in result.message, result.message
    assert "never" in result.message and "step()" in result.message, result.message


@pytest.mark.parametrize("how", ["SGD default lr, zero_grad", "SGD momentum", "Adam"])
def test_p_moved_is_named_from_one_answer(how):
    """The judge alone names it from one answer of four or more gradients."""
    fn, rule = MOVED[how]
    for clear in (True, False):
        verdict = accumulation.judge_grads(fn(-4.70346, 5, clear), -4.70346, 5, clear)
        assert verdict.misconception == "p-moved-between-backwards", verdict.message
        assert rule in verdict.message


def _listed(grads):
    return lambda p0, repeats, clear: [float(g) for g in grads(p0, repeats, clear)]


#: Wrong answers whose first gradient is right and later ones are not, that are no descent of
#: p (or another named mistake): they must not be named p-moved-between-backwards.
NOT_MOVED = {
    "not cleared": _listed(lambda p0, n, c: [2 * p0 * k for k in range(1, n + 1)]),
    "cleared when accumulating": _listed(lambda p0, n, c: [2 * p0] * n),
    "running sum of accumulated grads": _listed(
        lambda p0, n, c: [2 * p0 * k * (k + 1) / 2 for k in range(1, n + 1)]),
    "divided by k": _listed(lambda p0, n, c: [2 * p0 / k for k in range(1, n + 1)]),
    "squared k": _listed(lambda p0, n, c: [2 * p0 * (k if c else k * k)
                                           for k in range(1, n + 1)]),
    "noise after the first": _listed(
        lambda p0, n, c: [2 * p0 * (1 + 0.01 * np.sin(7 * k)) * (1 if c else k)
                          if k > 1 else 2 * p0 for k in range(1, n + 1)]),
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_MOVED))
@pytest.mark.parametrize("seed", range(3))
def test_wrong_grads_of_a_fixed_p_are_not_named_moved(seed, how, clear):
    """(Some are right in one mode: not clearing when clear is false.)"""
    result = accumulation.check_square_grads(NOT_MOVED[how], generator(seed), clear=clear)
    assert result.misconception != "p-moved-between-backwards", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_a_right_square_grads_passes(seed, clear):
    """The reference, and a step of lr 0 (an optimizer built and stepped without moving p):
    full marks, no name."""
    for fn in (_square_grads(), _square_grads(make_opt=lambda ps: torch.optim.SGD(ps, lr=0.0))):
        assert accumulation.check_square_grads(fn, generator(seed), clear=clear).passed


# ---------------------------------------------------------------- q2_saved

ACTS = st.sampled_from([nn.ReLU, nn.Tanh, nn.Sigmoid, None])


@st.composite
def networks(draw) -> tuple[nn.Sequential, torch.Tensor]:
    """Two or three Linear layers, activations between, float32 or float64."""
    widths = draw(st.lists(st.integers(1, 6), min_size=3, max_size=4))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    layers: list[nn.Module] = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        act = draw(ACTS)
        if act is not None:
            layers.append(act())
    batch = draw(st.integers(1, 5))
    return nn.Sequential(*layers).to(dtype), torch.ones(batch, widths[0], dtype=dtype)


def _judge_ids(seq, pred, track):
    return saved.judge_counts(seq, pred, track, "count_saved(...)").misconception


@FAST
@given(networks(), st.booleans())
def test_saved_reference_is_accepted(case, track):
    """Does the grader's own hook run pass its own judge, in both modes?"""
    pred = saved.predict(*case)
    expected, other = (pred.tracked, pred.untracked) if track else (pred.untracked, pred.tracked)
    assert pred.untracked == (0, 0)
    assert saved.judge_counts([expected, other, expected], pred, track, "call").ok


@FAST
@given(networks())
def test_saved_mutations_are_named(case):
    """Does each known mistake get its own id (where its prediction is not ambiguous)?"""
    pred = saved.predict(*case)
    t, u = pred.tracked, pred.untracked
    doubled = (2 * t[0], 2 * t[1])
    assert _judge_ids([t, t, doubled], pred, True) == "carried-over"
    assert _judge_ids([(0, 0), t, (0, 0)], pred, True) == "no-grad-wrong-run"
    assert _judge_ids([t, (0, 0), t], pred, False) == "no-grad-wrong-run"
    assert _judge_ids([t, t, t], pred, False) == "no-grad-wrong-run"
    assert _judge_ids([(float(t[0]), t[1])] * 3, pred, True) == "wrong-type"
    tracked_mistakes = {"counted-parameters": pred.params, "unique-storages": pred.unique,
                        "bytes-assume-float32": pred.four_bytes,
                        "lesson-constant": saved_reference.LESSON_COUNTS}
    # a count that left out a kind of saved tensor, or took each tensor's bytes from another
    # size, and gives the same answer on this network is told apart on the check's other
    # networks (test_counts_that_leave_out_a_kind_..., test_bytes_from_the_wrong_size_...);
    # so is the count without the saved output, on networks of the grader's own
    # (test_checks_saved_output.py)
    left_out = [pred.no_weights, pred.no_leaves, pred.activations, pred.no_output]
    left_out += [pred.bytes_by(size) for _, size, _ in saved_patterns.BYTE_SIZES]
    for name, wrong in tracked_mistakes.items():
        rivals = [v for k, v in tracked_mistakes.items() if k != name] + [t, (0, 0)] + left_out
        if wrong not in rivals and (name != "unique-storages" or wrong[0] != t[0]):
            assert _judge_ids([wrong, u, wrong], pred, True) == name, (name, pred)
    if pred.params not in (t, (0, 0)):
        assert _judge_ids([pred.params] * 3, pred, False) == "counted-parameters"


def _count(net, inputs, track, size=lambda t: t.numel() * t.element_size(), store=None):
    sizes = [] if store is None else store

    def pack(tensor):
        sizes.append(size(tensor))
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(sizes), sum(sizes)


GLOBAL: list[int] = []
SAVED_MUTANTS = {
    "carried-over": lambda n, x, track: _count(n, x, track, store=GLOBAL),
    "no-grad-wrong-run": lambda n, x, track: _count(n, x, not track),
    "bytes-assume-float32": lambda n, x, track: _count(n, x, track, size=lambda t: 4 * t.numel()),
    "lesson-constant": lambda n, x, track: (4, 272) if track else (0, 0),
    # a copy of the batch made to require grad when tracking (the caller's own left alone)
    "inputs-made-tracked": lambda n, x, track: _count(n, x.detach().clone()
                                                     .requires_grad_(track), track),
    # each packed tensor's whole storage: differs where the batch is a strided view
    "storage-bytes": lambda n, x, track: _count(
        n, x, track, size=lambda t: t.untyped_storage().nbytes()),
}


@SOME
@given(st.integers(0, 2**31 - 1))
def test_count_saved_check_end_to_end(seed):
    """Does the whole check pass the reference and name each mutant, on real networks?"""
    assert saved.check_count_saved(_count, generator(seed), track=True).passed
    assert saved.check_count_saved(_count, generator(seed), track=False).passed
    for name, mutant in SAVED_MUTANTS.items():
        result = saved.check_count_saved(mutant, generator(seed), track=True)
        assert result.misconception == name, result.message


def _count_skipping(skip):
    """A count_saved that leaves out the packed tensors ``skip(tensor, net)`` picks."""
    def count(net, inputs, track):
        sizes = []

        def pack(tensor):
            if not skip(tensor, net):
                sizes.append(tensor.numel() * tensor.element_size())
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            with torch.set_grad_enabled(track):
                net(inputs)
        return len(sizes), sum(sizes)
    return count


def _shares_a_parameter(tensor, net):
    storages = {p.untyped_storage().data_ptr() for p in net.parameters()}
    return tensor.untyped_storage().data_ptr() in storages


#: Counts that leave out a kind of saved tensor: the weights (a saved ``weight.t()`` shares the
#: parameter's storage), the leaves (the batch: no grad_fn), or both (activations only).
LEFT_OUT_MUTANTS = {
    "data_ptr-of-a-parameter": ("weights-left-out", _count_skipping(
        lambda t, net: t.data_ptr() in {p.data_ptr() for p in net.parameters()})),
    "storage-of-a-parameter": ("weights-left-out", _count_skipping(_shares_a_parameter)),
    "view-of-a-parameter": ("weights-left-out", _count_skipping(
        lambda t, net: t._base is not None and any(t._base is p for p in net.parameters()))),
    "is_leaf": ("leaves-left-out", _count_skipping(lambda t, net: t.is_leaf)),
    "no-grad_fn": ("leaves-left-out", _count_skipping(lambda t, net: t.grad_fn is None)),
    "activations-only": ("weights-and-leaves-left-out", _count_skipping(
        lambda t, net: t.is_leaf or _shares_a_parameter(t, net))),
}


@SOME
@given(st.integers(0, 2**31 - 1), st.sampled_from(sorted(LEFT_OUT_MUTANTS)))
def test_counts_that_leave_out_a_kind_of_saved_tensor_are_named(seed, how):
    """Is a count that skips the saved weights (by data_ptr, storage or base), the saved
    leaves (is_leaf, no grad_fn) or both named for what it left out, in the tracked check, and
    the untracked one (where nothing is saved) left passing?"""
    name, mutant = LEFT_OUT_MUTANTS[how]
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == name, result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


#: Per-tensor sizes that are not ``numel() * element_size()``, several spellings of each.
BYTE_MUTANTS = {
    "len(t)": ("bytes-from-first-dimension", lambda t: len(t) * t.element_size()),
    "shape[0]": ("bytes-from-first-dimension", lambda t: t.shape[0] * t.element_size()),
    "size(0) itemsize": ("bytes-from-first-dimension", lambda t: t.size(0) * t.dtype.itemsize),
    "shape[-1]": ("bytes-from-last-dimension", lambda t: t.shape[-1] * t.element_size()),
    "size(-1)": ("bytes-from-last-dimension", lambda t: t.size(-1) * t.dtype.itemsize),
    "dim()": ("bytes-from-number-of-dimensions", lambda t: t.dim() * t.element_size()),
    "len(shape)": ("bytes-from-number-of-dimensions", lambda t: len(t.shape) * t.element_size()),
    "numel()": ("bytes-without-element-size", lambda t: t.numel()),
    "nelement()": ("bytes-without-element-size", lambda t: t.nelement()),
    "prod(shape)": ("bytes-without-element-size", lambda t: math.prod(t.shape)),
    "finfo bits": ("bytes-in-bits", lambda t: t.numel() * torch.finfo(t.dtype).bits),
    "nbytes * 8": ("bytes-in-bits", lambda t: t.nbytes * 8),
    "getsizeof": ("bytes-of-python-object", sys.getsizeof),
}
BYTE_NAMES = {name for name, _ in BYTE_MUTANTS.values()}


@SOME
@given(st.integers(0, 2**31 - 1), st.sampled_from(sorted(BYTE_MUTANTS)))
def test_bytes_from_the_wrong_size_are_named(seed, how):
    """Is a count whose bytes come from another size of each saved tensor (its first or last
    dimension, its number of dimensions, its elements without their size, bits, the Python
    object) named for that size, with numel() * element_size() as the fix, in the tracked
    check, and the untracked one (where nothing is saved) left passing?"""
    name, size = BYTE_MUTANTS[how]
    mutant = functools.partial(_count, size=size)
    result = saved.check_count_saved(mutant, generator(seed), track=True)
    assert not result.passed and result.misconception == name, result.message
    assert "numel() * t.element_size()" in result.message, result.message
    assert saved.check_count_saved(mutant, generator(seed), track=False).passed


def _extra_forwards(where):
    """A count_saved that runs net(inputs) more than once inside the hooks: a debugging print
    of the output's shape after the branch (with autograd on), a warm-up forward before it,
    two shape checks after it, or the forward under set_grad_enabled(track) and again for the
    output (the student's own arrangements)."""
    def count(net, inputs, track):
        sizes = []

        def pack(tensor):
            sizes.append(tensor.numel() * tensor.element_size())
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            if where == "warm-up":
                net(inputs)
            if where == "grad-enabled-then-output":
                with torch.set_grad_enabled(track):
                    net(inputs)
                out = net(inputs)
            elif track:
                out = net(inputs)
            else:
                with torch.no_grad():
                    out = net(inputs)
            if where in ("print-after", "two-checks-after"):
                shape = tuple(net(inputs).shape)  # a debugging print of it
            if where == "two-checks-after":
                assert net(inputs).shape == out.shape == shape
        return len(sizes), sum(sizes)
    return count


@SOME
@given(st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from(["print-after", "warm-up", "two-checks-after",
                        "grad-enabled-then-output"]))
def test_extra_forwards_inside_the_hooks_are_named(seed, track, where):
    """Is a forward run again inside the hooks with autograd on (tracked = k + 1 runs,
    untracked = k runs) named for it in both modes, and never as no_grad on the wrong run?"""
    result = saved.check_count_saved(_extra_forwards(where), generator(seed), track=track)
    assert not result.passed and result.misconception == "extra-forward-in-hooks", result.message
    assert "inside the saved_tensors_hooks block" in result.message, result.message


def _no_grad_then_forward_again(net, inputs, track):
    """no_grad on the untracked forward, and a print of the shape under no_grad too: right."""
    sizes = []

    def pack(tensor):
        sizes.append(tensor.numel() * tensor.element_size())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with torch.set_grad_enabled(track):
            net(inputs)
        with torch.no_grad():
            tuple(net(inputs).shape)
    return len(sizes), sum(sizes)


def _pack_counted_twice(net, inputs, track):
    """Each pack call recorded twice: tracked is 2 runs' count, untracked 0 (not k runs)."""
    n, nbytes = _count(net, inputs, track)
    return 2 * n, 2 * nbytes


@SOME
@given(st.integers(0, 2**31 - 1))
def test_near_misses_of_an_extra_forward_are_not_named_for_it(seed):
    """A right count with an extra forward under no_grad passes; no_grad missing stays
    no-grad-wrong-run; doubled bytes and each pack counted twice are not an extra forward."""
    for track in (True, False):
        assert saved.check_count_saved(_no_grad_then_forward_again, generator(seed),
                                       track=track).passed
    missing = saved.check_count_saved(lambda n, x, track: _count(n, x, True), generator(seed),
                                      track=False)
    assert missing.misconception == "no-grad-wrong-run", missing.message
    doubled = functools.partial(_count, size=lambda t: 2 * t.numel() * t.element_size())
    for mutant in (doubled, _pack_counted_twice):
        result = saved.check_count_saved(mutant, generator(seed), track=True)
        assert not result.passed and result.misconception != "extra-forward-in-hooks", \
            result.message


def test_extra_forward_judged_from_both_modes():
    """judge_counts: (k + 1) tracked runs beside k untracked ones, in either mode's order."""
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    pred = saved.predict(net, torch.ones(3, 4))
    t = pred.tracked
    times = lambda k: (k * t[0], k * t[1])  # noqa: E731
    for k in (1, 2, 3):
        assert _judge_ids([times(k + 1), times(k), times(k + 1)], pred, True) \
            == "extra-forward-in-hooks"
        assert _judge_ids([times(k), times(k + 1), times(k)], pred, False) \
            == "extra-forward-in-hooks"
    assert _judge_ids([times(2), (0, 0), times(2)], pred, True) != "extra-forward-in-hooks"
    assert _judge_ids([t, t, t], pred, False) == "no-grad-wrong-run"
    assert _judge_ids([t, times(3), t], pred, False) != "extra-forward-in-hooks"


#: Right sizes written otherwise: they pass.
BYTES_RIGHT = {
    "nbytes": lambda t: t.nbytes,
    "prod(shape)": lambda t: math.prod(t.shape) * t.element_size(),
    "rows * columns": lambda t: t.shape[0] * t.shape[-1] * t.element_size(),
}
#: Wrong sizes no single byte mistake gives on every network: never named as one.
BYTES_NEAR = {
    "sum(shape)": lambda t: sum(t.shape) * t.element_size(),
    "max(shape)": lambda t: max(t.shape) * t.element_size(),
    "len(t) * 4": lambda t: len(t) * 4,  # the first dimension and float32 assumed
    "numel * len": lambda t: t.numel() * len(t),
}


@SOME
@given(st.integers(0, 2**31 - 1))
def test_byte_mistakes_are_named_only_on_their_own_evidence(seed):
    """Do right sizes written otherwise pass, and sizes that no single byte mistake gives on
    every network of the check stay unnamed as one?"""
    for size in BYTES_RIGHT.values():
        assert saved.check_count_saved(functools.partial(_count, size=size), generator(seed),
                                       track=True).passed
    for how, size in BYTES_NEAR.items():
        result = saved.check_count_saved(functools.partial(_count, size=size), generator(seed),
                                         track=True)
        assert not result.passed and result.misconception not in BYTE_NAMES, (how,
                                                                               result.message)


@FAST
@given(networks())
def test_left_out_kinds_are_named_only_where_they_predict_their_own_answer(case):
    """Is each left-out kind's prediction named in the judge, and never the right count?"""
    pred = saved.predict(*case)
    t, u = pred.tracked, pred.untracked
    assert saved.judge_counts([t, u, t], pred, True, "call").ok
    left_out = {"weights-left-out": pred.no_weights, "leaves-left-out": pred.no_leaves,
                "weights-and-leaves-left-out": pred.activations}
    others = [pred.params, pred.unique, pred.four_bytes, pred.storage, saved_reference.LESSON_COUNTS,
              t, (0, 0), pred.one_element_left_out(), pred.no_output] + [
        pred.bytes_by(size) for _, size, _ in saved_patterns.BYTE_SIZES]
    for name, wrong in left_out.items():
        rivals = others + [v for k, v in left_out.items() if k != name]
        if wrong not in rivals:
            assert _judge_ids([wrong, u, wrong], pred, True) == name, (name, pred)


# ---------------------------------------------------------------- q3_multipath

COORD = st.floats(-500, 500, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


@FAST
@given(COORD, COORD)
def test_multipath_reference_is_accepted(x0, y0):
    """Do the float64 reference and a float32 torch run both pass?"""
    x = torch.tensor(x0, requires_grad=True)
    y = torch.tensor(y0, requires_grad=True)
    (x * y + x ** 2).backward()
    assert multipath.judge_multipath((x.grad.item(), y.grad.item()), x0, y0).ok
    assert multipath.judge_split(multipath_points.expected_split(x0, y0), x0, y0).ok


@FAST
@given(COORD, COORD)
@example(2.0, 6.0)  # the lesson's split answer is also the swapped paths here
def test_multipath_mutations_are_named(x0, y0):
    """Does each known mistake get its own id?"""
    assume(multipath_points.distinct(x0, y0) and abs(abs(y0) - abs(2 * x0)) > 1e-2)
    assume(abs(x0 + y0) > 1e-2 and abs(x0 - y0) > 1e-2)
    whole, total = multipath.judge_multipath, 2 * x0 + y0
    assert whole((y0, x0), x0, y0).misconception == "one-path"
    assert whole((2 * x0, x0), x0, y0).misconception == "one-path"
    assert whole((x0, total), x0, y0).misconception == "swapped-order"
    assert whole((torch.tensor(total), x0), x0, y0).misconception == "wrong-type"
    split = multipath.judge_split
    assert split((2 * x0, y0), x0, y0).misconception == "paths-swapped"
    assert split((total, total), x0, y0).misconception == "one-leaf"
    assert split((total, None), x0, y0).misconception == "one-leaf"
    # the lesson's answers, where they are not also another mistake's here ((2, 6): the
    # lesson's split (4, 6) is the swapped paths (2*x0, y0) too, and both names are right)
    if (x0, y0) != (3.0, 4.0) and (4.0, 6.0) not in {(2 * x0, y0), (total, total)}:
        assert split((4.0, 6.0), x0, y0).misconception == "lesson-constant"
    if (x0, y0) != (3.0, 4.0) and (10.0, 3.0) not in {(y0, x0), (2 * x0, x0), (x0, total)}:
        assert whole((10.0, 3.0), x0, y0).misconception == "lesson-constant"


def _int_leaves(x0, y0):
    x = torch.tensor(x0, requires_grad=True)  # raises for ints
    y = torch.tensor(y0, requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def test_int_inputs_not_converted_is_named():
    """Is a function that fails only for int arguments told to convert?"""
    result = multipath.check_grads(_int_leaves, generator(0), split=False)
    assert result.misconception == "int-not-converted" and result.traceback


def _split_float32(x0, y0):
    """The contract's split in float32: leaves made with float(x0), y detached."""
    y = torch.tensor(float(y0))
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * y + b ** 2).backward()
    return a.grad.item(), b.grad.item()


def _float32_total(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    (x * torch.tensor(float(y0)) + x ** 2).backward()
    return x.grad


def _square_by_subtraction(x0, y0):
    """b.grad as x.grad - a.grad: the total minus the product path, in float32 tensors."""
    a = torch.tensor(float(x0), requires_grad=True)
    (a * torch.tensor(float(y0))).backward()
    return a.grad.item(), (_float32_total(x0, y0) - a.grad).item()


def _product_by_subtraction(x0, y0):
    """a.grad as the total minus b.grad, subtracted as Python floats of float32 gradients."""
    b = torch.tensor(float(x0), requires_grad=True)
    (b ** 2).backward()
    return _float32_total(x0, y0).item() - b.grad.item(), b.grad.item()


@pytest.mark.parametrize("seed", range(6))
def test_hidden_points_separate_the_paths_by_orders_of_magnitude(seed):
    """Do the drawn points include, both ways round, one path's gradient far below the
    other's (where a subtraction of float32 totals loses the small one), and does a correct
    float32 split pass there?"""
    points = multipath_points.draw_points(generator(seed))
    ratios = [abs(2 * x0) / abs(y0) for x0, y0 in points]
    assert min(ratios) < 1e-3 and max(ratios) > 1e3, points
    for split in (False, True):
        fn = _split_float32 if split else (lambda x0, y0: (_float32_total(x0, y0).item(),
                                                             float(np.float32(x0))))
        assert multipath.check_grads(fn, generator(seed), split=split).passed


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mutant", [_square_by_subtraction, _product_by_subtraction])
def test_split_by_subtracting_float32_totals_is_named(seed, mutant):
    """Is one path's gradient computed as the total minus the other's caught and named,
    whichever path is the small one?"""
    result = multipath.check_grads(mutant, generator(seed), split=True)
    assert not result.passed and result.misconception == "cancellation", result.message
    assert "subtracting totals" in result.message and "float32" in result.message


@FAST
@given(st.floats(10, 1000), st.floats(1e-6, 1e-4), st.booleans(), st.booleans())
def test_subtraction_named_wherever_it_loses_digits(big, ratio, square_small, negative):
    """At any point where one path is 4-6 orders of magnitude below the other, a correct
    float32 split passes, and a subtracted one, when it is off, is named."""
    small = big * ratio * (-1 if negative else 1)
    x0, y0 = (small / 2, big) if square_small else (big / 2, small)
    assert multipath.judge_split(_split_float32(x0, y0), x0, y0).ok
    for mutant in (_square_by_subtraction, _product_by_subtraction):
        verdict = multipath.judge_split(mutant(x0, y0), x0, y0)
        assert verdict.ok or verdict.misconception == "cancellation", verdict.message


def _split_derived(derive, second_from_first=True):
    """A split_path_grads whose second leaf is made from the first (``derive(leaf)``: a clone,
    a view, ``* 1``...), with retain_grad: b from a, or a from b."""
    def split_path_grads(x0, y0):
        y = torch.tensor(float(y0))
        first = torch.tensor(float(x0), requires_grad=True)
        second = derive(first)
        second.retain_grad()
        a, b = (first, second) if second_from_first else (second, first)
        (a * y + b ** 2).backward()
        return a.grad.item(), b.grad.item()
    return split_path_grads


#: Second "leaves" that stay in the first one's graph.
DERIVED = {
    "clone": lambda t: t.clone(),
    "view_as": lambda t: t.view_as(t),
    "times one": lambda t: t * 1,
    "plus zero": lambda t: t + 0,
    "index": lambda t: t[...],
}


@pytest.mark.parametrize("b_from_a", [True, False])
@pytest.mark.parametrize("how", sorted(DERIVED))
@pytest.mark.parametrize("seed", range(3))
def test_second_leaf_made_from_the_first_is_named(seed, how, b_from_a):
    """Is a b made from a (a clone, a view, a * 1...), so that a.grad is the whole multipath
    gradient while b.grad is right (or the other way round), named for it, with the fix?"""
    fn = _split_derived(DERIVED[how], b_from_a)
    result = multipath.check_grads(fn, generator(seed), split=True)
    assert not result.passed and result.misconception == "paths-not-split", result.message
    assert "own leaf" in result.message and "clone" in result.message, result.message
    derived, own = ("b", "a") if b_from_a else ("a", "b")
    assert f"{own}.grad is" in result.message, result.message


def _split_separate(make_second):
    def split_path_grads(x0, y0):
        y = torch.tensor(float(y0))
        a = torch.tensor(float(x0), requires_grad=True)
        b = make_second(a)
        (a * y + b ** 2).backward()
        return a.grad.item(), b.grad.item()
    return split_path_grads


@pytest.mark.parametrize("seed", range(3))
def test_second_leaf_of_its_own_passes(seed):
    """A second leaf cut from the first's graph (detach, a copy) is right: full marks."""
    for make in (lambda a: a.detach().clone().requires_grad_(),
                 lambda a: a.detach().requires_grad_(),
                 lambda a: torch.tensor(a.item(), requires_grad=True)):
        assert multipath.check_grads(_split_separate(make), generator(seed), split=True).passed


@FAST
@given(COORD, COORD)
@example(1.0, 4.0)  # (y0, 2*x0 + y0) is the lesson's split (4, 6) here
@example(3.0, -2.0)  # (2*x0 + y0, 2*x0) is too
def test_paths_not_split_named_only_on_its_answers(x0, y0):
    """(total, 2*x0) and (y0, total) are named paths-not-split; the other mistakes keep their
    names."""
    assume(multipath_points.distinct(x0, y0) and abs(abs(y0) - abs(2 * x0)) > 1e-2)
    total, split = 2 * x0 + y0, multipath.judge_split
    for got in ((total, 2 * x0), (y0, total)):
        verdict = split(got, x0, y0)
        if got == multipath.LESSON_SPLIT and (x0, y0) != (3.0, 4.0):
            # the lesson's constants too: both readings are told, neither is named
            assert verdict.misconception is None and "two readings" in verdict.message
            assert "lesson" in verdict.message and "own leaf" in verdict.message
        else:
            assert verdict.misconception == "paths-not-split", verdict.message
    assert split((total, total), x0, y0).misconception == "one-leaf"
    assert split((2 * x0, y0), x0, y0).misconception == "paths-swapped"
    assert split((y0, 2 * x0), x0, y0).ok


# ---------------------------------------------------------------- q4_vjp


@st.composite
def vjp_inputs(draw) -> tuple[torch.Tensor, torch.Tensor]:
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    values = st.floats(-10, 10, allow_nan=False, width=32)
    return (torch.from_numpy(draw(arrays(dtype, shape, elements=values))),
            torch.from_numpy(draw(arrays(dtype, shape, elements=values))))


def _vjp(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad


@FAST
@given(vjp_inputs())
def test_vjp_reference_is_accepted(case):
    """Does autograd's own answer, in x's dtype, pass the float64 oracle?"""
    x, weights = case
    before = vjp_untouched.snapshot(x, weights)
    got = _vjp(x, weights)
    assert vjp.judge_vjp(got, x, weights).ok
    assert vjp_untouched.judge_untouched(before, x, weights, got).ok


@FAST
@given(vjp_inputs())
def test_vjp_mutations_are_named(case):
    """Does each known mistake get its own id?"""
    x, weights = case
    assume(not vjp.arrays_close(2 * x.double().numpy(), vjp.expected_vjp(x, weights), 1e-4, 1e-4))
    assert vjp.judge_vjp(2 * x, x, weights).misconception == "weights-ignored"
    assert vjp.judge_vjp(_vjp(x, weights).sum(), x, weights).misconception in (
        "wrong-shape", "weights-ignored", None)
    other = torch.float32 if x.dtype == torch.float64 else torch.float64
    assert vjp.judge_vjp(_vjp(x, weights).to(other), x, weights).misconception == "dtype-lost"
    before = vjp_untouched.snapshot(x, weights)
    x.requires_grad_()
    (x ** 2).backward(weights)
    assert vjp_untouched.judge_untouched(before, x, weights, x.grad).misconception == "modified-input"


def _aliased_product(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(torch.ones_like(leaf))
    vjp = weights  # a second name for the caller's tensor, not a copy
    vjp *= leaf.grad
    return vjp


def _mul_into_weights(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).sum().backward()
    return weights.mul_(leaf.grad)


def _through_a_view(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).sum().backward()
    flat = weights.view(-1)  # a view: writes reach weights
    flat *= leaf.grad.reshape(-1)
    return flat.view_as(x).clone()


def _weights_made_a_leaf(x, weights):
    leaf = x.detach().clone().requires_grad_()
    weights.requires_grad_()
    (weights * leaf ** 2).sum().backward()
    return leaf.grad


def _x_made_the_leaf(x, weights):
    x.requires_grad_()
    (x ** 2).backward(weights)
    return x.grad.clone()


def _weights_halved_in_place(x, weights):
    leaf = x.detach().clone().requires_grad_()
    weights /= 2  # in place: the caller's weights halved
    (leaf ** 2).backward(2 * weights)
    return leaf.grad


def _both_changed(x, weights):
    x.requires_grad_()
    (x ** 2).sum().backward()
    return weights.mul_(x.grad).clone()


#: What each changes of the caller's: (misconception, words the message must hold).
CHANGES_AN_ARGUMENT = {
    "vjp = weights; vjp *= ...": (_aliased_product, "modified-weights",
                                  ("weights", "not a copy", "weights * leaf.grad", "clone")),
    "weights.mul_": (_mul_into_weights, "modified-weights",
                     ("weights", "in place", "weights * leaf.grad", "clone")),
    "weights.view(-1) *=": (_through_a_view, "modified-weights",
                            ("weights", "in place", "clone")),
    "weights.requires_grad_()": (_weights_made_a_leaf, "modified-weights",
                                 ("weights.requires_grad", "constant")),
    "weights /= 2": (_weights_halved_in_place, "modified-weights",
                     ("weights", "in place", "weights * leaf.grad", "clone")),
    "x.requires_grad_()": (_x_made_the_leaf, "modified-input",
                           ("tensor x", vjp.LEAF_HINT)),
    "x and weights": (_both_changed, "modified-input",
                      ("tensor x", vjp.LEAF_HINT, "also changed the caller's weights",
                       "weights * leaf.grad")),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("how", CHANGES_AN_ARGUMENT)
def test_the_argument_changed_is_the_one_named(seed, how):
    """Does a vjp_square that writes into (or marks) the caller's weights fail the
    leaves-inputs check as ``modified-weights``, naming weights with advice about weights, not
    about x's leaf; and one that marks x keep ``modified-input`` and its leaf advice?"""
    mutant, name, words = CHANGES_AN_ARGUMENT[how]
    result = vjp_untouched.check_untouched(mutant, generator(seed))
    assert not result.passed and result.misconception == name, result.message
    assert all(w in result.message for w in words), result.message
    if name == "modified-weights":
        assert "tensor x" not in result.message and vjp.LEAF_HINT not in result.message


def _product_of_a_copy(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).sum().backward()
    vjp = weights.clone()
    vjp *= leaf.grad
    return vjp


def _product_out_of_place(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).sum().backward()
    vjp = weights
    vjp = vjp * leaf.grad  # a new tensor: weights left alone
    return vjp


@pytest.mark.parametrize("mutant", [_product_of_a_copy, _product_out_of_place])
def test_products_that_leave_weights_alone_pass(mutant):
    """Near misses of the aliased product: a clone, or an out-of-place product, pass both."""
    assert vjp_untouched.check_untouched(mutant, generator(4)).passed
    assert vjp.check_vjp(mutant, generator(4)).passed


def _contracted(contraction):
    """A vjp_square that backpropagates ``contraction(weights, v)`` instead of weighting
    each entry of v by its own weight."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        contraction(weights, leaf ** 2).backward()
        return leaf.grad
    return vjp_square


MIXING = {  # right for 1-D (all but the last), wrong for 2-D: entries combined across rows
    "inner": lambda w, v: torch.inner(w, v).sum(),
    "w @ v.T": lambda w, v: (w @ v.T).sum(),  # v.T of a 1-D v: deprecated, still v
    "w.T @ v": lambda w, v: (w.T @ v).sum(),
    "sum * sum": lambda w, v: w.sum() * v.sum(),
}


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("form", MIXING)
def test_weights_mixed_across_entries_is_named(seed, form):
    """Is a contraction that mixes weights of different entries named, with the fix?"""
    result = vjp.check_vjp(_contracted(MIXING[form]), generator(seed))
    assert not result.passed and result.misconception == "weights-mixed", result.message
    assert "v.backward(weights)" in result.message and "(weights * v).sum()" in result.message


@FAST
@given(st.integers(2, 4), st.sampled_from([torch.float32, torch.float64]))
def test_square_matrix_products_are_named(n, dtype):
    """For square inputs, W @ v and v @ W also mix rows (their gradient is a row or column
    of sums, transposed): named the same."""
    x, weights = torch.randn(n, n, dtype=dtype), torch.rand(n, n, dtype=dtype) + 0.5
    for contraction in (lambda w, v: (w @ v).sum(), lambda w, v: (v @ w).sum(),
                        *MIXING.values()):
        got = _contracted(contraction)(x, weights)
        assert vjp.judge_vjp(got, x, weights).misconception == "weights-mixed"


def _twice_by_backward(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (weights * leaf ** 2).backward(weights)  # the weights in v and again as the upstream vector
    return leaf.grad


def _twice_by_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights ** 2)
    return leaf.grad


def _twice_by_grad(x, weights):
    leaf = x.detach().clone().requires_grad_()
    return torch.autograd.grad(weights * leaf ** 2, leaf, grad_outputs=weights)[0]


def _twice_inside_the_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    ((weights * leaf) ** 2).sum().backward()
    return leaf.grad


TWICE = {"backward": _twice_by_backward, "weights ** 2": _twice_by_square,
         "autograd.grad": _twice_by_grad, "(w * x) ** 2": _twice_inside_the_square}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("form", TWICE)
def test_weights_applied_twice_is_named(seed, form):
    """Is a gradient of 2*x*weights**2 (the weights in v and again in backward) named, with
    both fixes?"""
    result = vjp.check_vjp(TWICE[form], generator(seed))
    assert not result.passed and result.misconception == "weights-applied-twice", result.message
    assert "v.backward(weights)" in result.message, result.message
    assert "(weights * x ** 2).sum().backward()" in result.message, result.message


@FAST
@given(vjp_inputs())
def test_weights_applied_twice_named_only_on_its_evidence(case):
    """Named only where 2*x*weights**2 is wrong (some weight not 0 or 1) and matches in all
    entries: never for the right answer, nor for weights applied three times."""
    x, weights = case
    assert vjp.judge_vjp(_vjp(x, weights), x, weights).ok
    twice = vjp.judge_vjp(_twice_by_backward(x, weights), x, weights)
    assert twice.ok or twice.misconception in ("weights-applied-twice", "weights-ignored"), \
        twice.message
    thrice = _twice_by_backward(x, weights) * weights
    twice_values = 2 * x.double().numpy() * weights.double().numpy() ** 2
    assert vjp.judge_vjp(thrice, x, weights).misconception != "weights-applied-twice" or \
        vjp.arrays_close(thrice.double().numpy(), twice_values, 1e-4, 1e-4)


# ---------------------------------------------------------------- q5_numpy


@st.composite
def tensors(draw) -> torch.Tensor:
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    elements = st.integers(-100, 100) if dtype == np.int64 else st.floats(-10, 10, width=32)
    t = torch.from_numpy(draw(arrays(dtype, shape, elements=elements)))
    if dtype != np.int64 and draw(st.booleans()):
        t.requires_grad_()
    return t.t() if draw(st.booleans()) else t


@FAST
@given(tensors())
def test_export_reference_is_accepted(t):
    """Does the lesson's export pass both judges, for views and tracked tensors?"""
    before = t.detach().clone()
    got = t.detach().cpu().numpy().copy()
    assert export.judge_export(got, t).ok
    assert export.judge_independent(got, t, before, None, None, t.requires_grad).ok


@FAST
@given(tensors())
def test_export_mutations_are_named(t):
    """Does each known mistake get its own id?"""
    before = t.detach().clone()
    other = np.float64 if t.dtype != torch.float64 else np.float32
    assert export.judge_export(t.detach().numpy().astype(other), t).misconception == \
        "dtype-changed"
    shared = t.detach().numpy()
    assert export.judge_independent(shared, t, before, None, None, t.requires_grad) \
        .misconception == "shares-storage"


@pytest.mark.parametrize("name, mutant", [
    ("numpy-on-tracked", lambda t: t.numpy().copy()),
    ("shares-storage", lambda t: t.detach().numpy()),
])
def test_export_checks_name_mutants(name, mutant):
    """Does the whole check name a missing detach and a missing copy?"""
    results = [export.check_export(mutant, generator(5)),
               export.check_independent(mutant, generator(5))]
    assert name in [r.misconception for r in results], [r.message for r in results]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("split", [False, True])
def test_feedback_hands_over_no_answer_key(seed, split):
    """The resubmission attack on one seed (a platform that drew the same hidden inputs every
    attempt): a function that looks its answers up in a table built from earlier feedback,
    the inputs and expected values each failing message shows. The values are shown to 3
    significant digits, outside the check's tolerance, so the table never earns the points."""
    import re

    from autograder.checks.exercises import multipath

    call = re.compile(r"_grads\((-?[\d.]+), (-?[\d.]+)\) returned .*?; expected \((\S+), (\S+)\)")
    table: dict[tuple[str, str], tuple[float, float]] = {}

    def from_table(x0, y0):
        return table.get((multipath.fmt(x0), multipath.fmt(y0)), (0.0, 0.0))

    for _ in range(8):
        result = multipath.check_grads(from_table, np.random.default_rng(seed), split=split)
        assert not result.passed, table
        x0, y0, a, b = call.search(result.message).groups()
        table[(x0, y0)] = (float(a), float(b))


def test_the_saved_reference_keeps_nothing_after_it_counted():
    """Does the grader's own pack-hook count of a network leave none of its private copies
    alive? A saved tensor handed back to the graph with its grad_fn would make a cycle through
    the C++ graph that Python's collector cannot free: in a run of 150 submissions the judge
    grew by ~120 KB per submission, its tensors and parameters never freed."""
    import gc

    from autograder.checks.exercises.saved_reference import draw_case, predict

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, torch.Tensor))

    rng = np.random.default_rng(3)
    net, inputs = draw_case(rng, dtype=torch.float64, min_linear=2)
    predict(net, inputs)  # first-call caches of torch's own
    before = alive()
    for _ in range(20):
        predict(net, inputs)
    assert alive() - before < 5


def test_the_saved_reference_counts_on_the_network_without_changing_it():
    """``saved_reference`` counts on the grader's own network, no copy: the counts are those of
    a deepcopy, and the network is left as it was (weights, no .grad, modes)."""
    import copy

    from autograder.checks.exercises.saved_reference import draw_case, predict

    for seed in range(6):
        rng = np.random.default_rng(seed)
        net, inputs = draw_case(rng, dtype=[torch.float32, torch.float64][seed % 2],
                                min_linear=1 + seed % 3)
        before = copy.deepcopy(net)
        assert predict(net, inputs) == predict(copy.deepcopy(net), inputs)
        assert all(torch.equal(a, b) and a.grad is None for a, b in
                   zip(net.parameters(), before.parameters()))
        assert [m.training for m in net.modules()] == [m.training for m in before.modules()]
