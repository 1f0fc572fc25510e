"""Mistake classes of ``autograd-exercises`` answers that blind round v lost points on without
being told why, each named from its own evidence with the student's variants, and never on
its near-misses: q1 a square_grads computed in a lower precision (``low-precision``), q3
gradients read after more than one backward accumulated into them (``repeated-backward``),
q4 a pullback that keeps one of the two product-rule terms of ``leaf * leaf``
(``one-product-term``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import accumulation, multipath, vjp
from autograder.checks.seeding import generator

SEEDS = range(3)

# ---------------------------------------------------------------- q1_accumulation


def _square_grads(make_leaf, square=lambda p: p ** 2, read=lambda g: g.item()):
    """A square_grads with the contract's loop; the leaf, the square and the read given."""
    def square_grads(p0, repeats, clear):
        p = make_leaf(p0)
        grads = []
        for _ in range(repeats):
            if clear:
                p.grad = None
            square(p).backward()
            grads.append(read(p.grad))
        return grads
    return square_grads


def _leaf(dtype=None):
    return lambda p0: torch.tensor(p0, dtype=dtype, requires_grad=True)


#: A computation in a lower precision than the contract's, and the dtype the message names.
LOW_PRECISION = {
    "leaf dtype=float16": (_square_grads(_leaf(torch.float16)), "float16"),
    "leaf .half()": (_square_grads(lambda p0: torch.tensor(p0).half().requires_grad_()),
                     "float16"),
    "leaf bfloat16": (_square_grads(_leaf(torch.bfloat16)), "bfloat16"),
    "square in float16": (_square_grads(_leaf(), square=lambda p: p.half() ** 2), "float16"),
    "p0 through np.float16": (_square_grads(
        lambda p0: torch.tensor(float(np.float16(p0)), requires_grad=True)), "float16"),
    "grad cast on the way out": (_square_grads(_leaf(), read=lambda g: g.half().item()),
                                 "float16"),
    "float64 grad cast to bfloat16": (_square_grads(
        _leaf(torch.float64), read=lambda g: g.to(torch.bfloat16).item()), "bfloat16"),
}


def _half_when_negative(p0, repeats, clear):
    """float16 only for a negative p0: right on the confirming call, so not named."""
    dtype = torch.float16 if p0 < 0 else torch.float32
    return _square_grads(_leaf(dtype))(p0, repeats, clear)


#: Wrong answers that are not a lower precision (or right ones): never named low-precision.
NOT_LOW_PRECISION = {
    "truncated to int": _square_grads(lambda p0: torch.tensor(float(int(p0)),
                                                              requires_grad=True)),
    "rounded to 3 decimals": _square_grads(_leaf(), read=lambda g: round(g.item(), 3)),
    "a constant factor": _square_grads(_leaf(), square=lambda p: 2 * p ** 2),
    "float16 only for negative p0": _half_when_negative,
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(LOW_PRECISION))
@pytest.mark.parametrize("seed", SEEDS)
def test_low_precision_is_named_with_its_dtype(seed, how, clear):
    """Is a square_grads whose leaf, square or returned gradient went through float16 or
    bfloat16 named for it, with the dtype whose rounding reproduces every value, and the fix?"""
    fn, dtype = LOW_PRECISION[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=clear)
    assert not result.passed and result.misconception == "low-precision", result.message
    assert dtype in result.message and "float32" in result.message, result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_LOW_PRECISION))
@pytest.mark.parametrize("seed", SEEDS)
def test_low_precision_named_only_on_its_evidence(seed, how, clear):
    result = accumulation.check_square_grads(NOT_LOW_PRECISION[how], generator(seed),
                                             clear=clear)
    assert not result.passed and result.misconception != "low-precision", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_float64_or_default_leaf_passes(seed, clear):
    for fn in (_square_grads(_leaf()), _square_grads(_leaf(torch.float64))):
        assert accumulation.check_square_grads(fn, generator(seed), clear=clear).passed


def test_low_precision_overflow_is_told():
    """A float16 accumulation past 65504 is inf: the judge says why."""
    fn = _square_grads(_leaf(torch.float16))
    verdict = accumulation.judge_grads(fn(-4321.77, 8, False), -4321.77, 8, False)
    assert verdict.misconception == "low-precision" and "65504" in verdict.message


# ---------------------------------------------------------------- q3_multipath


def _multipath(reads, split=False):
    """multipath_grads (or split_path_grads) reading its leaves between backward calls on one
    w: ``reads`` is a list, one entry per backward, of the leaves (0 first, 1 second) read
    after it."""
    def fn(x0, y0):
        first = torch.tensor(float(x0), requires_grad=True)
        if split:
            a, b = first, torch.tensor(float(x0), requires_grad=True)
            leaves, w = (a, b), a * torch.tensor(float(y0)) + b ** 2
        else:
            y = torch.tensor(float(y0), requires_grad=True)
            leaves, w = (first, y), first * y + first ** 2
        got = [None, None]
        for k, read in enumerate(reads):
            w.backward(retain_graph=k < len(reads) - 1)
            for i in read:
                got[i] = leaves[i].grad.item()
        return got[0], got[1]
    return fn


def _backward_with_inputs_then_all(x0, y0):
    """torch.autograd.backward with inputs=[y] first, then a plain backward: x right, y
    twice."""
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    w = x * y + x ** 2
    torch.autograd.backward(w, inputs=[y], retain_graph=True)
    w.backward()
    return x.grad.item(), y.grad.item()


#: (function, split) reading a leaf after more than one backward, the other after one.
REPEATED = {
    "y after a second backward": (_multipath([[0], [1]]), False),
    "x after a second backward": (_multipath([[1], [0]]), False),
    "y after a third backward": (_multipath([[0], [], [1]]), False),
    "x twice, y three times": (_multipath([[], [0], [1]]), False),
    "inputs= then a plain backward": (_backward_with_inputs_then_all, False),
    "split: b after a second backward": (_multipath([[0], [1]], split=True), True),
}


@pytest.mark.parametrize("how", sorted(REPEATED))
@pytest.mark.parametrize("seed", SEEDS)
def test_gradients_read_after_repeated_backwards_are_named(seed, how):
    """Is a leaf's gradient read after k >= 2 backward calls on one w (k times the right one)
    while another's is right named, with the accumulation and the fix?"""
    fn, split = REPEATED[how]
    result = multipath.check_grads(fn, generator(seed), split=split)
    assert not result.passed and result.misconception == "repeated-backward", result.message
    for words in ("backward", "accumulat", "autograd.grad"):
        assert words in result.message, result.message


def _doubled_formula(x0, y0):
    """A wrong w, 2*x*y + x**2: x.grad = 2*y0 + 2*x0 is no multiple of the right one."""
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (2 * x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def _doubled_when_positive(x0, y0):
    """y.grad doubled only where y0 > 0: not the same multiple on the confirming point."""
    x, y = _multipath([[0, 1]])(x0, y0)
    return x, y * (2 if y0 > 0 else 1)


NOT_REPEATED = {
    "a wrong formula": _doubled_formula,
    "both read after two backwards": _multipath([[], [0, 1]]),
    "doubled only for a positive y0": _doubled_when_positive,
}


@pytest.mark.parametrize("how", sorted(NOT_REPEATED))
@pytest.mark.parametrize("seed", SEEDS)
def test_repeated_backward_named_only_on_its_evidence(seed, how):
    result = multipath.check_grads(NOT_REPEATED[how], generator(seed), split=False)
    assert not result.passed and result.misconception != "repeated-backward", result.message


def test_all_leaves_doubled_tells_both_readings():
    """Every gradient exactly twice: two backwards into .grad, or a w twice too big; nothing
    here tells which, so both are told and neither is named."""
    verdict = multipath.judge_multipath((2 * (2 * 1.5 - 3.25), 2 * 1.5), 1.5, -3.25)
    assert verdict.misconception is None, verdict.message
    assert "two readings" in verdict.message and "backward" in verdict.message


@pytest.mark.parametrize("seed", SEEDS)
def test_one_backward_per_leaf_that_clears_passes(seed):
    """Two backwards with the gradients cleared between (or autograd.grad) are right."""
    def cleared(x0, y0):
        x = torch.tensor(float(x0), requires_grad=True)
        y = torch.tensor(float(y0), requires_grad=True)
        w = x * y + x ** 2
        w.backward(retain_graph=True)
        gx = x.grad.item()
        x.grad = y.grad = None
        w.backward()
        return gx, y.grad.item()
    assert multipath.check_grads(cleared, generator(seed), split=False).passed


# ---------------------------------------------------------------- q4_vjp


def _vjp(product):
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        product(leaf, x).backward(weights)
        return leaf.grad
    return vjp_square


#: One factor of leaf * leaf a constant for autograd.
ONE_TERM = {
    "leaf * leaf.detach()": _vjp(lambda leaf, x: leaf * leaf.detach()),
    "leaf.detach() * leaf": _vjp(lambda leaf, x: leaf.detach() * leaf),
    "leaf * leaf.data": _vjp(lambda leaf, x: leaf * leaf.data),
    "torch.mul with a detached clone": _vjp(lambda leaf, x: torch.mul(
        leaf, leaf.clone().detach())),
    "leaf * x": _vjp(lambda leaf, x: leaf * x.detach()),
}


@pytest.mark.parametrize("how", sorted(ONE_TERM))
@pytest.mark.parametrize("seed", SEEDS)
def test_one_detached_factor_is_named(seed, how):
    result = vjp.check_vjp(ONE_TERM[how], generator(seed))
    assert not result.passed and result.misconception == "one-product-term", result.message
    for words in ("exactly half", "product rule", "detach", "constant"):
        assert words in result.message, result.message


def _halved_for_float32(x, weights):
    """Half the gradient for float32 inputs only: not half on the confirming call."""
    leaf = x.detach().clone().requires_grad_()
    other = leaf.detach() if x.dtype == torch.float32 else leaf
    (leaf * other).backward(weights)
    return leaf.grad


NOT_ONE_TERM = {
    "a quarter": _vjp(lambda leaf, x: 0.25 * leaf ** 2),
    "half for float32 only": _halved_for_float32,
}


@pytest.mark.parametrize("how", sorted(NOT_ONE_TERM))
@pytest.mark.parametrize("seed", SEEDS)
def test_one_product_term_named_only_on_its_evidence(seed, how):
    result = vjp.check_vjp(NOT_ONE_TERM[how], generator(seed))
    assert not result.passed and result.misconception != "one-product-term", result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_products_of_the_leaf_with_itself_pass(seed):
    for product in (lambda leaf, x: leaf * leaf, lambda leaf, x: torch.square(leaf),
                    lambda leaf, x: leaf.mul(leaf)):
        assert vjp.check_vjp(_vjp(product), generator(seed)).passed


def test_a_formula_that_halves_is_told_by_its_evidence():
    """0.5 * leaf ** 2 gives the same numbers: the message states them first (exactly half,
    one term missing), so it does not mislead."""
    x, weights = torch.tensor([2.0, -3.0]), torch.tensor([1.5, 2.0])
    verdict = vjp.judge_vjp(_vjp(lambda leaf, _: 0.5 * leaf ** 2)(x, weights), x, weights)
    assert verdict.misconception == "one-product-term"
    assert verdict.message.index("exactly half") < verdict.message.index("detach")
