"""q4 ``vjp_square`` right only within a range of x's values: blind round zm squared
``torch.clamp(leaf, -1e3, 1e3)`` ("a safe range, no float32 overflow"), which passes no
gradient where |x| > 1000, and kept full marks: every hidden x was small. A hidden case drawn
last mixes a few entries of large magnitude (1e3-1e5) with ordinary ones; an answer right at
the ordinary entries and 0 (or capped) at the large ones, the same on a second call with the
entries moved, is named ``gradient-clamped``. Near-misses: a right answer at large |x| in
float32 or float64 passes; other mistakes keep their names."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp
from autograder.checks.seeding import generator

SEEDS = range(4)
CLAMPED = "gradient-clamped"


def _squaring(guarded):
    """vjp_square whose v is ``guarded(leaf)`` of a right leaf, backward(weights)."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_(True)
        guarded(leaf).backward(weights)
        return leaf.grad
    return vjp_square


def _capped_by_hand(x, weights):
    return 2 * torch.clamp(x.detach(), -1e3, 1e3) * weights


GUARDED = {
    "torch.clamp(leaf, -1e3, 1e3) ** 2 (round zm)": _squaring(
        lambda leaf: torch.clamp(leaf, -1e3, 1e3) ** 2),
    "leaf.clamp(-500, 500) ** 2": _squaring(lambda leaf: leaf.clamp(-500, 500) ** 2),
    "clamp of the square at 1e6": _squaring(lambda leaf: torch.clamp(leaf ** 2, max=1e6)),
    "torch.where(|leaf| < 1e3, leaf ** 2, 0)": _squaring(
        lambda leaf: torch.where(leaf.abs() < 1e3, leaf ** 2, torch.zeros_like(leaf))),
    "one-sided leaf.clamp(max=1e3) ** 2": _squaring(lambda leaf: leaf.clamp(max=1e3) ** 2),
    "torch.where(|leaf| > 100, 1e4, leaf ** 2)": _squaring(
        lambda leaf: torch.where(leaf.abs() > 100, torch.full_like(leaf, 1e4), leaf ** 2)),
    "2 * clamp(x) * weights by hand (capped)": _capped_by_hand,
}


@pytest.mark.parametrize("how", sorted(GUARDED))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_gradient_cut_off_outside_a_range_is_named(seed, how):
    result = vjp.check_vjp(GUARDED[how], generator(seed))
    assert not result.passed and result.misconception == CLAMPED, result.message
    for words in ("clamp", "no gradient outside its range", "2 * x * weights at every x",
                  "1.8e19"):
        assert words in result.message, result.message


def test_the_blind_answer_is_named_at_the_grading_seed():
    result = vjp.check_vjp(GUARDED["torch.clamp(leaf, -1e3, 1e3) ** 2 (round zm)"],
                           generator(11))
    assert result.misconception == CLAMPED, result.message
    assert "and 0 at the x beyond it" in result.message, result.message


RIGHT = {
    "nan_to_num guard that never fires": _squaring(
        lambda leaf: torch.nan_to_num(leaf ** 2, posinf=3e38)),
    "where(isfinite) guard": _squaring(
        lambda leaf: torch.where(torch.isfinite(leaf ** 2), leaf ** 2, torch.zeros_like(leaf))),
    "clamp far beyond the range (1e30)": _squaring(lambda leaf: leaf.clamp(-1e30, 1e30) ** 2),
    "leaf * leaf": _squaring(lambda leaf: leaf * leaf),
}


@pytest.mark.parametrize("how", sorted(RIGHT))
@pytest.mark.parametrize("seed", SEEDS)
def test_right_answers_at_large_x_pass(seed, how):
    result = vjp.check_vjp(RIGHT[how], generator(seed))
    assert result.passed, result.message


def test_a_right_float32_vjp_at_1e4_is_within_tolerance():
    x = torch.tensor([1.2e4, -3.3e4, 0.5, -2.0], dtype=torch.float32)
    w = torch.tensor([1.7, -0.6, 2.0, 0.3], dtype=torch.float32)
    got = _squaring(lambda leaf: leaf ** 2)(x, w)
    assert vjp.judge_vjp(got, x, w).ok


def test_other_mistakes_keep_their_names():
    for fn, name in ((lambda x, w: x * w, "one-product-term"),
                     (_squaring(lambda leaf: (leaf.abs() ** 2)), None)):
        result = vjp.check_vjp(fn, generator(0))
        if name is None:
            assert result.passed, result.message
        else:
            assert not result.passed and result.misconception == name, result.message


def test_zeroed_at_one_position_is_not_named():
    """Zero at a fixed position (the last), whatever its value: where that entry is the
    largest x it looks like a one-sided range, but the second call (entries moved) does not
    agree, so no range is named."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(weights)
        grad = leaf.grad.clone()
        grad[(-1,) * grad.dim()] = 0
        return grad
    for seed in SEEDS:
        result = vjp.check_vjp(vjp_square, generator(seed))
        assert not result.passed and result.misconception != CLAMPED, result.message
