"""q3 ``MyOp.backward`` whose gradient has the right values laid out wrong (blind round zzj):
``(grad_output * grad).t()`` is right for a 1-D x, the right values transposed at a square
2-D x, and refused by autograd at a non-square one ("got [n, m] but expected shape compatible
with [m, n]"), which the grader told without a cause. Each spelling of a transpose is
``grad-transposed``; a flip or a reshape in another order is ``grad-rearranged``, told which;
the refusal explains itself wherever it happens (``raised_hints``). Correct answers that
transpose twice or compute on a flat x keep full marks; other named mistakes keep their names.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.calling import call
from autograder.checks.porting import gradcheck
from autograder.checks.porting.gradcheck_layout import SQUARE, WIDE
from autograder.checks.raised_hints import GRADIENT_SHAPES, ONE_PER_INPUT, hint_for


def _grad(x):
    S, A = (x ** 3).sum(), x.abs().sum()
    return 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2


def op(backward):
    """A MyOp with the right forward whose backward returns ``backward(grad_output, x)``."""
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return backward(grad_output, x)
    return MyOp


def _t2(g):
    return g.t() if g.dim() == 2 else g


def _flat_then(x, arrange):
    return arrange(_grad(x.reshape(-1)), x)


TRANSPOSED = {
    "blind-zzj-t": op(lambda go, x: (go * _grad(x)).t()),  # the blind round's student
    "T": op(lambda go, x: go * (_grad(x).T if x.dim() == 2 else _grad(x))),
    "mT-where-2d": op(lambda go, x: go * (_grad(x).mT if x.dim() == 2 else _grad(x))),
    "permute-reversed": op(lambda go, x: (go * _grad(x)).permute(tuple(reversed(range(x.dim()))))),
    "transpose-0-1": op(lambda go, x: _t2(go * _grad(x)).contiguous()),
    "computed-on-x-t": op(lambda go, x: go * _grad(x.t())),
}

REARRANGED = {  # (op, words told)
    "flip-0": (op(lambda go, x: (go * _grad(x)).flip(0) if x.dim() else go * _grad(x)),
               "in reverse order along dimension 0"),
    "flip-every-dim": (op(lambda go, x: torch.flip(go * _grad(x), list(range(x.dim())))),
                       "in reverse order along"),
    "view-reversed-then-t": (op(lambda go, x: go * _flat_then(
        x, lambda f, x_: _t2(f.view(x_.shape[::-1])))), "view(x.shape[::-1]).t()"),
    "x-t-reshaped-back": (op(lambda go, x: go * _grad(x.t()).reshape(x.shape)),
                          "read column by column"),
    "x-T-flattened": (op(lambda go, x: go * _grad(_t2(x).flatten()).reshape(x.shape)),
                      "read column by column"),
}

CORRECT = {
    "plain": op(lambda go, x: go * _grad(x)),
    # .t() takes at most 2 dimensions: unguarded, a 3-D x raises (only-1d-input, below)
    "t-twice": op(lambda go, x: _t2(_t2(go * _grad(x)))),
    "on-x-t-and-back": op(lambda go, x: _t2(go * _grad(_t2(x)))),
    "flat-and-reshaped-back": op(lambda go, x: go * _grad(x.reshape(-1)).reshape(x.shape)),
    "flatten-view-back": op(lambda go, x: (go * _grad(x)).flatten().view(x.shape)),
    "flipped-twice": op(lambda go, x: (go * _grad(x)).flip(0).flip(0) if x.dim()
                        else go * _grad(x)),
    "permute-twice": op(lambda go, x: (go * _grad(x)).permute(tuple(reversed(range(x.dim()))))
                        .permute(tuple(reversed(range(x.dim()))))),
}

SEEDS = (0, 1, 2, 8, 12)  # the 2-D x is square (2, 2 or 3, 3) at seeds 8 and 12 only


@pytest.mark.parametrize("how", sorted(TRANSPOSED))
def test_a_transposed_gradient_is_named_square_or_not(how):
    squares = set()
    for seed in SEEDS:
        result = gradcheck.check_backward(TRANSPOSED[how], np.random.default_rng(seed))
        assert not result.passed, (how, seed)
        assert result.misconception == "grad-transposed", (how, seed, result.message)
        assert "the right gradient g, transposed" in result.message, result.message
        assert "flattened" not in result.message, result.message
        assert "element by element" in result.message, result.message
        squares.add("raised" not in result.message)
    assert squares == {True, False}  # seen at a square x and refused at a non-square one


def test_the_blind_answer_at_a_square_x_is_confirmed_at_a_wide_one():
    for seed in SEEDS:
        result = gradcheck.check_backward(TRANSPOSED["blind-zzj-t"], np.random.default_rng(seed))
        if "raised" not in result.message:  # seen at a square x: confirmed at WIDE
            assert f"shape {tuple(torch.tensor(WIDE).shape)[::-1]}, x's sizes reversed" \
                in result.message, result.message
        else:  # refused here: confirmed at SQUARE
            assert f"square x of shape {tuple(torch.tensor(SQUARE).shape)}" in result.message
            assert "only-1d" not in result.message and "flattened" not in result.message


@pytest.mark.parametrize("how", sorted(REARRANGED))
def test_a_rearranged_gradient_is_named_with_its_arrangement(how):
    MyOp, told = REARRANGED[how]
    for seed in SEEDS:
        result = gradcheck.check_backward(MyOp, np.random.default_rng(seed))
        assert not result.passed, (how, seed)
        assert result.misconception == "grad-rearranged", (how, seed, result.message)
        assert told in result.message, result.message


def test_a_flipped_gradient_fails_gradcheck_named_and_one_without_upstream_is_told_so():
    result = gradcheck.check_gradcheck(REARRANGED["flip-0"][0], np.random.default_rng(0))
    assert result.misconception == "grad-rearranged", result.message
    dropped = op(lambda go, x: _grad(x).flip(0))
    result = gradcheck.check_backward(dropped, np.random.default_rng(0))
    assert result.misconception == "grad-rearranged", result.message
    assert "leaves out the upstream gradient" in result.message, result.message


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_correct_answers_in_any_layout_style_pass(how):
    for seed in SEEDS:
        rng = np.random.default_rng
        for check in (gradcheck.check_backward, gradcheck.check_gradcheck,
                      gradcheck.check_two_graphs):
            result = check(CORRECT[how], rng(seed))
            assert result.passed, (how, check.__name__, seed, result.message)


def test_the_blind_answer_keeps_its_points_where_it_is_right():
    # right for a 1-D x: gradcheck's and the two graphs' checks (1-D draws) pass it
    for check in (gradcheck.check_gradcheck, gradcheck.check_two_graphs):
        assert check(TRANSPOSED["blind-zzj-t"], np.random.default_rng(0)).passed


OTHERS = {  # other named mistakes, transposed nowhere
    "quotient-term-missing": op(lambda go, x: go * 3 * x ** 2 / (1 + x.abs().sum())),
    "sign-dropped": op(lambda go, x: go * (3 * x ** 2 / (1 + x.abs().sum())
                                           - (x ** 3).sum() / (1 + x.abs().sum()) ** 2)),
    "upstream-ignored": op(lambda go, x: _grad(x)),
    "sum-over-one-dim": op(lambda go, x: go * (
        3 * x ** 2 / (1 + x.abs().sum(-1, keepdim=True)) - (x ** 3).sum(-1, keepdim=True)
        * torch.sign(x) / (1 + x.abs().sum(-1, keepdim=True)) ** 2) if x.dim() else
        go * _grad(x)),
    "only-1d-input": op(lambda go, x: go * _grad(x.reshape(-1))),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_other_named_mistakes_keep_their_names(name):
    for seed in SEEDS:
        result = gradcheck.check_backward(OTHERS[name], np.random.default_rng(seed))
        assert result.misconception == name, (seed, result.message)


def _refused(shape, returned):
    x = torch.ones(shape, dtype=torch.float64, requires_grad=True)
    _, failure = call(lambda: op(lambda go, x_: returned(x_)).apply(x).backward(), "f")
    return failure.message


@pytest.mark.parametrize("shape, returned, kind", [
    ((2, 3), lambda x: x.t(), "reversed"),
    ((2, 3), lambda x: x.reshape(-1), "flat"),
    ((2, 3), lambda x: x.reshape(3, 1, 2), "reshaped"),
    ((2, 3), lambda x: x[:, :2], "sized"),
])
def test_a_refused_gradient_is_explained_wherever_it_happens(shape, returned, kind):
    message = _refused(shape, returned)
    assert "invalid gradient" in message, message
    advice = hint_for(message)
    assert advice == f"{ONE_PER_INPUT} {GRADIENT_SHAPES[kind]}", message
    assert message.endswith(advice), message


def test_the_refusal_advice_names_no_size():
    assert not any(ch.isdigit() for text in (ONE_PER_INPUT, *GRADIENT_SHAPES.values())
                   for ch in text)


def test_a_gradient_in_reversed_sizes_right_at_a_square_x_is_told_not_named():
    # reshape(x.shape[::-1]): refused at a non-square x, right at the square one asked next;
    # its values at the refused x are not seen, so no arrangement is named (nor only-1d-input)
    MyOp = op(lambda go, x: (go * _grad(x)).reshape(x.shape[::-1]))
    result = gradcheck.check_backward(MyOp, np.random.default_rng(0))
    assert result.misconception == "raised", result.message
    assert "it returned the right gradient" in result.message, result.message
    assert GRADIENT_SHAPES["reversed"] in result.message, result.message


def test_a_transpose_that_takes_two_dimensions_only_is_named_at_a_3d_x():
    """``.t().t()`` round-trips a 1-D or 2-D gradient, and raises for the 3-D x the backward
    check asks last (red team rt-8): x may have any shape."""
    result = gradcheck.check_backward(op(lambda go, x: (go * _grad(x)).t().t()),
                                      np.random.default_rng(0))
    assert not result.passed and result.misconception == "only-1d-input", result.message
