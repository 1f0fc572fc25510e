"""q4 ``vjp_square`` returning the right pullback in another layout, and the leaves-inputs
check charging a shape mistake a second time.

A gradient laid out in x's sizes reversed (``leaf.grad.reshape(x.shape[::-1])``, ``view(x.size(1),
x.size(0))``, a leaf made in those sizes) is the right one at a 1-D and at a square 2-D x. The
hidden 2-D x's are drawn at random sizes: at seed 60 (of 0..99) every one was square and such an
answer kept full marks. Now a non-square 2-D x is asked last on every seed (drawn after every
other input, so each seed's earlier inputs are what they were): the answer loses the values
point on every seed, told that its values are right in x's sizes reversed. The right values
transposed (``leaf.grad.T``) are ``grad-transposed`` and a transpose read into x's shape
(``leaf.grad.t().reshape(x.shape)``) ``grad-rearranged``, as q3 names them; correct answers in
layout-heavy styles keep full marks on every seed; other named mistakes keep their names.

The leaves-inputs check judged a tensor of another shape ``wrong-type`` (a second charge, the
type blamed): it now judges what the call did to x and the weights only, as q5's independence
check does, here and through the worker; what is no answer (not a tensor, or another number of
entries) still fails.

A v built at x.t() (``torch.func.vjp`` at ``x.t()``) with the weights as given raises torch's
"Mismatch in shape" with a grad_output of x's own shape: it was named ``weights-reshaped``, a
wrong cause; it is told that v had another shape, and reshaped weights keep their name.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import vjp, vjp_untouched
from autograder.checks.exercises.vjp_layout import REARRANGED, TRANSPOSED, WIDE
from autograder.checks.exercises.vjp_range import draw_large
from autograder.checks.exercises.vjp_repeat import draw_repeat
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(30)
BLIND_SEED = 60  # the one seed of 0..99 whose 2-D x's before the new one are all square


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

TRANSPOSING = {
    "grad.T": _returning(_two_d(lambda g, x: g.T)),
    "grad.t() unless square": _returning(_two_d(
        lambda g, x: g if x.shape[0] == x.shape[1] else g.t())),
    "grad.permute(1, 0)": _returning(_two_d(lambda g, x: g.permute(1, 0))),
    "einsum('ij->ji')": _returning(_two_d(lambda g, x: torch.einsum("ij->ji", g))),
}

REARRANGING = {
    "grad.t().reshape(x.shape)": (_returning(_two_d(lambda g, x: g.t().reshape(x.shape))),
                                  "read column by column into x's shape"),
    "einsum('ij->ji').reshape(x.shape)": (
        _returning(_two_d(lambda g, x: torch.einsum("ij->ji", g).reshape(x.shape))),
        "read column by column into x's shape"),
    "grad.reshape(x.shape[::-1]).t()": (
        _returning(_two_d(lambda g, x: g.reshape(x.shape[::-1]).t())),
        "read into x's sizes reversed and transposed back"),
}


def _x_t_round_trip(x, weights):
    if x.dim() != 2:
        return _returning(lambda g, x: g)(x, weights)
    leaf = x.detach().t().clone().requires_grad_()
    (leaf ** 2).backward(weights.t())
    return leaf.grad.t()


def _reversed_and_back(x, weights):
    leaf = x.detach().reshape(x.shape[::-1]).clone().requires_grad_()
    (leaf ** 2).backward(weights.reshape(x.shape[::-1]))
    return leaf.grad.reshape(x.shape)


def _einsum(x, weights):
    leaf = _leaf(x)
    dims = "ijklmn"[:x.dim()]  # any number of dimensions: the values check asks at a 3-D x
    spec = f"{dims},{dims}->"
    torch.einsum(spec, weights, leaf ** 2).backward()
    return leaf.grad


def _func_vjp(x, weights):
    _, pullback = torch.func.vjp(torch.square, x.detach())
    return pullback(weights)[0]


def _grad_of_transposed(x, weights):
    leaf = _leaf(x)
    v, w = ((leaf ** 2).t(), weights.t()) if x.dim() == 2 else (leaf ** 2, weights)
    return torch.autograd.grad(v, leaf, grad_outputs=w)[0]


def _jacobian(x, weights):
    n = x.numel()
    jac = torch.autograd.functional.jacobian(lambda t: t ** 2, x.detach()).reshape(n, n)
    return (weights.reshape(1, n) @ jac).reshape(x.shape)


def _permuted(x, weights):
    leaf = _leaf(x)
    dims = tuple(range(x.dim() - 1, -1, -1))
    (leaf.permute(dims) ** 2).backward(weights.permute(dims))
    return leaf.grad


CORRECT = {
    "plain": _returning(lambda g, x: g),
    "x.t() leaf, weights.t(), grad.t() back": _x_t_round_trip,
    "reversed sizes and back": _reversed_and_back,
    "flat leaf, view_as(x)": lambda x, w: _returning(lambda g, x: g)(
        x.reshape(-1), w.reshape(-1)).view_as(x),
    "einsum ij,ij->": _einsum,
    "torch.func.vjp": _func_vjp,
    "autograd.grad on v.t() with weights.t()": _grad_of_transposed,
    "weights @ jacobian": _jacobian,
    "both permuted": _permuted,
    "grad.mT.mT.contiguous()": _returning(_two_d(lambda g, x: g.mT.mT.contiguous())),
    "grad.reshape(x.shape[::-1]).reshape(x.shape)": _returning(
        lambda g, x: g.reshape(x.shape[::-1]).reshape(x.shape)),
}


def _seen(seed):
    """The (x, weights) of every call the values check makes on a right answer at ``seed``."""
    calls = []

    def vjp_square(x, weights):
        calls.append((x.detach().clone(), weights.detach().clone()))
        return CORRECT["plain"](x, weights)
    assert vjp.check_vjp(vjp_square, generator(seed)).passed
    return calls


def _old_inputs(seed):
    """The inputs the values check drew before the non-square x, in its order (case, twin)."""
    rng = generator(seed)
    cases = vjp.draw_cases(rng)
    twins = vjp.draw_twins(rng, cases)
    cases.append(draw_repeat(rng, cases[0][0]))
    twins += vjp.draw_twins(rng, cases[-1:])
    cases.append(draw_large(rng))
    twins += vjp.draw_twins(rng, cases[-1:])
    return [pair for both in zip(cases, twins) for pair in both]


@pytest.mark.parametrize("seed", [*SEEDS, BLIND_SEED])
def test_every_seed_asks_at_a_non_square_x_last_and_keeps_its_earlier_inputs(seed):
    """... and after it, at a 3-D x (red team rt-11)."""
    calls, old = _seen(seed), _old_inputs(seed)
    assert len(calls) == len(old) + 4
    for (x, w), (ox, ow) in zip(calls, old):
        assert torch.equal(x, ox) and torch.equal(w, ow) and x.dtype == ox.dtype
    (x, _), (twin, _) = calls[-4:-2]
    assert x.dim() == 2 and x.shape[0] != x.shape[1] and min(x.shape) > 1, x.shape
    assert (twin.shape, twin.dtype) == (x.shape, x.dtype) and not torch.equal(twin, x)
    (x, _), (twin, _) = calls[-2:]
    assert x.dim() == 3 and min(x.shape) > 1, x.shape
    assert (twin.shape, twin.dtype) == (x.shape, x.dtype) and not torch.equal(twin, x)


def test_seed_60_drew_only_square_matrices_before():
    earlier = {tuple(x.shape) for x, _ in _old_inputs(BLIND_SEED) if x.dim() == 2}
    assert earlier and all(m == n for m, n in earlier), earlier


@pytest.mark.parametrize("how", sorted(REVERSED))
def test_a_gradient_in_reversed_sizes_loses_the_values_point_on_every_seed(how):
    for seed in [*SEEDS, BLIND_SEED]:
        result = vjp.check_vjp(REVERSED[how], generator(seed))
        assert not result.passed, (how, seed)
        assert result.misconception == "wrong-shape", (how, seed, result.message)
        assert "the right values read row by row into x's sizes reversed" in result.message, (
            seed, result.message)
        assert "Return leaf.grad as backward leaves it" in result.message, result.message


@pytest.mark.parametrize("how", sorted(REVERSED))
def test_its_leaves_inputs_point_is_kept(how):
    """Before, the leaves-inputs check charged the shape again, as ``wrong-type``."""
    for seed in SEEDS:
        result = vjp_untouched.check_untouched(REVERSED[how], generator(seed))
        assert result.passed, (how, seed, result.message)


@pytest.mark.parametrize("how", sorted(TRANSPOSING))
def test_the_right_gradient_transposed_is_named_on_every_seed(how):
    for seed in [*SEEDS, BLIND_SEED]:
        result = vjp.check_vjp(TRANSPOSING[how], generator(seed))
        assert (result.passed, result.misconception) == (False, TRANSPOSED), (
            how, seed, result.message)
        assert "the right gradient transposed" in result.message, result.message
        assert vjp_untouched.check_untouched(TRANSPOSING[how], generator(seed)).passed


@pytest.mark.parametrize("how", sorted(REARRANGING))
def test_a_transpose_read_into_x_shape_is_named_rearranged_on_every_seed(how):
    fn, told = REARRANGING[how]
    for seed in SEEDS:
        result = vjp.check_vjp(fn, generator(seed))
        assert (result.passed, result.misconception) == (False, REARRANGED), (
            how, seed, result.message)
        assert told in result.message, result.message


def test_a_square_or_size_one_x_is_decided_by_one_call_at_a_wide_x():
    """At a square x every layout is the transpose, at a (1, n) one a transpose is a reshape:
    the call at WIDE tells which; the seeds met include both."""
    met = set()
    for seed in SEEDS:
        for fn, name in ((TRANSPOSING["grad.T"], TRANSPOSED),
                         (REARRANGING["grad.t().reshape(x.shape)"][0], REARRANGED),
                         (REVERSED["grad.reshape(x.shape[::-1])"], "wrong-shape")):
            result = vjp.check_vjp(fn, generator(seed))
            assert result.misconception == name, result.message
            if "more than one layout" in result.message:
                assert f"at an x of shape {WIDE}" in result.message, result.message
                met.add(name)
                probes = result.evidence.probes if result.evidence else []
                assert any(p.get("id") == name for p in probes), probes
    assert met == {TRANSPOSED, REARRANGED, "wrong-shape"}


def _transposed_only_when_square(x, weights):
    leaf = _leaf(x)
    (leaf ** 2).backward(weights)
    g = leaf.grad
    return g.t() if g.dim() == 2 and g.shape[0] == g.shape[1] else g


def _unsqueezed(x, weights):
    leaf = _leaf(x)
    (leaf ** 2).backward(weights)
    return leaf.grad.reshape(-1).unsqueeze(-1) if x.dim() == 2 else leaf.grad


def test_what_the_wide_call_does_not_confirm_is_not_named():
    """Transposed only at a square x (right at WIDE, and on seeds with no square x), or a
    column of x's entries (no layout at WIDE): told what the failing x showed, no name."""
    for fn, told in ((_transposed_only_when_square, "the right gradient transposed"),
                     (_unsqueezed, "the right values in x's sizes reversed")):
        results = [r for s in SEEDS if not (r := vjp.check_vjp(fn, generator(s))).passed]
        assert results
        assert not {r.misconception for r in results} & {TRANSPOSED, REARRANGED}
        assert any(told in r.message and "more than one layout" in r.message for r in results)


@pytest.mark.parametrize("how", sorted(CORRECT))
def test_correct_answers_in_layout_styles_keep_full_marks_on_every_seed(how):
    for seed in [*SEEDS, BLIND_SEED]:
        for check in (vjp.check_vjp, vjp_untouched.check_untouched):
            result = check(CORRECT[how], generator(seed))
            assert result.passed, (how, check.__name__, seed, result.message)


# --- near-misses: other mistakes keep their names ------------------------------------------


def _backward_with(weights_of):
    def vjp_square(x, weights):
        leaf = _leaf(x)
        (leaf ** 2).backward(weights_of(weights))
        return leaf.grad
    return vjp_square


def _func_vjp_at_x_t(x, weights):
    primal = x.detach().t() if x.dim() == 2 else x.detach()
    _, pullback = torch.func.vjp(torch.square, primal)
    return pullback(weights)[0]


def _into_weights_reversed(x, weights):
    leaf = _leaf(x)
    (leaf ** 2).backward(weights)
    vjp_ = weights
    vjp_ *= leaf.grad
    return vjp_.reshape(x.shape[::-1])


NAMED = {  # (function, its name in the values check, in the leaves-inputs check or None)
    "v.backward(weights.T)": (_backward_with(lambda w: w.T), "weights-transposed",
                              "weights-transposed"),
    "weights.t().reshape(v.shape)": (_backward_with(lambda w: w.t().reshape(w.shape)),
                                     "weights-transposed", None),
    "weights.flatten()": (_backward_with(lambda w: w.flatten()), "weights-reshaped",
                          "weights-reshaped"),
    "weights.reshape(x.shape[::-1])": (_backward_with(lambda w: w.reshape(w.shape[::-1])),
                                       "weights-reshaped", "weights-reshaped"),
    "weights.sum(0) broadcast": (_backward_with(lambda w: w.sum(0).expand_as(w)),
                                 "weights-mixed", None),
    "grad.squeeze()": (_returning(lambda g, x: g.squeeze()), "wrong-shape", None),
    "written into the weights, reshaped": (_into_weights_reversed, None, "modified-weights"),
}


@pytest.mark.parametrize("how", sorted(NAMED))
def test_other_mistakes_keep_their_names(how):
    fn, values, untouched = NAMED[how]
    for seed in range(12):
        result = vjp.check_vjp(fn, generator(seed))
        assert not result.passed, (how, seed)
        if values is not None:
            assert result.misconception == values, (how, seed, result.message)
        assert result.misconception not in (TRANSPOSED, REARRANGED), result.message
        other = vjp_untouched.check_untouched(fn, generator(seed))
        if untouched is None:
            assert other.passed, (how, seed, other.message)
        elif untouched != "weights-reshaped" or not other.passed:  # 1-D-only seeds pass
            assert other.misconception == untouched, (how, seed, other.message)


def test_a_squeezed_gradient_is_told_in_the_values_check_only():
    """Blind round zj's squeeze: the values check tells it; the leaves-inputs check, which
    before told it a second time as ``wrong-type``, keeps its point."""
    fn = NAMED["grad.squeeze()"][0]
    result = vjp.check_vjp(fn, generator(11))
    assert result.misconception == "wrong-shape", result.message
    assert "a dimension of size 1 was dropped" in result.message, result.message
    assert vjp_untouched.check_untouched(fn, generator(11)).passed


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
    "reversed": ("    return leaf.grad.reshape(x.shape[::-1])\n", "wrong-shape", True),
    "transposed": ("    return leaf.grad.T if leaf.grad.dim() == 2 else leaf.grad\n", TRANSPOSED,
                   True),
    "into the weights, transposed": ("    w = weights\n    w *= leaf.grad\n"
                                     "    return w.T if w.dim() == 2 else w\n", None, False),
}


@pytest.mark.parametrize("how", sorted(SOURCES))
def test_the_same_through_the_worker(how):
    tail, values, untouched = SOURCES[how]
    source = ("def vjp_square(x, weights):\n"
              "    leaf = x.detach().clone().requires_grad_()\n"
              "    (leaf ** 2).backward(weights)\n" + tail)
    for seed in (BLIND_SEED, 3):
        remote = Loopback(source).function("vjp_square")
        result = vjp.check_vjp(remote, np.random.default_rng(seed))
        assert not result.passed, (how, seed)
        if values is not None:
            assert result.misconception == values, (how, seed, result.message)
        here = vjp.check_vjp(_local(source), np.random.default_rng(seed))
        assert (here.misconception, here.message) == (result.misconception, result.message)
        other = vjp_untouched.check_untouched(Loopback(source).function("vjp_square"),
                                              np.random.default_rng(seed))
        assert other.passed == untouched, (how, seed, other.message)
        here = vjp_untouched.check_untouched(_local(source), np.random.default_rng(seed))
        assert (here.passed, here.message) == (other.passed, other.message)
        if not untouched:
            assert other.misconception == "modified-weights", other.message


def _local(source):
    namespace = {"torch": torch}
    exec(source, namespace)  # noqa: S102 - the test's own source
    return namespace["vjp_square"]
