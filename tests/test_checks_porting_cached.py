"""Is q3_gradcheck's ``check_my_op`` that caches its verdict by ``x`` named for it
(``verdict-cached``), and are constant answers, an op bound early and a cache keyed by the op
too left with their own verdicts?

gradcheck's verdict depends on the op as well as on x. A student who remembers it for every x
already checked (``functools.lru_cache`` keyed by x's values, a dict keyed by x's bytes, the
last result kept) returns the earlier verdict once my_op has been replaced (blind round y). The
implementations below are written the way students write them.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from autograder.checks.porting import selfcheck


def my_op(x):  # replaced by the grader's stand-ins during each call (swap_globals)
    raise AssertionError("the check swaps in its own op")


def gradcheck(x64):
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


def lru_by_values():  # blind round y's porting/student_04
    @functools.lru_cache(maxsize=None)
    def at(values, shape):
        return gradcheck(torch.tensor(values, dtype=torch.float64).reshape(shape)
                         .requires_grad_(True))

    def check_my_op(x):
        return at(tuple(x.detach().to(torch.float64).flatten().tolist()), tuple(x.shape))
    return check_my_op


def dict_by_bytes():
    verdicts = {}

    def check_my_op(x):
        x64 = x.detach().double()
        key = x64.numpy().tobytes()
        if key not in verdicts:
            verdicts[key] = gradcheck(x64.clone().requires_grad_())
        return verdicts[key]
    return check_my_op


def last_result():
    last = {"x": None, "ok": None}

    def check_my_op(x):
        x64 = x.detach().to(torch.float64)
        if last["x"] is not None and last["x"].shape == x64.shape \
                and torch.equal(last["x"], x64):
            return last["ok"]
        last["x"], last["ok"] = x64.clone(), gradcheck(x64.clone().requires_grad_())
        return last["ok"]
    return check_my_op


def lru_by_tuple_and_dtype():
    @functools.lru_cache(maxsize=128)
    def at(key):
        return bool(gradcheck(torch.tensor(key[1], dtype=torch.float64).requires_grad_()))

    def check_my_op(x):
        return at((str(x.dtype), tuple(x.double().tolist())))
    return check_my_op


def cached_by_op_too():
    """Right: keyed by the op as well as by x (a fresh op is a fresh key)."""
    verdicts = {}

    def check_my_op(x):
        x64 = x.detach().double()
        key = (my_op, tuple(x64.tolist()))
        if key not in verdicts:
            verdicts[key] = gradcheck(x64.clone().requires_grad_())
        return verdicts[key]
    return check_my_op


def always_true():
    return lambda x: True


def bound_early():
    """A different mistake: the op bound before the call (a default argument)."""
    def own(x):
        return (x ** 3).sum() / (1 + x.abs().sum())

    def check_my_op(x, op=own):
        return torch.autograd.gradcheck(op, (x.detach().double().requires_grad_(),),
                                        eps=1e-6, atol=1e-8, raise_exception=False)
    return check_my_op


def contract():
    return lambda x: gradcheck(x.detach().double().requires_grad_())


CACHED = {"lru-by-values": lru_by_values, "dict-by-bytes": dict_by_bytes,
          "last-result": last_result, "lru-by-tuple-and-dtype": lru_by_tuple_and_dtype}


@pytest.mark.parametrize("how", sorted(CACHED))
@pytest.mark.parametrize("seed", [0, 1, 2, 1179358946])
def test_a_cached_verdict_is_named(how, seed):
    result = selfcheck.check_check_my_op(CACHED[how](), np.random.default_rng(seed))
    assert not result.passed
    assert result.misconception == "verdict-cached", result.message
    assert "my_op" in result.message and "cach" in result.message, result.message
    assert "rather than a constant" not in result.message, result.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_misses_keep_their_verdicts(seed):
    check = selfcheck.check_check_my_op
    assert check(contract(), np.random.default_rng(seed)).passed
    assert check(cached_by_op_too(), np.random.default_rng(seed)).passed
    assert check(always_true(), np.random.default_rng(seed)).misconception == \
        "accepts-broken-op"
    result = check(bound_early(), np.random.default_rng(seed))
    assert not result.passed and result.misconception != "verdict-cached", result.message
