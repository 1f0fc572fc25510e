"""q4 ``vjp_square`` with x's signs lost before the square: the leaf built from the magnitudes
(``x.abs()``, ``sqrt(x ** 2)``) or with the negative entries zeroed (``x.clamp(min=0)``,
``relu``). Right wherever every entry of x is >= 0, as the lesson's are; blind round zb's leaf
from ``x.detach().abs()`` lost its points without a cause. Named ``x-sign-dropped`` when a
second x agrees; its near-misses keep their own names or pass."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp
from autograder.checks.seeding import generator

SEEDS = range(4)


def _from_leaf(value_of):
    """vjp_square whose leaf holds ``value_of(x)``."""
    def vjp_square(x, weights):
        leaf = value_of(x.detach()).clone().requires_grad_(True)
        (leaf ** 2).backward(weights)
        return leaf.grad
    return vjp_square


def _through(before_square):
    """vjp_square squaring ``before_square(leaf)`` of a right leaf."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (weights * before_square(leaf) ** 2).sum().backward()
        return leaf.grad
    return vjp_square


def _by_hand(x, weights):
    return 2 * x.detach().abs() * weights


DROPPED = {
    "leaf from x.abs()": (_from_leaf(torch.abs), "abs"),
    "leaf from sqrt(x ** 2)": (_from_leaf(lambda x: torch.sqrt(x ** 2)), "abs"),
    "leaf from torch.where(x < 0, -x, x)": (_from_leaf(lambda x: torch.where(x < 0, -x, x)),
                                             "abs"),
    "leaf from x.clamp(min=0)": (_from_leaf(lambda x: x.clamp(min=0)), "zeroed"),
    "relu of the leaf squared": (_through(torch.relu), "zeroed"),
    "2 * |x| * weights by hand": (_by_hand, "abs"),
}


@pytest.mark.parametrize("how", sorted(DROPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_x_whose_signs_are_lost_are_named(seed, how):
    fn, kind = DROPPED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == "x-sign-dropped", result.message
    words = ("|x|", "abs") if kind == "abs" else ("negative entries of x", "0")
    for word in (*words, "x.detach().clone()"):
        assert word in result.message, result.message


def test_the_blind_answer_is_named_on_the_lesson_like_draws():
    """Blind round zb, student 03: ``x.detach().abs().clone().requires_grad_(True)``."""
    for seed in (11, 0, 7):
        result = vjp.check_vjp(_from_leaf(torch.abs), generator(seed))
        assert result.misconception == "x-sign-dropped", result.message


def test_one_negated_answer_is_not_named():
    """An answer that matches 2*|x|*w on the failing x only (here: one that flips signs on
    its first call and is right after) is not named: the second x does not agree."""
    calls = []

    def vjp_square(x, weights):
        calls.append(1)
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(weights)
        return leaf.grad if len(calls) > 1 else 2 * x.detach().abs() * weights

    result = vjp.check_vjp(vjp_square, generator(0))
    assert result.misconception != "x-sign-dropped", result.message


NOT_DROPPED = {
    "weights.abs()": (lambda x, w: _from_leaf(lambda t: t)(x, w.abs()), "weights-sign-dropped"),
    "x * weights": (lambda x, w: x * w, "one-product-term"),
}


@pytest.mark.parametrize("how", sorted(NOT_DROPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_other_mistakes_keep_their_names(seed, how):
    fn, name = NOT_DROPPED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_magnitudes_in_unusual_but_right_styles_pass(seed):
    """|leaf| squared is leaf squared; sign times size is x itself."""
    for fn in (_through(torch.abs), _from_leaf(lambda x: x.sign() * x.abs()),
               _through(lambda leaf: torch.sqrt(leaf ** 2 + 0.0))):
        result = vjp.check_vjp(fn, generator(seed))
        assert result.passed, result.message
