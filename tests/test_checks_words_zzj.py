"""Blind round zzj: two messages that told a cause the check had not seen. Each is now worded
for its class, whatever the spelling; both spellings of each class are tested here, and the
old wording fails them:

- q2 ``accumulated_grad`` (``stale-grad-kept`` on a right answer): the grader sees that
  ``w.grad`` after the call is the stale grad plus the answer, not how the answer was taken.
  The blind student read the ``.grad`` of ``wc = w.clone()`` (``retain_grad``); nothing was
  subtracted, yet the message said "subtracted". It now says what is established, and no one
  way ("subtract" appears nowhere).
- q4 ``vjp_square`` (``leaf-not-detached``): the grader sees None and the pullback in the
  caller's ``x.grad``, not how the leaf was copied. The blind student wrote
  ``torch.empty_like(x).copy_(x)`` and was told "clone() of a tensor that requires grad". It
  now names the class of copies made from x while x requires grad.

The same class found elsewhere and fixed alike: q2's known factors (``sum-not-mean`` told
reduction='sum' for a mean loss times b_j too; ``divided-by-J``/``-B`` said "the result"), and
q4_device's ``batch-not-moved`` (told as if batch.to(device) had been called unassigned).

Near-misses keep their verdicts (right answers pass, other names stay).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.exercises import vjp, vjp_untouched
from autograder.checks.porting import device_predict, microbatch
from autograder.checks.porting.microbatch_subtracted import stale_kept
from autograder.checks.result import Verdict
from autograder.checks.seeding import generator

# --- q2: stale-grad-kept, the answer taken from elsewhere ------------------------------------


def _window(w, X, y, sizes):
    B = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * (len(yj) / B)).backward()


def from_a_clone(w, X, y, sizes):  # blind round zzj: the clone's retained grad, w.grad kept
    wc = w.clone()
    wc.retain_grad()
    _window(wc, X, y, sizes)
    return wc.grad.detach().clone()


def subtracted(w, X, y, sizes):  # blind round zc: w.grad - stale
    before = w.grad.detach().clone() if w.grad is not None else torch.zeros_like(w)
    _window(w, X, y, sizes)
    return (w.grad - before).detach().clone()


def autograd_grad_added(w, X, y, sizes):  # torch.autograd.grad, then added into w.grad
    B = sum(sizes)
    total = torch.zeros_like(w)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj) * (len(yj) / B)
        total = total + torch.autograd.grad(loss, w)[0]
    with torch.no_grad():
        if w.grad is None:
            w.grad = total.clone()
        else:
            w.grad += total
    return total


def cleared_then_restored(w, X, y, sizes):  # cleared, then the caller's grad put back on top
    saved = w.grad
    w.grad = None
    _window(w, X, y, sizes)
    answer = w.grad.detach().clone()
    if saved is not None:
        w.grad = w.grad + saved
    return answer


KEPT = {"a clone's .grad": from_a_clone, "w.grad - stale": subtracted,
        "autograd.grad added into w.grad": autograd_grad_added,
        "cleared, then restored": cleared_then_restored}


@pytest.mark.parametrize("how", sorted(KEPT))
@pytest.mark.parametrize("seed", [0, 3])
def test_the_stale_grad_left_under_the_answer_is_named_without_a_guessed_way(seed, how):
    result = microbatch.check_accumulated_grad(KEPT[how], np.random.default_rng(seed),
                                               stale=True)
    assert not result.passed and result.misconception == "stale-grad-kept", result.message
    message = result.message
    assert "subtract" not in message.lower(), message
    assert ".grad that w arrived with plus the gradient returned" in message, message
    assert "w.grad = None" in message, message


def test_a_failed_answer_is_told_what_taking_the_stale_grad_away_would_cost():
    w = torch.zeros(3, requires_grad=True)
    stale, got = torch.full((3,), 1e4), torch.tensor([0.5, -0.25, 0.125])
    w.grad = stale + got
    failed = Verdict(False, "accumulated_grad returned [...]; expected [...].")
    verdict = stale_kept(failed, got, w, stale, 1e-4, 1e-6)
    assert verdict.misconception == "stale-grad-kept", verdict.message
    assert verdict.message.startswith("accumulated_grad returned [...]"), verdict.message
    assert "would also lose float32 digits" in verdict.message, verdict.message
    assert "subtract" not in verdict.message.lower(), verdict.message
    right = stale_kept(Verdict(True), got, w, stale, 1e-4, 1e-6)
    assert "float32 digits" not in right.message, right.message


def cleared(w, X, y, sizes):  # right
    w.grad = None
    _window(w, X, y, sizes)
    return w.grad.detach().clone()


def stale_returned(w, X, y, sizes):  # another message: the answer itself holds the stale grad
    _window(w, X, y, sizes)
    return w.grad.clone()


def test_near_misses_keep_their_verdicts():
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(cleared, np.random.default_rng(1),
                                                 stale=stale).passed
        assert microbatch.check_accumulated_grad(from_a_clone, np.random.default_rng(1),
                                                 stale=False).passed
    result = microbatch.check_accumulated_grad(stale_returned, np.random.default_rng(1),
                                               stale=True)
    assert result.misconception == "stale-grad-kept", result.message
    assert "It matches the right gradient plus the .grad that w arrived with" in result.message
    assert "taken from elsewhere" not in result.message, result.message


# --- q4: leaf-not-detached, whichever copy of x -----------------------------------------------


def _leaf_from(copy_of):
    def vjp_square(x, weights):
        leaf = copy_of(x).requires_grad_(True)
        (leaf ** 2).backward(weights)
        return leaf.grad
    return vjp_square


COPIES = {
    "x.clone()": _leaf_from(lambda x: x.clone()),
    "torch.empty_like(x).copy_(x) (round zzj)": _leaf_from(
        lambda x: torch.empty_like(x).copy_(x)),
    "torch.zeros_like(x).copy_(x)": _leaf_from(lambda x: torch.zeros_like(x).copy_(x)),
    "x + 0": _leaf_from(lambda x: x + 0),
    "x * 1": _leaf_from(lambda x: x * 1),
}
CHECKS = {"values": vjp.check_vjp, "untouched": vjp_untouched.check_untouched}


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("seed", range(2))
def test_a_copy_of_x_without_detach_is_named_for_its_class(seed, how, check):
    result = CHECKS[check](COPIES[how], generator(seed))
    assert not result.passed and result.misconception == "leaf-not-detached", result.message
    message = result.message
    assert "clone() of a tensor" not in message, message
    assert "a copy made from x while x requires grad" in message, message
    for spelling in ("x.clone()", "copy_(x)", "x * 1", "x + 0"):
        assert spelling in message, message
    for words in ("non-leaf", "x.grad", "x.detach().clone().requires_grad_(True)"):
        assert words in message, message


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_a_detached_copy_passes_however_it_is_made(check):
    for copy_of in (lambda x: torch.empty_like(x).copy_(x.detach()),
                    lambda x: x.detach() + 0, lambda x: x.detach().clone()):
        result = CHECKS[check](_leaf_from(copy_of), generator(1))
        assert result.passed, result.message


# --- q2: a known factor, named for its effect, not for one way of writing it -----------------


def _weighted(scale, at_end=1.0):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B, J = sum(sizes), len(sizes)
        for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
            loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
            (loss * scale(len(yj), B, J)).backward()
        return w.grad * at_end(J) if callable(at_end) else w.grad.clone()
    return accumulated_grad


def _summed(w, X, y, sizes):
    w.grad = None
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum").backward()
    return w.grad.clone()


FACTORS = {
    "reduction='sum'": (_summed, "sum-not-mean"),
    "mean loss times b_j, no / B": (_weighted(lambda b, B, J: b), "sum-not-mean"),
    "w.grad / J at the end": (_weighted(lambda b, B, J: b / B, lambda J: 1 / J), "divided-by-J"),
    "weights b_j / B / J": (_weighted(lambda b, B, J: b / B / J), "divided-by-J"),
    "weights b_j / B / B": (_weighted(lambda b, B, J: b / B / B), "divided-by-B"),
}
TOLD = {"sum-not-mean": "the per-example losses are summed instead of averaged (reduction='sum', "
                        "or each micro-batch's mean loss scaled by b_j without the / B",
        "divided-by-J": "divided by J once more (the result, or each micro-batch's loss or "
                        "weight)",
        "divided-by-B": "divided by B once more (the result, or each micro-batch's loss or "
                        "weight)"}


@pytest.mark.parametrize("how", sorted(FACTORS))
def test_a_known_factor_is_told_every_way_it_is_written(how):
    fn, name = FACTORS[how]
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(2), stale=False)
    assert not result.passed and result.misconception == name, result.message
    assert TOLD[name] in result.message, result.message
    assert "the result was divided" not in result.message, result.message


# --- q4_device: a batch left off the device, whether .to was dropped or never called ----------

on_meta = pytest.mark.skipif(torch.cuda.is_available(),
                             reason="the moved check runs on CUDA here, not meta")


def _not_assigned(model, batch, device_):
    model.to(device_).eval()
    batch.to(device_)  # the result dropped
    with torch.no_grad():
        return model(batch)


def _never_moved(model, batch, device_):
    model.to(device_).eval()
    with torch.no_grad():
        return model(batch)


@on_meta
@pytest.mark.parametrize("fn", [_not_assigned, _never_moved])
def test_a_batch_left_behind_is_told_both_ways(fn):
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=True)
    assert not result.passed and result.misconception == "batch-not-moved", result.message
    assert "never moved, or batch.to(device) called without keeping its result" in result.message
    assert "so assign it: batch = batch.to(device)." in result.message, result.message
