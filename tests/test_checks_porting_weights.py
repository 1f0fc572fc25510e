"""Is q2_microbatch's micro-batch weight ``b_j / B`` put in the wrong place named for where it
went, and is every right place of it left alone?

The weight belongs on each micro-batch's mean loss: ``(bce(Xj @ w, yj) * b_j / B).backward()``.
A student who hands it to the loss function can give it as ``pos_weight`` (which scales only
the positive-label terms) or fold it into the labels; one who writes it by hand can invert it.
``weight=`` of the same value, with the default mean, is the weight on the mean loss: right.
The implementations below are written as students write them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autograder.checks.porting import microbatch

FAST = settings(deadline=None, max_examples=20)
seeds = st.integers(0, 2**32 - 1)


def loss_of(how, z, yj, bj, B):
    """Micro-batch j's loss, weighted as ``how`` says, ready for its backward."""
    share = bj / B
    if how == "pos-weight":  # the round-w notebook's own
        return F.binary_cross_entropy_with_logits(z, yj, pos_weight=torch.tensor(share))
    if how == "pos-weight-module":
        return nn.BCEWithLogitsLoss(pos_weight=torch.full((1,), share))(z, yj)
    if how == "labels":
        return F.binary_cross_entropy_with_logits(z, yj * bj / B)
    if how == "labels-module":
        return nn.BCEWithLogitsLoss()(z, yj * share)
    if how == "inverted":
        return F.binary_cross_entropy_with_logits(z, yj) * B / bj
    if how == "inverted-division":
        return F.binary_cross_entropy_with_logits(z, yj) / share
    # right, in unusual styles
    if how == "weight-per-element":
        return F.binary_cross_entropy_with_logits(z, yj, weight=torch.full_like(yj, share))
    if how == "weight-scalar":
        return F.binary_cross_entropy_with_logits(z, yj, weight=torch.tensor(share))
    if how == "sum-over-B":
        return F.binary_cross_entropy_with_logits(z, yj, reduction="sum") / B
    # other mistakes, with names of their own
    if how == "on-logits":
        return F.binary_cross_entropy_with_logits(z * share, yj)
    if how == "unweighted":
        return F.binary_cross_entropy_with_logits(z, yj)
    raise ValueError(how)


def weighted(how, *, clear=True):
    """A student's accumulated_grad that weights each micro-batch as ``loss_of`` says."""
    def accumulated_grad(w, X, y, sizes):
        if clear:
            w.grad = None
        B, start = sum(sizes), 0
        for bj in sizes:
            Xj, yj = X[start:start + bj], y[start:start + bj]
            loss_of(how, Xj @ w, yj, bj, B).backward()
            start += bj
        return w.grad.clone()
    return accumulated_grad


NAMES = {"pos-weight": "weight-as-pos-weight", "pos-weight-module": "weight-as-pos-weight",
         "labels": "weight-on-labels", "labels-module": "weight-on-labels",
         "inverted": "weight-inverted", "inverted-division": "weight-inverted",
         "weight-per-element": None, "weight-scalar": None, "sum-over-B": None,
         "on-logits": "weight-on-logits", "unweighted": "unscaled-sum"}
#: What each new name's message says the student did.
TOLD = {"weight-as-pos-weight": "pos_weight", "weight-on-labels": "labels",
        "weight-inverted": "B / b_j"}


@FAST
@given(seeds, st.booleans(), st.booleans(), st.sampled_from(sorted(NAMES)))
def test_the_weight_in_the_wrong_place_is_named_for_where_it_went(seed, stale, clear, how):
    """Is b_j / B given as pos_weight, folded into the labels, or inverted named by its
    replay, with or without the stale grad kept; does the weight on the mean loss pass,
    however it is written (weight=, a sum over B); and do other mistakes keep their names?"""
    assume(stale or clear)
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(seed), stale)
    stale_grad = w.grad.clone() if stale else None
    before = w.detach().clone()
    got = weighted(how, clear=clear)(w, X, y, sizes)
    verdict = microbatch.judge(got, w, X, y, sizes, stale_grad, before)
    name = NAMES[how]
    if name is None and not clear:
        name = "stale-grad-kept"
    assert verdict.ok == (name is None) and verdict.misconception == name, verdict.message
    if name in TOLD:
        assert TOLD[name] in verdict.message, verdict.message
        assert "(bce(Xj @ w, yj) * bj / B).backward()" in verdict.message, verdict.message
        assert clear or "It also keeps the .grad that w arrived with" in verdict.message


def test_pos_weight_is_wrong_at_zero_too():
    """At w = 0 every p is 0.5, yet pos_weight still shrinks the positive terms: wrong there
    too (the public test fails), and named."""
    w, X, y, sizes = microbatch.draw_problem(np.random.default_rng(2), False)
    zero = torch.zeros_like(w, requires_grad=True)
    got = weighted("pos-weight")(zero, X, y, sizes)
    verdict = microbatch.judge(got, zero, X, y, sizes, None, zero.detach().clone())
    assert verdict.misconception == "weight-as-pos-weight", verdict.message


def test_the_weight_in_the_wrong_place_is_named_by_the_checks():
    """The whole checks, as a notebook meets them: fresh w, a stale grad, the same objects
    twice; the weight given as weight= passes all three."""
    for how in ("pos-weight", "labels", "inverted"):
        for seed in range(3):
            for stale in (False, True):
                result = microbatch.check_accumulated_grad(
                    weighted(how), np.random.default_rng(seed), stale=stale)
                assert result.misconception == NAMES[how], result.message
            result = microbatch.check_same_objects(weighted(how), np.random.default_rng(seed))
            assert result.misconception == NAMES[how], result.message
    for seed in range(3):
        for stale in (False, True):
            right = microbatch.check_accumulated_grad(
                weighted("weight-per-element"), np.random.default_rng(seed), stale=stale)
            assert right.passed, right.message
        assert microbatch.check_same_objects(weighted("weight-scalar"),
                                             np.random.default_rng(seed)).passed


def test_a_weight_not_confirmed_at_a_second_point_is_not_named():
    """An accumulated_grad that matches the pos_weight replay on its first call only is not
    named: the name needs the same replay at a second w."""
    calls = []

    def first_call_only(w, X, y, sizes):
        calls.append(1)
        return weighted("pos-weight" if len(calls) == 1 else "unweighted")(w, X, y, sizes)

    result = microbatch.check_accumulated_grad(first_call_only, np.random.default_rng(0),
                                               stale=False)
    assert not result.passed and result.misconception != "weight-as-pos-weight", result.message
    assert "pos_weight" not in result.message, result.message


def share_of(how, bj, B):
    """Micro-batch j's weight as a student computes it: ``b_j / B`` rounded (or not)."""
    share = bj / B
    shares = {
        # rounded, as students round: the round-zf notebook's own first
        "round-2": lambda: round(share, 2),
        "round-3": lambda: round(share, 3),
        "torch-round": lambda: torch.tensor(share).round(decimals=2),
        "formatted": lambda: float(f"{share:.2f}"),
        "float16": lambda: torch.tensor(share, dtype=torch.float16),
        "truncated": lambda: int(share * 100) / 100,
        "floored-3": lambda: math.floor(share * 1000) / 1000,
        # exact, however written: right
        "fraction": lambda: float(Fraction(bj, B)),
        # exact to float32's tolerance only: wrong on the float64 problem (blind round zg)
        "float32": lambda: torch.tensor(share),
        "round-7": lambda: round(share, 7),
        # another mistake with a name of its own
        "inverted": lambda: 1 / share,
    }
    return shares[how]()


def share_weighted(how, *, clear=True):
    """A student's accumulated_grad whose micro-batch mean losses are weighted by
    ``share_of(how)``."""
    def accumulated_grad(w, X, y, sizes):
        if clear:
            w.grad = None
        B, start = sum(sizes), 0
        for bj in sizes:
            Xj, yj = X.narrow(0, start, bj), y.narrow(0, start, bj)
            part = F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum")
            (part / bj * share_of(how, bj, B)).backward()
            start += bj
        return w.grad.detach().clone()
    return accumulated_grad


ROUNDED = ("round-2", "round-3", "torch-round", "formatted", "float16", "truncated",
           "floored-3")
SHARE_NAMES = {**{how: "weights-rounded" for how in ROUNDED}, "float32": "low-precision",
               "round-7": "weights-rounded", "fraction": None, "inverted": "weight-inverted"}
#: (way, seed, stale) whose shares on the float64 problem are exact: seed 0 without a stale
#: grad draws B = 50 there, and every share of it has 2 decimals, so rounded to 7 it is exact.
EXACT_THERE = {("round-7", 0, False)}


@pytest.mark.parametrize("how", sorted(SHARE_NAMES))
def test_a_rounded_share_is_named_by_the_checks(how):
    """Is b_j / B rounded (to k decimals, truncated, through float16) before it weights the
    micro-batch named ``weights-rounded``, with the shares it used, whether w arrives fresh or
    with a stale grad; does an exact share pass however it is written; does a share exact to
    float32 only (a float32 tensor, rounded to 7 decimals) fail on the float64 problem, judged
    at float64's tolerance; and does an inverted share keep its own name?"""
    for seed in range(3):
        for stale in (False, True):
            name = None if (how, seed, stale) in EXACT_THERE else SHARE_NAMES[how]
            result = microbatch.check_accumulated_grad(
                share_weighted(how), np.random.default_rng(seed), stale=stale)
            assert result.passed == (name is None), result.message
            assert result.misconception == name, result.message
            if name == "weights-rounded":
                assert "must be exact" in result.message, result.message
                assert "len(batch) / B" in result.message, result.message
                assert "Checked without finding the cause" not in result.message


def test_the_blind_share_rounded_to_two_decimals_is_told_its_shares():
    """The round-zf notebook's sizes [13, 29, 41]: told the shares it used, 0.16, 0.35, 0.49,
    against the exact ones."""
    rng = np.random.default_rng(5)
    sizes = [13, 29, 41]
    X = torch.tensor(rng.standard_normal((sum(sizes), 3)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, sum(sizes)), dtype=torch.float32)
    w = torch.tensor(rng.normal(0.0, 1.0, 3), dtype=torch.float32, requires_grad=True)
    before = w.detach().clone()
    got = share_weighted("round-2")(w, X, y, sizes)
    verdict = microbatch.judged_twice(share_weighted("round-2"), got, w, X, y, sizes, None,
                                      before)
    assert verdict.misconception == "weights-rounded", verdict.message
    assert "0.16, 0.35, 0.49" in verdict.message, verdict.message
    assert "2 decimals" in verdict.message, verdict.message


def test_a_rounded_share_not_confirmed_on_a_second_draw_is_not_named():
    """An accumulated_grad that matches the rounded shares on its first call only is not
    named: the name needs the same rounding on a second draw."""
    calls = []

    def first_call_only(w, X, y, sizes):
        calls.append(1)
        return share_weighted("round-2" if len(calls) == 1 else "inverted")(w, X, y, sizes)

    rng = np.random.default_rng(5)
    sizes = [13, 29, 41]
    X = torch.tensor(rng.standard_normal((sum(sizes), 3)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, sum(sizes)), dtype=torch.float32)
    w = torch.tensor(rng.normal(0.0, 1.0, 3), dtype=torch.float32, requires_grad=True)
    before = w.detach().clone()
    got = first_call_only(w, X, y, sizes)
    verdict = microbatch.judged_twice(first_call_only, got, w, X, y, sizes, None, before)
    assert not verdict.ok and verdict.misconception != "weights-rounded", verdict.message
