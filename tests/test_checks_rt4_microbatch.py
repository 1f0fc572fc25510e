"""q2 ``accumulated_grad`` that accumulates only the first four micro-batches (red team rt-4):
it lost only the check whose last problem has five sizes, told "wrong for micro-batch-of-one
inputs" because the probe's nearest input merged the size-1 micro-batch into its neighbour,
one micro-batch fewer. The nearest input keeps the count now, and a replay of the first or
last k micro-batches names the mistake ``micro-batches-dropped``."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting.microbatch import check_accumulated_grad, input_classes
from autograder.checks.porting.microbatch_mistakes import DROPPED, diagnose
from autograder.checks.seeding import generator


def _first(count, whole=True):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B, start = X.shape[0], 0
        used = sizes[:count]
        rows = B if whole else sum(used)
        for b in used:
            loss = F.binary_cross_entropy_with_logits(X[start:start + b] @ w, y[start:start + b])
            (loss * b / rows).backward()
            start += b
        return w.grad.detach().clone()
    return accumulated_grad


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_first_micro_batches_only_are_named(count, whole):
    torch.manual_seed(count)
    X, y = torch.randn(40, 3, dtype=torch.float64), (torch.rand(40) < 0.5).double()
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)
    sizes = [7, 9, 5, 8, 11]
    got = _first(count, whole)(w, X, y, sizes)
    name, told = diagnose(got, w.detach(), X, y, sizes, None)
    assert name == DROPPED, (name, told)
    assert f"first {count} of the 5 micro-batches" in told, told


@pytest.mark.parametrize("stale", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_first_four_lose_the_point(seed, stale):
    result = check_accumulated_grad(_first(4), generator(seed), stale=stale)
    assert not result.passed  # the last problem has more than four micro-batches
    assert result.misconception == DROPPED, result.message
    assert "micro-batch of one row" not in result.message, result.message


def test_the_nearest_input_out_of_micro_batch_of_one_keeps_the_count():
    w, X, y = torch.zeros(2), torch.zeros(20, 2), torch.zeros(20)
    (one,) = [c for c in input_classes((w, X, y, [4, 1, 6, 9])) if c.name == "micro-batch-of-one"]
    assert one.args[3] == [3, 2, 6, 9]  # the nearest of 3 or more (the first, at a tie)
    (one,) = [c for c in input_classes((w, X, y, [2, 1, 2])) if c.name == "micro-batch-of-one"]
    assert one.args[3] == [2, 3]  # none of 3 or more: merged into the next, as before


def _cleared_inside(w, X, y, sizes):
    """Blind round a's student_10: w.grad cleared before every micro-batch."""
    B, start = X.shape[0], 0
    for b in sizes:
        w.grad = None
        loss = F.binary_cross_entropy_with_logits(X[start:start + b] @ w, y[start:start + b])
        (loss * b / B).backward()
        start += b
    return w.grad.detach().clone()


def _ones_skipped(w, X, y, sizes):
    """Blind round z's student_02: micro-batches of one row skipped."""
    w.grad = None
    B, start = X.shape[0], 0
    for b in sizes:
        if b > 1:
            loss = F.binary_cross_entropy_with_logits(X[start:start + b] @ w,
                                                      y[start:start + b])
            (loss * b / B).backward()
        start += b
    return w.grad.detach().clone()


@pytest.mark.parametrize("seed", range(4))
def test_a_grad_cleared_inside_the_loop_is_told_so(seed):
    result = check_accumulated_grad(_cleared_inside, generator(seed), stale=False)
    assert not result.passed and result.misconception == DROPPED, result.message
    assert "cleared (or assigned) inside the loop" in result.message, result.message


@pytest.mark.parametrize("seed", range(4))
def test_micro_batches_of_one_skipped_stay_the_probes(seed):
    result = check_accumulated_grad(_ones_skipped, generator(seed), stale=False)
    assert not result.passed and result.misconception != DROPPED, result.message
