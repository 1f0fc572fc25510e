"""Mistake classes of ``autograd-exercises`` answers that blind round y lost points on without
being told why (or told a wrong cause), each named from its own evidence with the student's
variants, and never on its near-misses: q1 gradients capped at a constant
(``gradients-clipped``)."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import accumulation
from autograder.checks.seeding import generator

SEEDS = range(3)

# ---------------------------------------------------------------- q1_accumulation


def _capped(cap, where="after"):
    """A square_grads that caps each gradient with ``cap(p)`` after every backward (in place
    on p.grad), or (``where="read"``) only the value it records, ``cap`` then returning it."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(float(p0), requires_grad=True)
        grads = []
        for _ in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            if where == "read":
                grads.append(float(cap(p.grad)))
            else:
                cap(p)
                grads.append(p.grad.item())
        return grads
    return square_grads


#: Gradients capped at one constant, and the cap the message must tell.
CLIPPED = {
    "clip_grad_norm_ 20 (round y)": (_capped(
        lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=20.0)), "20"),
    "clip_grad_value_ 5": (_capped(
        lambda p: torch.nn.utils.clip_grad_value_([p], clip_value=5.0)), "5"),
    "p.grad.clamp_ 1.5": (_capped(lambda p: p.grad.clamp_(-1.5, 1.5)), "1.5"),
    "p.grad.data.clamp_ 100": (_capped(lambda p: p.grad.data.clamp_(-100, 100)), "100"),
    "torch.clamp on the value read": (_capped(lambda g: torch.clamp(g, -7.0, 7.0).item(),
                                              "read"), "7"),
    "min/max on the value read": (_capped(lambda g: max(-12.5, min(12.5, g.item())), "read"),
                                  "12.5"),
}


def _hard_coded(p0, repeats, clear):
    """A constant answer, whatever p0: it does not follow p0's sign."""
    return [20.0] * repeats


def _unit(p0, repeats, clear):
    """Each gradient divided by its norm: +-1 at every size, not capped."""
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        p.grad.div_(p.grad.norm())
        grads.append(p.grad.item())
    return grads


NOT_CLIPPED = {
    "cap that follows p0": _capped(
        lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=1.5 * abs(p.item()))),
    "a constant answer": _hard_coded,
    "gradient normalised": _unit,
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(CLIPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_clipped_gradients_are_named(seed, how, clear):
    """Is a square_grads that caps its gradients at a constant (clip_grad_norm_,
    clip_grad_value_, clamp_ in place, a clamp on the value read) named for it, with the cap,
    and never told that it ignores p0?"""
    fn, cap = CLIPPED[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception == "gradients-clipped", result.message
    for words in (f"c={cap}", "clip", "capped"):
        assert words in result.message, result.message
    assert "does not follow" not in result.message, result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_CLIPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_clipping_named_only_on_its_evidence(seed, how, clear):
    result = accumulation.check_square_grads(NOT_CLIPPED[how], generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception != "gradients-clipped", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_clip_no_gradient_reaches_passes(seed, clear):
    fn = _capped(lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=1e9))
    assert accumulation.check_square_grads(fn, generator(seed), clear=clear).passed


def test_capped_answer_at_large_p0_is_not_said_to_ignore_it():
    """Round y's answer at a large p0 ([20, 20, 20]) is named, the cap told; a probe varying
    p0 would see it unchanged and blame the argument."""
    verdict = accumulation.judge_grads([20.0, 20.0, 20.0], 1234.5, 3, True)
    assert verdict.misconception == "gradients-clipped", verdict.message
    assert "c=20" in verdict.message
