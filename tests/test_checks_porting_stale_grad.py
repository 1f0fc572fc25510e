"""Is q1_logreg's ``logreg_grads`` that hands back the ``.grad`` its arguments carried into the
call named for that (``stale-grad-returned``), and are other answers at that point left alone?

At the point a training loop returns, ``w`` and ``b`` are leaves that carry a ``.grad`` from
the last backward: the gradient at the point before the last update. A student who reads it
instead of computing the closed form returns a gradient of another point (blind round y). The
implementations below are written the way students write them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import logreg_grads_trained


def closed(X, y, w, b):
    with torch.no_grad():
        r = torch.sigmoid(X @ w + b) - y
        return X.T @ r / X.shape[0], r.mean().reshape(b.shape)


def both_cloned(X, y, w, b):  # blind round y's porting/student_02
    if w.grad is not None and b.grad is not None:
        return w.grad.clone(), b.grad.clone()
    return closed(X, y, w, b)


def both_as_is(X, y, w, b):
    if w.requires_grad and w.grad is not None:
        return w.grad, b.grad
    return closed(X, y, w, b)


def both_detached(X, y, w, b):
    grads = (getattr(w, "grad", None), getattr(b, "grad", None))
    if all(g is not None for g in grads):
        return tuple(g.detach() for g in grads)
    return closed(X, y, w, b)


def only_w(X, y, w, b):
    grad_w, grad_b = closed(X, y, w, b)
    return (w.grad.clone() if w.grad is not None else grad_w), grad_b


def only_b(X, y, w, b):
    grad_w, grad_b = closed(X, y, w, b)
    return grad_w, (b.grad.detach().clone() if b.grad is not None else grad_b)


def backward_without_clearing(X, y, w, b):
    """A different mistake: backward onto the caller's w without clearing, so the answer is
    the carried .grad plus the right gradient, and w.grad is changed."""
    F.binary_cross_entropy_with_logits(X @ w + b, y).backward()
    return w.grad.clone(), b.grad.clone()


def backward_on_copies(X, y, w, b):
    """Right: autograd on fresh leaves, the caller's .grad untouched."""
    w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    F.binary_cross_entropy_with_logits(X @ w2 + b2, y).backward()
    return w2.grad, b2.grad


def doubled(X, y, w, b):
    """A different mistake: the closed form times 2."""
    grad_w, grad_b = closed(X, y, w, b)
    return 2 * grad_w, 2 * grad_b


STALE = ["both-cloned", "both-as-is", "both-detached", "only-w", "only-b"]
ANSWERS = {"both-cloned": both_cloned, "both-as-is": both_as_is,
           "both-detached": both_detached, "only-w": only_w, "only-b": only_b,
           "backward-without-clearing": backward_without_clearing,
           "backward-on-copies": backward_on_copies, "doubled": doubled}


@pytest.mark.parametrize("how", STALE)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_stale_grad_is_named(how, seed):
    result = logreg_grads_trained.check_logreg_grads_trained(ANSWERS[how], np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception == "stale-grad-returned", result.message
    assert ".grad" in result.message and "last backward" in result.message, result.message
    assert "does not follow" not in result.message, result.message


@pytest.mark.parametrize("seed", [0, 1])
def test_near_misses_keep_their_verdicts(seed):
    check = logreg_grads_trained.check_logreg_grads_trained
    for how in ("backward-on-copies",):
        assert check(ANSWERS[how], np.random.default_rng(seed)).passed
    for how in ("backward-without-clearing", "doubled"):
        result = check(ANSWERS[how], np.random.default_rng(seed))
        assert not result.passed
        assert result.misconception != "stale-grad-returned", (how, result.message)


def test_the_random_points_carry_no_grad():
    """At plain tensors the stale answer falls back on the closed form and passes there: the
    trained point is what shows it."""
    from autograder.checks.porting import logreg_grads
    assert logreg_grads.check_logreg_grads(both_cloned, np.random.default_rng(0)).passed
