"""q4 ``vjp_square`` with the weights' signs lost on the way to backward: their sizes kept
(``weights.abs()``, ``sqrt(weights ** 2)``) or the negative ones zeroed (``clamp(min=0)``,
``relu``). Right wherever every weight is >= 0, as the lesson's are; blind round z's
``v.backward(weights.abs())`` lost its points without a cause. Named ``weights-sign-dropped``;
its near-misses keep their own names or pass."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp
from autograder.checks.seeding import generator

SEEDS = range(4)


def _pullback(vector):
    """vjp_square giving ``vector(weights)`` to backward."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(vector(weights))
        return leaf.grad
    return vjp_square


def _weighted_sum(weight_of):
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (weight_of(weights) * leaf.square()).sum().backward()
        return leaf.grad
    return vjp_square


DROPPED = {
    "backward(weights.abs())": (_pullback(torch.abs), "abs"),
    "sqrt of the squared weights": (_weighted_sum(lambda w: (w ** 2).sqrt()), "abs"),
    "torch.absolute in a weighted sum": (_weighted_sum(torch.absolute), "abs"),
    "clamp(min=0)": (_pullback(lambda w: w.clamp(min=0)), "zeroed"),
    "relu of the weights": (_weighted_sum(torch.relu), "zeroed"),
}


@pytest.mark.parametrize("how", sorted(DROPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_weights_whose_signs_are_lost_are_named(seed, how):
    fn, kind = DROPPED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == "weights-sign-dropped", result.message
    words = ("|weights|", "abs") if kind == "abs" else ("negative weights", "0")
    for word in (*words, "v.backward(weights)"):
        assert word in result.message, result.message


NOT_DROPPED = {
    "weights squared": (_weighted_sum(lambda w: w ** 2), "weights-applied-twice"),
    "weights ignored": (_pullback(torch.ones_like), "weights-ignored"),
}


@pytest.mark.parametrize("how", sorted(NOT_DROPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_other_weight_mistakes_keep_their_names(seed, how):
    fn, name = NOT_DROPPED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_signed_weights_in_unusual_styles_pass(seed):
    """The weights as given, through their sign and size put back together, or negated
    twice."""
    for fn in (_pullback(lambda w: w.sign() * w.abs()), _weighted_sum(lambda w: -(-w)),
               _pullback(lambda w: torch.where(w < 0, -w.abs(), w))):
        result = vjp.check_vjp(fn, generator(seed))
        assert result.passed, result.message
