"""q5 ``export_numpy`` sending int64 values through a float type and back (blind round za:
``t.to(torch.float64).numpy().astype(...)``, "float64 holds float32, float64 and int64 values
exactly"): right for small ints, rounded above 2**53. The check exports an int64 tensor with
large values, last; named ``values-through-float``. Near-misses: exact exports in unusual
styles pass, a float dtype returned keeps ``dtype-changed``, an int32 overflow is not named
so."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.exercises.export_float import THROUGH_FLOAT
from autograder.checks.seeding import generator

SEEDS = range(4)
_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}

THROUGH = {
    "to(float64).numpy().astype": (
        lambda t: t.detach().cpu().to(torch.float64).numpy().astype(_NP[t.dtype]), "float64"),
    "np.array(tolist(), dtype=float)": (
        lambda t: np.array(t.detach().tolist(), dtype=float).astype(_NP[t.dtype]), "float64"),
    "double().numpy() then astype(t.numpy().dtype)": (
        lambda t: t.detach().double().numpy().astype(t.detach().numpy().dtype), "float64"),
    "float32 for ints": (
        lambda t: (t.detach().float().numpy().astype(np.int64) if t.dtype == torch.int64
                   else t.detach().numpy().copy()), "float32"),
    "ints only, rounded through float64": (
        lambda t: (torch.round(t.detach().to(torch.float64)).long().numpy()
                   if t.dtype == torch.int64 else t.detach().numpy().copy()), "float64"),
}


@pytest.mark.parametrize("how", sorted(THROUGH))
@pytest.mark.parametrize("seed", SEEDS)
def test_int64_values_through_a_float_are_named(seed, how):
    fn, name = THROUGH[how]
    result = export.check_export(fn, generator(seed))
    assert not result.passed and result.misconception == THROUGH_FLOAT, result.message
    for words in (f"nearest {name}", "came back as", "no float in between"):
        assert words in result.message, result.message


EXACT = {
    "numpy().copy()": lambda t: t.detach().cpu().numpy().copy(),
    "np.array of tolist with t's dtype": lambda t: np.array(t.detach().tolist(),
                                                            dtype=_NP[t.dtype]),
    "clone().numpy()": lambda t: t.detach().clone().numpy(),
    "np.empty filled": lambda t: _filled(t),
}


def _filled(t):
    out = np.empty(tuple(t.shape), dtype=_NP[t.dtype])
    out[...] = t.detach().cpu().numpy()
    return out


@pytest.mark.parametrize("how", sorted(EXACT))
@pytest.mark.parametrize("seed", SEEDS)
def test_exact_exports_pass(seed, how):
    assert export.check_export(EXACT[how], generator(seed)).passed


@pytest.mark.parametrize("seed", SEEDS)
def test_other_int_mistakes_are_not_taken_for_a_float(seed):
    def through_int32(t):
        if t.dtype == torch.int64:
            return t.detach().int().numpy().astype(np.int64)
        return t.detach().numpy().copy()

    result = export.check_export(through_int32, generator(seed))
    assert not result.passed and result.misconception != THROUGH_FLOAT, result.message
    as_float = export.check_export(lambda t: t.detach().double().numpy(), generator(seed))
    assert not as_float.passed and as_float.misconception == "dtype-changed", as_float.message
