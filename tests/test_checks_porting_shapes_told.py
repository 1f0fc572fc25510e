"""q3 ``only-1d-input`` told by what raised (blind rounds zf, zg): an op that iterates over x's
entries raises on a 0-d x; one that flattens x and saves the flat tensor returns a flattened
gradient for a 2-D x; a ``torch.dot`` op raises on both. Each is told its own cause, not
another's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import gradcheck


def _grad(x, S, A):
    return 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2


class Iterated(torch.autograd.Function):
    """backward builds the gradient entry by entry (round zg)."""

    @staticmethod
    def forward(ctx, x):
        S, A = (x ** 3).sum(), x.abs().sum()
        ctx.save_for_backward(x, S, A)
        return S / (1 + A)

    @staticmethod
    def backward(ctx, g):
        x, S, A = ctx.saved_tensors
        flat = x.reshape(-1) if x.dim() else x
        rows = [_grad(v, S, A) for v in (x if x.dim() == 1 else flat)]
        return g * torch.stack(rows).reshape(x.shape)


class Flattened(torch.autograd.Function):
    """forward saves x flattened; backward's gradient keeps that shape (round zf)."""

    @staticmethod
    def forward(ctx, x):
        flat = x.reshape(-1)
        S, A = (flat ** 3).sum(), flat.abs().sum()
        ctx.save_for_backward(flat, S, A)
        return S / (1 + A)

    @staticmethod
    def backward(ctx, g):
        flat, S, A = ctx.saved_tensors
        return g * _grad(flat, S, A)


class Dotted(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        S, A = torch.dot(x, x * x), torch.dot(x.abs(), torch.ones_like(x))
        ctx.save_for_backward(x, S, A)
        return S / (1 + A)

    @staticmethod
    def backward(ctx, g):
        x, S, A = ctx.saved_tensors
        return g * _grad(x, S, A)


TOLD = {Iterated: "needs a dimension", Flattened: "gradient in x's own shape",
        Dotted: "torch.dot"}


@pytest.mark.parametrize("op", sorted(TOLD, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_an_op_for_some_shapes_only_is_told_what_raised(op):
    result = gradcheck.check_backward(op, np.random.default_rng(0))
    assert result.misconception == "only-1d-input", result.message
    assert TOLD[op] in result.message, result.message
    for other, words in TOLD.items():
        if other is not op:
            assert words not in result.message, result.message
