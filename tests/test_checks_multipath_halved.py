"""q3 split_path_grads whose square path's gradient is half the right one, while the product
path's is right: x shared out between the two leaves (``a = b = x0 / 2``, ``b = x0 - a``) or
the square written ``b ** 2 / 2``. Blind round x lost its points without being told why. It is
named ``square-path-halved`` where a second point shows it too, never on its near-misses."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import multipath
from autograder.checks.seeding import generator

SEEDS = range(4)


def _split(a_at, b_at, square=lambda b: b ** 2):
    """split_path_grads with leaves a and b made at ``a_at(x0)`` and ``b_at(x0)``."""
    def fn(x0, y0):
        a = torch.tensor(float(a_at(x0)), requires_grad=True)
        b = torch.tensor(float(b_at(x0)), requires_grad=True)
        (a * y0 + square(b)).backward()
        return a.grad.item(), b.grad.item()
    return fn


def _shared_in_float64(x0, y0):
    """x0 shared out as a float64 vector of two halves, split with unbind."""
    halves = torch.full((2,), float(x0) / 2, dtype=torch.float64, requires_grad=True)
    a, b = halves.unbind()
    (a * y0 + b * b).backward()
    g = halves.grad.tolist()
    return g[0], g[1]


HALVED = {
    "a = b = x0 / 2": _split(lambda x: x / 2, lambda x: x / 2),
    "b = x0 - a with a = x0 / 2": _split(lambda x: x / 2, lambda x: x - x / 2),
    "b at x0 / 2 only": _split(lambda x: x, lambda x: 0.5 * x),
    "the square halved, b ** 2 / 2": _split(lambda x: x, lambda x: x, lambda b: b ** 2 / 2),
    "halves in one float64 vector": _shared_in_float64,
}


@pytest.mark.parametrize("how", sorted(HALVED))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_halved_square_path_is_named(seed, how):
    result = multipath.check_grads(HALVED[how], generator(seed), split=True)
    assert not result.passed and result.misconception == "square-path-halved", result.message
    for words in ("x0 / 2", "2 * b", "b ** 2 / 2", "split_path_grads("):
        assert words in result.message, result.message


def _halved_when_positive(x0, y0):
    """b halved only for a positive x0: not confirmed at a point of the other sign."""
    a, b = _split(lambda x: x, lambda x: x)(x0, y0)
    return a, b / 2 if x0 > 0 and y0 > 0 else b


def _both_wrong(x0, y0):
    """b halved and a's path doubled: not the halving alone."""
    a, b = _split(lambda x: x, lambda x: x / 2)(x0, y0)
    return 2 * a, b


NOT_HALVED = {
    "b at 2 * x0 (a doubled square path)": _split(lambda x: x, lambda x: 2 * x),
    "b at -x0": _split(lambda x: x, lambda x: -x),
    "a doubled as well as b halved": _both_wrong,
    "halved only for some points": _halved_when_positive,
}


@pytest.mark.parametrize("how", sorted(NOT_HALVED))
@pytest.mark.parametrize("seed", SEEDS)
def test_halved_named_only_on_its_evidence(seed, how):
    result = multipath.check_grads(NOT_HALVED[how], generator(seed), split=True)
    assert result.misconception != "square-path-halved", result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_leaves_at_x0_in_unusual_styles_pass(seed):
    """Both leaves at the whole x0, made from one float64 vector or with clone/detach."""
    def vector(x0, y0):
        both = torch.full((2,), float(x0), dtype=torch.float64, requires_grad=True)
        a, b = both.unbind()
        (a * y0 + b.square()).backward()
        return tuple(both.grad.tolist())

    def detached(x0, y0):
        a = torch.tensor(float(x0), requires_grad=True)
        b = a.detach().clone().requires_grad_()
        (a * y0 + b ** 2).backward()
        return a.grad.item(), b.grad.item()

    for fn in (vector, detached):
        assert multipath.check_grads(fn, generator(seed), split=True).passed
