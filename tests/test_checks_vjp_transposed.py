"""q4 ``vjp_square`` handing backward the transposed weights: blind round zd's
``v.backward(weights.T)`` ("v^T J: the weights as a row vector") is right for 1-D x, pairs
each entry with the weight of its transposed position on a square 2-D x and raises torch's
"Mismatch in shape" on a non-square one. Named ``weights-transposed`` on either path, the
raised one confirmed on a square x of its own; near-misses: a transpose undone, weights
reshaped to x's reversed shape (right on a square x) and weights mixed across entries are not
taken for it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import vjp, vjp_untouched
from autograder.checks.exercises.vjp_transposed import TRANSPOSED
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(6)


def _backward_with(weights_of):
    """A vjp_square calling ``v.backward(weights_of(weights))`` on a fresh leaf."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        v = leaf ** 2
        v.backward(weights_of(weights))
        return leaf.grad
    return vjp_square


def _grad_outputs_t(x, weights):
    leaf = x.detach().clone().requires_grad_(True)
    w = weights.t() if weights.dim() == 2 else weights
    (grad,) = torch.autograd.grad(leaf * leaf, leaf, grad_outputs=w)
    return grad


def _v_transposed(x, weights):
    leaf = x.clone().detach().requires_grad_()
    v = torch.square(leaf)
    v.t().backward(weights)
    return leaf.grad.clone()


TRANSPOSING = {
    "v.backward(weights.T)": _backward_with(lambda w: w.T),
    "v.backward(weights.t())": _backward_with(lambda w: w.t()),
    "dims reversed by permute": _backward_with(
        lambda w: w.permute(*range(w.dim() - 1, -1, -1))),
    "grad_outputs=weights.t() for 2-D": _grad_outputs_t,
    "v.t().backward(weights)": _v_transposed,
}


@pytest.mark.parametrize("how", sorted(TRANSPOSING))
@pytest.mark.parametrize("seed", SEEDS)
def test_transposed_weights_are_named(seed, how):
    result = vjp.check_vjp(TRANSPOSING[how], generator(seed))
    assert not result.passed and result.misconception == TRANSPOSED, result.message
    for words in ("transpose", "output's shape", "v^T J", "v.backward(weights)"):
        assert words in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_the_leaves_inputs_check_names_it_where_it_raised(seed):
    result = vjp_untouched.check_untouched(TRANSPOSING["v.backward(weights.T)"],
                                           generator(seed))
    assert not result.passed and result.misconception in (TRANSPOSED, None), result.message
    if "Mismatch in shape" in result.message:
        assert result.misconception == TRANSPOSED, result.message


def test_both_paths_are_met():
    """Some seeds draw a square 2-D case first, others a non-square one that raises."""
    seen = {("Mismatch in shape" in vjp.check_vjp(TRANSPOSING["v.backward(weights.T)"],
                                                  generator(s)).message) for s in SEEDS}
    assert seen == {True, False}


def test_named_through_the_worker():
    source = ('def vjp_square(x, weights):\n'
              '    leaf = x.detach().clone().requires_grad_()\n'
              '    v = leaf ** 2\n'
              '    v.backward(weights.T)\n'
              '    return leaf.grad\n')
    remote = vjp.check_vjp(Loopback(source).function("vjp_square"), np.random.default_rng(6))
    assert (remote.passed, remote.misconception) == (False, TRANSPOSED), remote.message


def _mixed(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (weights @ leaf ** 2).sum().backward() if leaf.dim() == 2 else (
        weights @ leaf ** 2).backward()
    return leaf.grad


NOT_TRANSPOSED = {
    "reversed shape": (_backward_with(lambda w: w.reshape(tuple(reversed(w.shape)))), False),
    "weights mixed by weights @ v": (_mixed, False),
    "a transpose undone": (_backward_with(lambda w: w.T.T if w.dim() == 2 else w), True),
    "weights.mT.mT on 2-D, contiguous copy": (
        _backward_with(lambda w: w.mT.mT.contiguous() if w.dim() == 2 else w), True),
}


@pytest.mark.parametrize("how", sorted(NOT_TRANSPOSED))
@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_are_not_taken_for_a_transpose(seed, how):
    fn, right = NOT_TRANSPOSED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert result.passed == right, result.message
    assert result.misconception != TRANSPOSED, result.message


# Blind round zn: the transposed weights read back into x's shape (``weights.t().reshape(
# v.shape)``): right on 1-D x, no shape error on any 2-D x, each entry meeting the weight of
# another position. The same class as a bare transpose: named ``weights-transposed``.


def _grad_of(weights_of):
    """A vjp_square through torch.autograd.grad with ``grad_outputs=weights_of(weights)``."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(torch.square(leaf), leaf, grad_outputs=weights_of(weights))
        return grad
    return vjp_square


def _two_d(rearrange):
    return lambda w: rearrange(w) if w.dim() == 2 else w


REARRANGING = {
    "weights.t().reshape(v.shape)": _backward_with(lambda w: w.t().reshape(w.shape)),
    "weights.T.contiguous().view(v.shape)": _backward_with(lambda w: w.T.contiguous().view(
        w.shape)),
    "weights.mT.flatten().view_as(v)": _backward_with(_two_d(lambda w: w.mT.flatten().reshape(
        w.shape))),
    "weights.permute(1, 0).reshape, grad_outputs": _grad_of(_two_d(
        lambda w: w.permute(1, 0).reshape(w.shape))),
    "weights.reshape(reversed shape).t()": _backward_with(_two_d(
        lambda w: w.reshape(w.shape[1], w.shape[0]).t())),
}


@pytest.mark.parametrize("how", sorted(REARRANGING))
@pytest.mark.parametrize("seed", SEEDS)
def test_rearranged_weights_are_named(seed, how):
    result = vjp.check_vjp(REARRANGING[how], generator(seed))
    assert not result.passed and result.misconception == TRANSPOSED, result.message
    for words in ("transpose", "output's shape", "v^T J", "v.backward(weights)"):
        assert words in result.message, result.message


def test_a_rearrangement_on_a_non_square_x_says_what_it_did():
    """Some seed fails first on a non-square x: the message names the rearrangement."""
    messages = [vjp.check_vjp(REARRANGING["weights.t().reshape(v.shape)"], generator(s)).message
                for s in SEEDS]
    told = [m for m in messages if "weights.t().reshape(x.shape)" in m]
    assert told, messages
    for words in ("rearranged", "row by row", "weights[i] with x[i]", "v.backward(weights)"):
        assert words in told[0], told[0]


def test_student_04_named_through_the_worker():
    source = ('def vjp_square(x, weights):\n'
              '    leaf = x.detach().clone().requires_grad_()\n'
              '    v = leaf ** 2\n'
              '    v.backward(weights.t().reshape(v.shape))\n'
              '    return leaf.grad\n')
    remote = vjp.check_vjp(Loopback(source).function("vjp_square"), np.random.default_rng(11))
    assert (remote.passed, remote.misconception) == (False, TRANSPOSED), remote.message


NOT_REARRANGED = {
    "weights.reshape(v.shape)": (_backward_with(lambda w: w.reshape(w.shape)), True),
    "weights.flatten().view_as(v)": (_backward_with(lambda w: w.flatten().view_as(w)), True),
    "weights.t().t().reshape(v.shape)": (_backward_with(_two_d(
        lambda w: w.t().t().reshape(w.shape))), True),
    "weights rolled by one": (_backward_with(lambda w: w.flatten().roll(1).reshape(w.shape)),
                              False),
    "weights flipped": (_backward_with(lambda w: w.flatten().flip(0).reshape(w.shape)), False),
}


@pytest.mark.parametrize("how", sorted(NOT_REARRANGED))
@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_are_not_taken_for_a_rearrangement(seed, how):
    fn, right = NOT_REARRANGED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert result.passed == right, result.message
    assert result.misconception != TRANSPOSED, result.message
