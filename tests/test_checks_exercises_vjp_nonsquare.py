"""q4 ``vjp_square``: the leaves-inputs check charging a shape mistake a second time.

The leaves-inputs check judged a tensor of another shape ``wrong-type`` (the type blamed, and
the shape already charged by the values check as ``wrong-shape``): a gradient in x's sizes
reversed (``leaf.grad.reshape(x.shape[::-1])``), squeezed or transposed lost both points. It now
judges what the call did to x and the weights only, as q5's independence check does, here and
through the worker; what is no answer (not a tensor, or another number of entries) still fails.

A v built at x.t() (``torch.func.vjp`` at ``x.t()``) with the weights as given raises torch's
"Mismatch in shape" with a grad_output of x's own shape: it was named ``weights-reshaped``, a
wrong cause; it is told that v had another shape, and reshaped weights keep their name.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import vjp, vjp_untouched
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(30)
BLIND_SEED = 60  # the one seed of 0..99 whose 2-D x's are all square


def _leaf(x):
    return x.detach().clone().requires_grad_()


def _returning(arrange):
    """A vjp_square with the right pullback, handed back as ``arrange(grad, x)``."""
    def vjp_square(x, weights):
        leaf = _leaf(x)
        (leaf ** 2).backward(weights)
        return arrange(leaf.grad, x)
    return vjp_square


def _two_d(arrange):
    return lambda g, x: arrange(g, x) if g.dim() == 2 else g


def _leaf_in_reversed_sizes(x, weights):
    leaf = x.detach().reshape(x.shape[::-1]).clone().requires_grad_()
    (leaf ** 2).backward(weights.reshape(x.shape[::-1]))
    return leaf.grad


def _func_vjp_reversed(x, weights):
    _, pullback = torch.func.vjp(lambda t: t ** 2, x.detach())
    return pullback(weights)[0].reshape(x.shape[::-1])


def _jacobian_reversed(x, weights):
    n = x.numel()
    jac = torch.autograd.functional.jacobian(lambda t: t ** 2, x.detach()).reshape(n, n)
    return (jac.T @ weights.reshape(-1)).reshape(tuple(reversed(x.shape)))


REVERSED = {  # the identity at a 1-D and a square x
    "grad.reshape(x.shape[::-1])": _returning(lambda g, x: g.reshape(x.shape[::-1])),
    "grad.reshape(x.T.shape)": _returning(_two_d(lambda g, x: g.reshape(x.T.shape))),
    "torch.reshape(grad, reversed sizes)": _returning(
        lambda g, x: torch.reshape(g, tuple(reversed(x.shape)))),
    "grad.contiguous().view(x.size(1), x.size(0))": _returning(_two_d(
        lambda g, x: g.contiguous().view(x.size(1), x.size(0)))),
    "a leaf made in x's sizes reversed": _leaf_in_reversed_sizes,
    "torch.func.vjp, reshaped to reversed sizes": _func_vjp_reversed,
    "a jacobian's product reshaped to reversed sizes": _jacobian_reversed,
}


@pytest.mark.parametrize("how", sorted(REVERSED))
def test_its_leaves_inputs_point_is_kept(how):
    """Before, the leaves-inputs check charged the shape again, as ``wrong-type``."""
    for seed in SEEDS:
        result = vjp_untouched.check_untouched(REVERSED[how], generator(seed))
        assert result.passed, (how, seed, result.message)


def test_a_squeezed_gradient_is_told_in_the_values_check_only():
    """Blind round zj's squeeze: the values check tells it; the leaves-inputs check, which
    before told it a second time as ``wrong-type``, keeps its point."""
    fn = _returning(lambda g, x: g.squeeze())
    result = vjp.check_vjp(fn, generator(11))
    assert result.misconception == "wrong-shape", result.message
    assert "a dimension of size 1 was dropped" in result.message, result.message
    assert vjp_untouched.check_untouched(fn, generator(11)).passed


def test_what_is_no_answer_still_fails_the_leaves_inputs_check():
    nothing = vjp_untouched.check_untouched(lambda x, w: None, generator(0))
    assert (nothing.passed, nothing.misconception) == (False, "wrong-type"), nothing.message
    loss = vjp_untouched.check_untouched(
        lambda x, w: (w * x ** 2).sum(), generator(0))
    assert (loss.passed, loss.misconception) == (False, "wrong-shape"), loss.message
    assert "not one per entry of x" in loss.message, loss.message


def test_judge_untouched_judges_a_reshaped_answer_on_the_inputs_only():
    x, weights = torch.tensor([[1.0, -2.0, 3.0], [0.5, 1.5, -1.0]]), torch.ones(2, 3) * 2
    before = vjp_untouched.snapshot(x, weights)
    right = 2 * x * weights
    for got in (right.T, right.reshape(3, 2), right.reshape(-1), right.reshape(1, 2, 3)):
        assert vjp_untouched.judge_untouched(before, x, weights, got).ok
    weights.mul_(3)
    changed = vjp_untouched.judge_untouched(before, x, weights, right.T)
    assert changed.misconception == "modified-weights", changed.message


def _func_vjp_at_x_t(x, weights):
    primal = x.detach().t() if x.dim() == 2 else x.detach()
    _, pullback = torch.func.vjp(torch.square, primal)
    return pullback(weights)[0]


def test_a_v_of_x_transposed_is_not_told_the_weights_were_reshaped():
    """torch.func.vjp at x.t() with the weights as given: torch's grad_output has x's shape,
    it is v that does not; ``weights-reshaped`` was a wrong cause."""
    told = 0
    for seed in SEEDS:
        for check in (vjp.check_vjp, vjp_untouched.check_untouched):
            result = check(_func_vjp_at_x_t, generator(seed))
            assert not result.passed and result.misconception != "weights-reshaped", (
                seed, result.message)
            if "Mismatch in shape" in result.message:
                assert "it was v, of shape" in result.message, result.message
                told += 1
    assert told


def _backward_with(weights_of):
    def vjp_square(x, weights):
        leaf = _leaf(x)
        (leaf ** 2).backward(weights_of(weights))
        return leaf.grad
    return vjp_square


@pytest.mark.parametrize("weights_of", [lambda w: w.flatten(), lambda w: w.reshape(w.shape[::-1]),
                                        lambda w: w.reshape(1, -1)],
                         ids=["flatten", "reversed sizes", "reshape(1, -1)"])
def test_weights_reshaped_keeps_its_name(weights_of):
    named = 0
    for seed in range(12):
        for check in (vjp.check_vjp, vjp_untouched.check_untouched):
            result = check(_backward_with(weights_of), generator(seed))
            if "Mismatch in shape" in result.message:
                assert result.misconception == "weights-reshaped", result.message
                named += 1
    assert named


# --- through the worker -------------------------------------------------------------------

SOURCES = {
    "reversed": ("    return leaf.grad.reshape(x.shape[::-1])\n", True),
    "transposed": ("    return leaf.grad.T if leaf.grad.dim() == 2 else leaf.grad\n", True),
    "into the weights, transposed": ("    w = weights\n    w *= leaf.grad\n"
                                     "    return w.T if w.dim() == 2 else w\n", False),
}


@pytest.mark.parametrize("how", sorted(SOURCES))
def test_the_leaves_inputs_check_agrees_through_the_worker(how):
    tail, untouched = SOURCES[how]
    source = ("def vjp_square(x, weights):\n"
              "    leaf = x.detach().clone().requires_grad_()\n"
              "    (leaf ** 2).backward(weights)\n" + tail)
    for seed in (BLIND_SEED, 3):
        remote = vjp_untouched.check_untouched(Loopback(source).function("vjp_square"),
                                               np.random.default_rng(seed))
        here = vjp_untouched.check_untouched(_local(source), np.random.default_rng(seed))
        assert remote.passed == here.passed == untouched, (how, seed, remote.message)
        assert (remote.misconception, remote.message) == (here.misconception, here.message)
        if not untouched:
            assert remote.misconception == "modified-weights", remote.message


def _local(source):
    namespace = {"torch": torch}
    exec(source, namespace)  # noqa: S102 - the test's own source
    return namespace["vjp_square"]
