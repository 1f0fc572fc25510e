"""q3 ``MyOp.backward`` whose gradient is laid out in x's sizes reversed
(``g.reshape(x.shape[::-1])``, ``g.view(x.shape[::-1])``): the identity at a 1-D, a 0-d and a
square 2-D x. The shaped checks drew one 2-D x per seed, square on about a third of seeds,
where this wrong answer kept full marks. Now a square draw is followed by a non-square x
(``gradcheck_shapes.non_square``), so the answer loses the backward's point on every seed,
told (not named: its values at the refused x are never seen) what the refused shape shows.
A quarter turn (``rot90``, ``g.t().flip(0)``) is ``grad-rearranged``, told so. Correct
answers in any layout style keep full marks on every seed; other named mistakes keep their
names at square seeds and others.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import gradcheck

SEEDS = range(30)


def _grad(x):
    S, A = (x ** 3).sum(), x.abs().sum()
    return 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2


def op(backward, seen=None):
    """A MyOp with the right forward whose backward returns ``backward(grad_output, x)``;
    the shapes of x its backward saw go to ``seen``."""
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x ** 3).sum() / (1 + x.abs().sum())

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            if seen is not None:
                seen.append(tuple(x.shape))
            return backward(grad_output, x)
    return MyOp


def _when_2d(arrange):
    return lambda g, x: arrange(g, x) if x.dim() == 2 else g


REVERSED = {  # the identity at a square x: right there, refused at a non-square one
    "reshape-shape-reversed": lambda g, x: g.reshape(x.shape[::-1]),
    "view-shape-reversed": lambda g, x: g.view(x.shape[::-1]),
    "torch-reshape-reversed-tuple": lambda g, x: torch.reshape(g, tuple(reversed(x.shape))),
    "reshape-like-x-T": _when_2d(lambda g, x: g.reshape(x.T.shape)),
    "view-sizes-swapped": _when_2d(lambda g, x: g.view(x.size(1), x.size(0))),
    "flat-then-reversed": lambda g, x: g.flatten().reshape(x.shape[::-1]),
    "t-unless-square": _when_2d(lambda g, x: g if x.shape[0] == x.shape[1] else g.t()),
}

ROTATED = {  # a quarter turn: x's sizes reversed, values moved at a square x too
    "rot90": (_when_2d(lambda g, x: torch.rot90(g)), "torch.rot90(g) does"),
    "rot90-minus-1": (_when_2d(lambda g, x: torch.rot90(g, -1)), "torch.rot90(g, -1) does"),
    "rot90-k3": (_when_2d(lambda g, x: torch.rot90(g, 3, (0, 1))), "torch.rot90(g, -1) does"),
    "t-then-flip": (_when_2d(lambda g, x: g.t().flip(0)), "torch.rot90(g) does"),
    "flip-then-t": (_when_2d(lambda g, x: g.flip(0).t()), "torch.rot90(g, -1) does"),
}

CORRECT = {
    "plain": lambda g, x: g,
    "reshape-x-shape": lambda g, x: g.reshape(x.shape),
    "view-as": lambda g, x: g.flatten().view_as(x),
    "reversed-and-back": lambda g, x: g.reshape(x.shape[::-1]).reshape(x.shape),
    "t-twice": _when_2d(lambda g, x: g.t().t()),
    "rot90-there-and-back": _when_2d(lambda g, x: torch.rot90(torch.rot90(g), -1)),
    "rot90-four-times": _when_2d(lambda g, x: torch.rot90(g, 4)),
    "reshape-reversed-of-reversed": lambda g, x: g.reshape(x.shape[::-1][::-1]),
}


def _backward(arrange, upstream=True):
    """``arrange`` applied to the right gradient, with the upstream (or, for a 2-D x only,
    without it: a 1-D x would name upstream-ignored first)."""
    return lambda go, x: arrange((go if upstream or x.dim() != 2 else 1) * _grad(x), x)


def _checks(MyOp):
    """The q3 checks that run MyOp's backward, each at ``seed``."""
    return {"forward": lambda rng: gradcheck.check_forward(MyOp.apply, MyOp, rng),
            "backward": lambda rng: gradcheck.check_backward(MyOp, rng),
            "gradcheck": lambda rng: gradcheck.check_gradcheck(MyOp, rng),
            "two_graphs": lambda rng: gradcheck.check_two_graphs(MyOp, rng)}


def test_every_seed_asks_at_a_non_square_x_and_some_at_a_square_one_first():
    squares = 0
    for seed in SEEDS:
        seen: list = []
        assert gradcheck.check_backward(op(_backward(CORRECT["plain"]), seen),
                                        np.random.default_rng(seed)).passed
        matrices = [s for s in seen if len(s) == 2]
        assert any(m != n for m, n in matrices), (seed, seen)
        squares += matrices[0][0] == matrices[0][1]
    assert 5 <= squares < len(SEEDS)  # the square draws are kept, a non-square one added


@pytest.mark.parametrize("how", sorted(REVERSED))
def test_a_gradient_in_reversed_sizes_loses_the_backward_point_on_every_seed(how):
    MyOp = op(_backward(REVERSED[how]))
    for seed in SEEDS:
        result = gradcheck.check_backward(MyOp, np.random.default_rng(seed))
        assert not result.passed, (how, seed)
        # told what the refusal and the square x showed, never a cause not established
        assert result.misconception == "raised", (how, seed, result.message)
        assert "invalid gradient" in result.message, result.message
        assert "it returned the right gradient; here its gradient has x's sizes reversed" \
            in result.message, result.message
        assert "only-1d" not in result.message and "flattened" not in result.message


def test_a_gradient_in_reversed_sizes_keeps_the_points_where_it_is_right():
    # 1-D draws in gradcheck's and the two graphs' checks, and the forward, are right
    MyOp = op(_backward(REVERSED["reshape-shape-reversed"]))
    for seed in (0, 8, 12):
        for name, check in _checks(MyOp).items():
            if name != "backward":
                assert check(np.random.default_rng(seed)).passed, (name, seed)


@pytest.mark.parametrize("how", sorted(ROTATED))
def test_a_quarter_turn_is_named_rearranged_on_every_seed(how):
    arrange, told = ROTATED[how]
    for upstream in (True, False):
        MyOp = op(_backward(arrange, upstream))
        for seed in SEEDS:
            result = gradcheck.check_backward(MyOp, np.random.default_rng(seed))
            assert not result.passed, (how, seed)
            assert result.misconception == "grad-rearranged", (how, seed, result.message)
            assert told in result.message, result.message
            assert ("leaves out the upstream gradient" in result.message) == (not upstream)


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_correct_answers_in_any_layout_style_keep_full_marks_on_every_seed(how):
    MyOp = op(_backward(CORRECT[how]))
    for seed in SEEDS:
        for name, check in _checks(MyOp).items():
            result = check(np.random.default_rng(seed))
            assert result.passed, (how, name, seed, result.message)


def _per_row(go, x):
    if x.dim() == 0:
        return go * _grad(x)
    S, A = (x ** 3).sum(-1, keepdim=True), x.abs().sum(-1, keepdim=True)
    return go * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)


OTHERS = {  # other named mistakes: their names at every seed, square draw or not
    "quotient-term-missing": lambda go, x: go * 3 * x ** 2 / (1 + x.abs().sum()),
    "sign-dropped": lambda go, x: go * (3 * x ** 2 / (1 + x.abs().sum())
                                        - (x ** 3).sum() / (1 + x.abs().sum()) ** 2),
    "upstream-ignored": lambda go, x: _grad(x),
    "sum-over-one-dim": _per_row,
    "only-1d-input": lambda go, x: go * _grad(x.reshape(-1)),
    "grad-transposed": lambda go, x: (go * _grad(x)).t() if x.dim() == 2 else go * _grad(x),
    "grad-rearranged": lambda go, x: (go * _grad(x)).flip(0) if x.dim() else go * _grad(x),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_other_named_mistakes_keep_their_names(name):
    MyOp = op(OTHERS[name])
    for seed in SEEDS:
        result = gradcheck.check_backward(MyOp, np.random.default_rng(seed))
        assert result.misconception == name, (seed, result.message)
