"""Is q1_logreg's ``logreg_grads`` with the sigmoid computed by a wrong formula named for the
formula it used, and is every right way of writing the sigmoid left alone?

The closed form needs p = sigmoid(X @ w + b). A student who writes the sigmoid by hand can get
its formula wrong (the tanh identity without halving z, the sign in the exponent flipped, a
softmax, a piecewise-linear "hard sigmoid"); most of these agree with it where every logit is 0,
the public test's w = 0, b = 0. The implementations below are written as students write them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autograder.checks.porting import logreg, logreg_grads, logreg_grads_trained

FAST = settings(deadline=None, max_examples=20)
seeds = st.integers(0, 2**32 - 1)

#: How each student computes p from the logits z; the wrong ones, then the right ones.
PROBABILITIES = {
    "tanh-unhalved": lambda z: 0.5 * (1.0 + torch.tanh(z)),  # the round-w notebook's own
    "exp-sign-flipped": lambda z: 1 / (1 + torch.exp(z)),
    "exp-ratio-of-minus": lambda z: torch.exp(-z) / (1 + torch.exp(-z)),
    "twice-the-exponent": lambda z: 1 / (1 + torch.exp(-2 * z)),
    "softmax-of-one-logit": lambda z: torch.softmax(z.unsqueeze(1), dim=1).squeeze(1),
    "softmax-over-examples": lambda z: torch.softmax(z, dim=-1),
    "hardsigmoid": F.hardsigmoid,
    "clamped-tangent": lambda z: torch.clamp(0.5 + z / 4, 0, 1),
    "clamped-keras": lambda z: (0.2 * z + 0.5).clamp(0.0, 1.0),
    # a "stable" sigmoid by branches, one branch's sign wrong (blind round x)
    "stable-negative-branch-flipped": lambda z: torch.where(
        z >= 0, 1 / (1 + torch.exp(-z)), 1 / (1 + torch.exp(z))),
    "stable-positive-branch-flipped": lambda z: torch.where(
        z >= 0, torch.exp(-z) / (1 + torch.exp(-z)), torch.exp(z) / (1 + torch.exp(z))),
    # right, in unusual styles
    "exp-ratio": lambda z: torch.exp(z) / (1 + torch.exp(z)),
    "tanh-halved": lambda z: 0.5 * (1 + torch.tanh(z / 2)),
    "expit": torch.special.expit,
    "method": lambda z: z.sigmoid(),
    "logsigmoid-exp": lambda z: F.logsigmoid(z).exp(),
    "two-class-softmax": lambda z: torch.softmax(torch.stack([torch.zeros_like(z), z], 1),
                                                 dim=1)[:, 1],
    "stable-by-branches": lambda z: torch.where(
        z >= 0, 1 / (1 + torch.exp(-z.clamp(min=0))),
        torch.exp(z.clamp(max=0)) / (1 + torch.exp(z.clamp(max=0)))),
}
RIGHT = ["exp-ratio", "tanh-halved", "expit", "method", "logsigmoid-exp", "two-class-softmax",
         "stable-by-branches"]
#: What each wrong one is told it computed.
FORMULAS = {"tanh-unhalved": "sigmoid(2z)", "exp-sign-flipped": "sigmoid(-z)",
            "exp-ratio-of-minus": "sigmoid(-z)", "twice-the-exponent": "sigmoid(2z)",
            "softmax-of-one-logit": "p = 1", "softmax-over-examples": "softmax",
            "hardsigmoid": "z / 6", "clamped-tangent": "z / 4", "clamped-keras": "z / 5",
            "stable-negative-branch-flipped": "sigmoid(|z|)",
            "stable-positive-branch-flipped": "sigmoid(-|z|)"}
WRONG = list(FORMULAS)


def grads_with(how, *, in_b_only=False):
    """A student's logreg_grads whose p is ``PROBABILITIES[how]`` (for both gradients, or for
    b's only, w's by torch.sigmoid)."""
    def logreg_grads_(X, y, w, b):
        with torch.no_grad():
            z = X @ w + b
            p = PROBABILITIES[how](z)
            r_w = (torch.sigmoid(z) if in_b_only else p) - y
            return X.T @ r_w / X.shape[0], (p - y).mean().reshape(b.shape)
    return logreg_grads_


def drawn_point(seed):
    rng = np.random.default_rng(seed)
    X, y, _, _ = logreg.draw_problem(rng)
    w = torch.tensor(rng.normal(size=X.shape[1]), dtype=torch.float32)
    b = torch.tensor([rng.normal()], dtype=torch.float32)
    return X, y, w, b


def judged(fn, X, y, w, b):
    return logreg_grads.judge_grads(fn(X, y, w, b), *logreg_grads.reference_grads(X, y, w, b),
                                    len(y), (X, y, w, b))


@FAST
@given(seeds, st.sampled_from(WRONG + RIGHT), st.booleans())
def test_a_wrong_sigmoid_is_named_for_its_formula(seed, how, in_b_only):
    """Is each wrong formula for p named ``wrong-sigmoid`` with the formula it matched, in both
    gradients or in b's alone; and does each right one pass?"""
    X, y, w, b = drawn_point(seed)
    if in_b_only and how in WRONG:  # one number: named only where no other formula gives it
        z = X @ w + b
        means = {FORMULAS.get(k, "right"): float((p(z) - y).mean())
                 for k, p in PROBABILITIES.items()}
        mine = means.pop(FORMULAS[how])
        assume(all(abs(mine - other) > 1e-3 * abs(mine) + 1e-4 for other in means.values()))
    if how in WRONG:  # a formula wrong on one sign of z only is right where no z has it
        z = X @ w + b
        assume(not torch.allclose(PROBABILITIES[how](z), torch.sigmoid(z), atol=1e-3))
    verdict = judged(grads_with(how, in_b_only=in_b_only), X, y, w, b)
    if how in RIGHT:
        assert verdict.ok, verdict.message
        return
    assert verdict.misconception == "wrong-sigmoid", verdict.message
    assert FORMULAS[how] in verdict.message, verdict.message
    assert "torch.sigmoid(X @ w + b)" in verdict.message, verdict.message


@pytest.mark.parametrize("how", ["tanh-unhalved", "exp-sign-flipped", "hardsigmoid"])
def test_a_wrong_sigmoid_is_right_where_every_logit_is_zero(how):
    """At w = 0, b = 0 (the public test's point) tanh without halving, the flipped sign and a
    hard sigmoid all give p = 0.5, as the sigmoid does: right there, so nothing is named."""
    X, y, w, b = drawn_point(1)
    assert judged(grads_with(how), X, y, torch.zeros_like(w), torch.zeros_like(b)).ok


@FAST
@given(seeds)
def test_other_mistakes_keep_their_names(seed):
    """Is a gradient with its sign flipped, or m times too large, still named for that, and
    never as a wrong sigmoid?"""
    X, y, w, b = drawn_point(seed)
    assume(abs(float(b)) > 0.05)
    r = torch.sigmoid(X @ w + b) - y
    m = len(y)
    for got, name in (((-X.T @ r / m, r.mean().reshape(1)), "grad-sign-flipped"),
                      ((X.T @ r, r.mean().reshape(1)), "grad-not-divided-by-m"),
                      ((X.T @ (torch.sigmoid(X @ w) - y) / m, r.mean().reshape(1)),
                       "bias-left-out")):
        verdict = logreg_grads.judge_grads(got, *logreg_grads.reference_grads(X, y, w, b), m,
                                           (X, y, w, b))
        assert verdict.misconception == name, verdict.message


@pytest.mark.parametrize("how", ["tanh-unhalved", "exp-sign-flipped", "softmax-over-examples",
                                 "stable-negative-branch-flipped"])
def test_a_wrong_sigmoid_is_named_by_the_checks(how):
    """The whole checks, as a notebook meets them: at random points, and at the point a
    training loop returns (leaves that require grad); a right one passes both."""
    for seed in range(3):
        for check in (logreg_grads.check_logreg_grads, logreg_grads_trained.check_logreg_grads_trained):
            result = check(grads_with(how), np.random.default_rng(seed))
            assert not result.passed and result.misconception == "wrong-sigmoid", result.message
            assert FORMULAS[how] in result.message, result.message
            right = check(grads_with("tanh-halved"), np.random.default_rng(seed))
            assert right.passed, right.message


def test_a_wrong_sigmoid_not_confirmed_at_a_second_point_is_not_named():
    """A logreg_grads that matches the tanh replay on its first call only (a cache, a
    counter) is not named: the name needs the same formula at a second point."""
    calls = []

    def first_call_only(X, y, w, b):
        calls.append(1)
        p = (0.5 * (1 + torch.tanh(X @ w + b)) if len(calls) == 1
             else torch.sigmoid(X @ w + b) + 0.01)
        r = p - y
        return X.T @ r / X.shape[0], r.mean().reshape(b.shape)

    result = logreg_grads.check_logreg_grads(first_call_only, np.random.default_rng(0))
    assert not result.passed and result.misconception != "wrong-sigmoid", result.message
    assert "sigmoid(2z)" not in result.message, result.message
