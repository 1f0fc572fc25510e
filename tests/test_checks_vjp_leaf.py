"""q4 ``vjp_square`` with its leaf cloned from x without ``detach``: blind round zk's
``x.clone().requires_grad_(True)`` is a fresh leaf for an x that does not require grad (right
answers), but for an x that requires grad the clone is a non-leaf in x's graph: its ``.grad``
is None and the pullback lands in the caller's ``x.grad``. Named ``leaf-not-detached`` by
both q4 checks; near-misses pass or keep their own names."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp, vjp_untouched
from autograder.checks.seeding import generator

SEEDS = range(3)
NAME = "leaf-not-detached"


def _leaf_from(copy_of):
    def vjp_square(x, weights):
        leaf = copy_of(x).requires_grad_(True)
        (leaf ** 2).backward(weights)
        return leaf.grad
    return vjp_square


def _backward_call(x, weights):
    leaf = torch.clone(x)
    leaf.requires_grad_()
    torch.autograd.backward(leaf.pow(2), weights)
    return leaf.grad


NOT_DETACHED = {
    "x.clone() (round zk)": _leaf_from(lambda x: x.clone()),
    "torch.clone(x), autograd.backward": _backward_call,
    "x * 1.0": _leaf_from(lambda x: x * 1.0),
    "x.to(copy=True)": _leaf_from(lambda x: x.to(x.dtype, copy=True)),
    "x.clone(memory_format=contiguous)": _leaf_from(
        lambda x: x.clone(memory_format=torch.contiguous_format)),
}


def _retained(x, weights):
    leaf = x.clone().requires_grad_()
    leaf.retain_grad()
    (leaf ** 2).backward(weights)
    return leaf.grad


def _x_itself(x, weights):
    x.requires_grad_()
    (x ** 2).backward(weights)
    return x.grad


def _no_return(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)


def _by_autograd_grad(x, weights):
    leaf = x.clone().requires_grad_()
    return torch.autograd.grad(leaf ** 2, leaf, weights)[0]


CHECKS = {"values": vjp.check_vjp, "untouched": vjp_untouched.check_untouched}


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("how", sorted(NOT_DETACHED))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_leaf_cloned_without_detach_is_named(seed, how, check):
    result = CHECKS[check](NOT_DETACHED[how], generator(seed))
    assert not result.passed and result.misconception == NAME, result.message
    for words in ("non-leaf", "x.grad", "x.detach().clone().requires_grad_(True)"):
        assert words in result.message, result.message


NEAR = {
    "detached leaf": (_leaf_from(lambda x: x.detach().clone()), None, None),
    "autograd.grad on a non-detached clone": (_by_autograd_grad, None, None),
    "retain_grad on the clone": (_retained, None, "modified-input"),
    "x itself as the leaf": (_x_itself, "*", "modified-input"),
    "no return": (_no_return, "wrong-type", "wrong-type"),
}


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("how", sorted(NEAR))
@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_are_not_named(seed, how, check):
    fn, values, untouched = NEAR[how]
    expected = values if check == "values" else untouched
    result = CHECKS[check](fn, generator(seed))
    assert result.misconception != NAME, result.message
    if expected is None:
        assert result.passed, result.message
    elif expected != "*":
        assert result.misconception == expected, result.message
