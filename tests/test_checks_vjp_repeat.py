"""q4 ``vjp_square`` whose answer depends on earlier calls with the same shape and dtype: a
leaf kept between calls whose ``.grad`` autograd adds into (blind round za's leaf pooled per
shape and dtype, refilled with ``copy_`` and returned as ``leaf.grad.clone()``: right on the
first call per key, the sum of all the calls' pullbacks after), or an answer kept per shape and
returned again. The check asks the first case's shape and dtype again, last; named
``grad-accumulated-across-calls`` and ``answer-cached``; a kept leaf whose grad is cleared but
whose values are never refilled (every later call differentiates at an earlier call's x) is
``stale-leaf-values``. Near-misses: kept leaves whose grad is cleared each call pass, a live
grad zeroed and returned keeps ``result-reused``, and other mistakes are not taken for these."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import vjp
from autograder.checks.exercises.vjp_repeat import ACCUMULATED, CACHED
from autograder.checks.exercises.vjp_stale import STALE
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(4)


def _pooled(refill, give_back, key=lambda x: (tuple(x.shape), x.dtype)):
    """A vjp_square keeping one leaf per ``key(x)``, refilled by ``refill(leaf, x)``; its
    grad never cleared; the answer ``give_back(leaf.grad)``."""
    pool = {}

    def vjp_square(x, weights):
        k = key(x)
        if k not in pool:
            pool[k] = torch.zeros(x.shape, dtype=x.dtype, requires_grad=True)
        leaf = pool[k]
        refill(leaf, x)
        (leaf ** 2).backward(weights)
        return give_back(leaf.grad)
    return vjp_square


def _copy_under_no_grad(leaf, x):
    with torch.no_grad():
        leaf.copy_(x)


def _data_assigned(leaf, x):
    leaf.data = x.detach().clone()


def _default_argument():
    def vjp_square(x, weights, _leaves={}):  # noqa: B006 - the mistake under test
        leaf = _leaves.setdefault((x.shape, x.dtype), torch.zeros_like(x).requires_grad_())
        leaf.data.copy_(x.detach())
        torch.autograd.backward(leaf.pow(2), weights)
        return leaf.grad * 1
    return vjp_square


def _cached():
    answers = {}

    def vjp_square(x, weights):
        key = (tuple(x.shape), x.dtype)
        if key not in answers:
            leaf = x.detach().clone().requires_grad_()
            (leaf ** 2).backward(weights)
            answers[key] = leaf.grad
        return answers[key].clone()
    return vjp_square


ACCUMULATING = {
    "dict per shape and dtype, copy_ under no_grad, grad.clone()":
        lambda: _pooled(_copy_under_no_grad, torch.clone),
    "leaf.data assigned, grad.detach().clone()":
        lambda: _pooled(_data_assigned, lambda g: g.detach().clone()),
    "the live grad returned": lambda: _pooled(_copy_under_no_grad, lambda g: g),
    "a default-argument dict, leaf.data.copy_, grad * 1": _default_argument,
    "one leaf per shape (str key)":
        lambda: _pooled(_copy_under_no_grad, torch.clone, key=lambda x: str(x.dtype) + str(x.shape)),
}


@pytest.mark.parametrize("how", sorted(ACCUMULATING))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_grad_accumulated_across_calls_is_named(seed, how):
    result = vjp.check_vjp(ACCUMULATING[how](), generator(seed))
    assert not result.passed and result.misconception == ACCUMULATED, result.message
    for words in ("kept between calls", "adds into its .grad", "plus its own 2 * x * weights",
                  "new leaf"):
        assert words in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_the_blind_round_pool_is_told_its_sum_of_earlier_calls(seed):
    """On a fresh pool the failing answer is the sum of the check's calls with that key."""
    result = vjp.check_vjp(ACCUMULATING["dict per shape and dtype, copy_ under no_grad, "
                                        "grad.clone()"](), generator(seed))
    assert "earlier calls with this shape and dtype" in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_an_answer_kept_per_shape_is_named_cached(seed):
    result = vjp.check_vjp(_cached(), generator(seed))
    assert not result.passed and result.misconception == CACHED, result.message
    assert "returned this same answer again" in result.message, result.message


def _cleared(clear, give_back):
    pool = {}

    def vjp_square(x, weights):
        leaf = pool.setdefault((tuple(x.shape), x.dtype),
                               torch.zeros(x.shape, dtype=x.dtype, requires_grad=True))
        with torch.no_grad():
            leaf.copy_(x)
        clear(leaf)
        (leaf ** 2).backward(weights)
        return give_back(leaf.grad)
    return vjp_square


def _set_none(leaf):
    leaf.grad = None


def _zeroed(leaf):
    if leaf.grad is not None:
        leaf.grad.zero_()


@pytest.mark.parametrize("seed", SEEDS)
def test_kept_leaves_cleared_every_call_pass(seed):
    for fn in (_cleared(_set_none, lambda g: g), _cleared(_zeroed, torch.clone),
               _cleared(_set_none, torch.clone)):
        result = vjp.check_vjp(fn, generator(seed))
        assert result.passed, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_a_zeroed_live_grad_keeps_result_reused(seed):
    result = vjp.check_vjp(_cleared(_zeroed, lambda g: g), generator(seed))
    assert not result.passed and result.misconception == "result-reused", result.message


def _backward_twice(x, weights):
    leaf = x.detach().clone().requires_grad_()
    v = leaf ** 2
    v.backward(weights, retain_graph=True)
    v.backward(weights)
    return leaf.grad


def _stale_values():
    """A leaf kept per key whose grad is cleared but whose values are never refilled."""
    pool = {}

    def vjp_square(x, weights):
        key = (tuple(x.shape), x.dtype)
        if key not in pool:
            pool[key] = x.detach().clone().requires_grad_()
        leaf = pool[key]
        leaf.grad = None
        (leaf ** 2).backward(weights)
        return leaf.grad.clone()
    return vjp_square


@pytest.mark.parametrize("seed", SEEDS)
def test_other_mistakes_are_not_taken_for_history(seed):
    for fn in (_backward_twice, _stale_values()):
        result = vjp.check_vjp(fn, generator(seed))
        assert not result.passed, result.message
        assert result.misconception not in (ACCUMULATED, CACHED), result.message


def _kept_by_grad(x, weights, _leaves={}):  # noqa: B006 - the mistake under test
    """A leaf kept per shape and dtype in a default argument, differentiated by
    torch.autograd.grad (no .grad to clear), never refilled."""
    leaf = _leaves.setdefault(str((x.shape, x.dtype)), x.detach().clone().requires_grad_(True))
    (grad,) = torch.autograd.grad(leaf.pow(2), leaf, grad_outputs=weights)
    return grad


def _zeroed_not_refilled():
    pool = {}

    def vjp_square(x, weights):
        leaf = pool.get((x.dtype, *x.shape))
        if leaf is None:
            leaf = pool[(x.dtype, *x.shape)] = torch.tensor(x.tolist(), dtype=x.dtype,
                                                            requires_grad=True)
        if leaf.grad is not None:
            leaf.grad.zero_()
        (weights * leaf * leaf).sum().backward()
        return leaf.grad.clone()
    return vjp_square


STALE_LEAVES = {
    "grad set to None, never refilled": _stale_values,
    "torch.autograd.grad on a kept leaf (default argument)": lambda: _kept_by_grad,
    "grad zeroed, weighted sum, never refilled": _zeroed_not_refilled,
}


@pytest.mark.parametrize("how", sorted(STALE_LEAVES))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_leaf_kept_with_stale_values_is_named(seed, how):
    fn = STALE_LEAVES[how]()
    if how.startswith("torch.autograd.grad"):
        fn.__defaults__[0].clear()
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed and result.misconception == STALE, result.message
    for words in ("kept between calls", "an earlier call", "same x0", "new leaf"):
        assert words in result.message, result.message
    assert "Does something assume" not in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_history_is_not_taken_for_stale_values(seed):
    for fn in (ACCUMULATING["dict per shape and dtype, copy_ under no_grad, grad.clone()"](),
               _cached(), _backward_twice, _cleared(_set_none, torch.clone)):
        result = vjp.check_vjp(fn, generator(seed))
        assert result.misconception != STALE, result.message


def test_a_stale_leaf_is_named_through_the_worker():
    """Through the worker, where the pool lives between the check's calls as in a notebook."""
    source = ('_leaves = {}\n\n'
              'def vjp_square(x, weights):\n'
              '    key = (tuple(x.shape), x.dtype)\n'
              '    if key not in _leaves:\n'
              '        _leaves[key] = x.detach().clone().requires_grad_()\n'
              '    leaf = _leaves[key]\n'
              '    leaf.grad = None\n'
              '    (leaf ** 2).backward(weights)\n'
              '    return leaf.grad.clone()\n')
    remote = vjp.check_vjp(Loopback(source).function("vjp_square"), generator(2))
    assert (remote.passed, remote.misconception) == (False, STALE), remote.message
