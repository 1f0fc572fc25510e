"""q3_gradcheck: a ``check_my_op`` whose gradcheck is looser than the contract's.

The contract fixes gradcheck's tolerances (eps=1e-6, atol=1e-8, rtol left at its 1e-3). A check
that raises rtol (1e-2) or atol (1e-4, 1e-6), or compares a finite difference of its own
within 1 %, or fast_mode=True, accepts a backward that is off by a little (the right one times
1.005, or plus 1e-6 where the gradient is 0) while it still rejects the grossly wrong ones: it
loses its points, named ``tolerance-loosened``; a stricter rtol, named
``tolerance-tightened``. The contract's own call written in unusual styles keeps them.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from torch.autograd.gradcheck import gradcheck as module_gradcheck

from autograder.checks.porting import selfcheck, selfcheck_at_x
from autograder.worker.stand_in import fresh_stand_ins, stand_in_gradient

NAME = "tolerance-loosened"


def my_op(x):  # replaced by the stand-ins during each call (swap_globals)
    raise AssertionError("the check swaps in its own op")


def with_settings(**settings):
    """The contract's check with ``settings`` laid over its own."""
    given = {"eps": 1e-6, "atol": 1e-8, "raise_exception": False, **settings}

    def check_my_op(x):
        leaf = x.detach().double().requires_grad_()
        return torch.autograd.gradcheck(my_op, (leaf,), **given)
    return check_my_op


def by_hand(**tolerances):
    """Central differences with the contract's eps, compared by ``torch.allclose``, entry by
    entry of x in any shape (the checks ask at a 2-D x too: ``selfcheck_flat``)."""
    def check_my_op(x):
        leaf = x.detach().double().requires_grad_()
        (analytic,) = torch.autograd.grad(my_op(leaf), leaf)
        numeric = torch.zeros_like(analytic)
        for i in range(leaf.numel()):
            step = torch.zeros_like(analytic)
            step.view(-1)[i] = 1e-6
            numeric.view(-1)[i] = (my_op(leaf.detach() + step)
                                   - my_op(leaf.detach() - step)) / 2e-6
        return bool(torch.allclose(analytic, numeric, **tolerances))
    return check_my_op


def in_float32(x):
    leaf = x.detach().float().requires_grad_()
    return torch.autograd.gradcheck(my_op, (leaf,), eps=1e-6, atol=1e-8, raise_exception=False)


def partial_contract(x):
    check = functools.partial(torch.autograd.gradcheck, atol=1e-8, eps=1e-6,
                              raise_exception=False)
    return check(lambda t: my_op(t), (x.detach().to(torch.float64).requires_grad_(True),))


def reordered_contract(x):
    x64 = x.detach().clone().double()
    x64.requires_grad = True
    return module_gradcheck(func=my_op, inputs=x64, raise_exception=False, atol=1e-8,
                            eps=1e-6)


def both(fn, seed):
    """The two check_my_op checks' results at ``seed``."""
    return [check(fn, np.random.default_rng(seed))
            for check in (selfcheck.check_check_my_op, selfcheck_at_x.check_check_my_op_at_x)]


def test_the_scaled_stand_in_is_told_apart_only_by_the_contracts_rtol():
    """gradcheck at the contract's settings rejects the right backward times 1.005, while
    rtol=1e-2 accepts it; the right backward times 1.0005 passes the contract's check."""
    def gc(kind, x, **settings):
        op = fresh_stand_ins({}, lambda x_, g: stand_in_gradient(kind, x_, g))["stand_in_apply"]
        leaf = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        given = {"eps": 1e-6, "atol": 1e-8, **settings}
        return torch.autograd.gradcheck(op, (leaf,), raise_exception=False, **given)

    mixed = [-1.5, -0.5, 0.7, 2.0]
    assert not gc("scaled", mixed) and gc("scaled", mixed, rtol=1e-2)
    assert not gc("scaled", mixed, atol=1e-4) and not gc("scaled", mixed, fast_mode=True)
    assert not gc("broken", mixed, rtol=1e-2)
    assert gc("nudged", mixed) and not gc("nudged", mixed, rtol=1e-4)


@pytest.mark.parametrize("fn", [
    with_settings(rtol=1e-2),
    with_settings(atol=1e-4),
    with_settings(atol=1e-6),
    by_hand(rtol=1e-2),
    by_hand(rtol=1e-2, atol=1e-8),
    with_settings(fast_mode=True),
], ids=["rtol-1e-2", "atol-1e-4", "atol-1e-6", "by-hand-1pct", "by-hand-1pct-atol", "fast-mode"])
def test_a_looser_tolerance_is_named(fn):
    for seed in range(3):
        simple, at_x = both(fn, seed)
        assert simple.passed, simple.message
        assert not at_x.passed and at_x.misconception == NAME, at_x.message
        assert "eps=1e-6, atol=1e-8" in at_x.message and "rtol" in at_x.message, at_x.message


@pytest.mark.parametrize("fn", [
    with_settings(),
    with_settings(rtol=1e-3),
    with_settings(nondet_tol=1e-2),
    with_settings(check_undefined_grad=False, check_batched_grad=False),
    partial_contract,
    reordered_contract,
    by_hand(rtol=1e-3, atol=1e-8),
], ids=["contract", "rtol-1e-3", "nondet-tol", "fewer-extras", "partial", "reordered",
        "by-hand-contract"])
def test_the_contracts_check_in_other_styles_passes(fn):
    for seed in range(3):
        for result in both(fn, seed):
            assert result.passed, result.message


@pytest.mark.parametrize("fn", [
    with_settings(eps=1e-3),
    in_float32,
    lambda x: True,
], ids=["eps-1e-3", "float32", "constant-true"])
def test_other_mistakes_are_not_named_loosened(fn):
    for seed in range(3):
        results = both(fn, seed)
        assert not all(r.passed for r in results)
        assert all(r.misconception != NAME for r in results), [r.message for r in results]


@pytest.mark.parametrize("fn", [with_settings(rtol=1e-4), with_settings(rtol=0.0)],
                         ids=["rtol-1e-4", "rtol-0"])
def test_a_stricter_tolerance_is_named(fn):
    """A smaller rtol rejects a backward that gradcheck accepts (off by 1e-6 where no entry of
    the gradient is 0, or by 0.05 %) while it accepts the right one."""
    for seed in range(3):
        simple, at_x = both(fn, seed)
        assert simple.passed, simple.message
        assert not at_x.passed and at_x.misconception == "tolerance-tightened", at_x.message
        assert "rtol=1e-3" in at_x.message, at_x.message
