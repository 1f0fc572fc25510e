"""q4 ``vjp_square`` that loses part of the pullback: several backward calls (one per row, per
column, per entry) with the leaf's ``.grad`` cleared (``leaf.grad = None``, ``zero_()``) or
overwritten (``leaf.grad =``, ``g = torch.autograd.grad(...)``) between them, so only one
slice's pullback survives; right for a 1-D x taken as one row. Blind round zp's student 03 (one
backward per row, ``leaf.grad = None`` before each) lost its points "without finding the
cause". Named ``pullback-overwritten`` when the answer is right on a strict subset of the rows
(or entries), exactly 0 elsewhere, and the same positions survive a second call; its
near-misses pass or keep their own names."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp
from autograder.checks.seeding import generator

SEEDS = range(4)
OVERWRITTEN = "pullback-overwritten"


def _rows(leaf):
    return leaf if leaf.dim() > 1 else leaf.unsqueeze(0)


def rows_cleared(x, weights):
    """Blind round zp, student 03."""
    leaf = x.detach().clone().requires_grad_(True)
    for row, wrow in zip(_rows(leaf), _rows(weights)):
        leaf.grad = None
        (row ** 2).backward(wrow)
    return leaf.grad


def rows_zeroed(x, weights):
    leaf = x.detach().clone().requires_grad_()
    for i in range(leaf.shape[0] if leaf.dim() > 1 else 1):
        if leaf.grad is not None:
            leaf.grad.zero_()
        row, wrow = (leaf[i], weights[i]) if leaf.dim() > 1 else (leaf, weights)
        (wrow * row ** 2).sum().backward()
    return leaf.grad


def entries_cleared(x, weights):
    """One backward per entry of the flattened leaf, cleared before each: the last entry."""
    leaf = x.detach().clone().requires_grad_()
    flat, wflat = leaf.reshape(-1), weights.reshape(-1)
    for i in range(flat.numel()):
        leaf.grad = None
        (wflat[i] * flat[i] ** 2).backward(retain_graph=True)
    return leaf.grad


def rows_by_autograd_grad(x, weights):
    """``g = torch.autograd.grad(...)`` assigned, not added, per row."""
    leaf = x.detach().clone().requires_grad_()
    g = torch.zeros_like(leaf)
    for row, wrow in zip(_rows(leaf), _rows(weights)):
        (g,) = torch.autograd.grad(row ** 2, leaf, wrow)
    return g


def columns_cleared(x, weights):
    """The loop runs over columns (``leaf.T``): only the last column survives."""
    leaf = x.detach().clone().requires_grad_()
    cols = leaf.T if leaf.dim() > 1 else leaf.unsqueeze(1)
    wcols = weights.T if weights.dim() > 1 else weights.unsqueeze(1)
    for col, wcol in zip(cols, wcols):
        leaf.grad = None
        (col ** 2).backward(wcol)
    return leaf.grad


def first_row_returned(x, weights):
    """``return`` indented into the loop: the first row only."""
    leaf = x.detach().clone().requires_grad_()
    for row, wrow in zip(_rows(leaf), _rows(weights)):
        (row ** 2).backward(wrow)
        return leaf.grad


OVERWRITING = {
    "rows, leaf.grad = None (round zp)": (rows_cleared, "rows"),
    "rows, leaf.grad.zero_()": (rows_zeroed, "rows"),
    "entries, leaf.grad = None": (entries_cleared, "entries"),
    "rows, g = torch.autograd.grad": (rows_by_autograd_grad, "rows"),
    "columns, leaf.grad = None": (columns_cleared, "columns|entries"),  # entries on 1-D x
    "rows, return in the loop": (first_row_returned, "rows"),
}


@pytest.mark.parametrize("how", sorted(OVERWRITING))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_pullback_lost_in_part_is_named(seed, how):
    fn, kind = OVERWRITING[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == OVERWRITTEN, result.message
    assert any(word in result.message for word in kind.split("|")), result.message
    for words in ("kept", "leaf.grad", "v.backward(weights)"):
        assert words in result.message, result.message
    assert "Checked without finding the cause" not in result.message, result.message


def test_the_blind_answer_says_which_rows_were_kept():
    result = vjp.check_vjp(rows_cleared, generator(11))
    assert result.misconception == OVERWRITTEN, result.message
    assert "only row" in result.message and "leaf.grad = None" in result.message, result.message
    assert result.evidence.probes[0]["id"] == OVERWRITTEN, result.evidence


def _accumulating_rows(x, weights):
    leaf = x.detach().clone().requires_grad_()
    for row, wrow in zip(_rows(leaf), _rows(weights)):
        (row ** 2).backward(wrow)
    return leaf.grad


def _summed_autograd_grad(x, weights):
    leaf = x.detach().clone().requires_grad_()
    total = torch.zeros_like(leaf)
    for row, wrow in zip(_rows(leaf), _rows(weights)):
        total = total + torch.autograd.grad(row ** 2, leaf, wrow)[0]
    return total


def _cleared_once_then_entries(x, weights):
    leaf = x.detach().clone().requires_grad_()
    leaf.grad = None
    flat, wflat = leaf.reshape(-1), weights.reshape(-1)
    for i in range(flat.numel()):
        (wflat[i] * flat[i] ** 2).backward()
    return leaf.grad


@pytest.mark.parametrize("seed", SEEDS)
def test_loops_that_accumulate_pass(seed):
    for fn in (_accumulating_rows, _summed_autograd_grad, _cleared_once_then_entries):
        result = vjp.check_vjp(fn, generator(seed))
        assert result.passed, result.message


def _zeroed_at_negative_x(x, weights):
    leaf = x.detach().clamp(min=0).clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad


def _zeroed_at_negative_weights(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights.clamp(min=0))
    return leaf.grad


def _guarded(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (torch.clamp(leaf, -1e3, 1e3) ** 2).backward(weights)
    return leaf.grad


NOT_OVERWRITTEN = {
    "x.clamp(min=0)": (_zeroed_at_negative_x, "x-sign-dropped"),
    "weights.clamp(min=0)": (_zeroed_at_negative_weights, "weights-sign-dropped"),
    "clamp(leaf, -1e3, 1e3)": (_guarded, "gradient-clamped"),
}


@pytest.mark.parametrize("how", sorted(NOT_OVERWRITTEN))
@pytest.mark.parametrize("seed", SEEDS)
def test_zeros_that_follow_the_values_keep_their_names(seed, how):
    fn, name = NOT_OVERWRITTEN[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == name, result.message


def test_zeros_that_move_with_the_values_are_not_named():
    """Zeros where 2*x*w is negative (a clamp of the answer): right on a subset, 0 elsewhere,
    but the zeros follow the values, not the positions: not this name."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(weights)
        return leaf.grad.clamp(min=0)

    for seed in SEEDS:
        result = vjp.check_vjp(vjp_square, generator(seed))
        assert result.misconception != OVERWRITTEN, result.message
