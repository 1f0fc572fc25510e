"""Blind round zza's q5 class that lost points without its cause: ``export_numpy`` sending
float values through a narrower float and casting back to t's dtype
(``t.detach().to("cpu", torch.float32).numpy().astype(<t's numpy dtype>)``): dtype, shape and
independence right, float64 values rounded to float32. Named ``values-through-float`` (the
name int64 values sent through a float already have), told the narrower type and that t's
own dtype must be kept all the way; the same for float16 and bfloat16 round trips.

Near-misses that keep their verdicts: exact exports in every style (a round trip through a
wider float included) pass; the narrower dtype returned as is stays ``dtype-changed``;
values rounded to decimals stay ``values-rounded``; values off another way are not told
they went through a float.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.exercises.export_float import THROUGH_FLOAT
from autograder.checks.seeding import generator

SEEDS = range(4)
_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}


def _copy(t):
    return t.detach().cpu().numpy().copy()


def _floats_only(fn):
    return lambda t: fn(t) if t.is_floating_point() else _copy(t)


THROUGH = {
    # the blind notebook's export, as written
    "to('cpu', float32).numpy().astype(t's dtype)": (
        lambda t: t.detach().to("cpu", torch.float32).numpy().astype(_NP[t.dtype]), "float32"),
    "float().numpy().astype(t.numpy().dtype)": (
        lambda t: t.detach().float().numpy().astype(t.detach().numpy().dtype), "float32"),
    "np.array(tolist(), float32).astype": (
        lambda t: np.array(t.detach().tolist(), dtype=np.float32).astype(_NP[t.dtype]),
        "float32"),
    "to(float32).to(t.dtype) in torch": (
        lambda t: t.detach().to(torch.float32).to(t.dtype).numpy().copy(), "float32"),
    "floats only: numpy astype float32 and back": (
        _floats_only(lambda t: _copy(t).astype(np.float32).astype(_copy(t).dtype)), "float32"),
    "half() and back": (_floats_only(lambda t: t.detach().half().to(t.dtype).numpy()),
                        "float16"),
    "bfloat16() and back": (_floats_only(lambda t: t.detach().bfloat16().to(t.dtype).numpy()),
                            "bfloat16"),
}


@pytest.mark.parametrize("how", sorted(THROUGH))
@pytest.mark.parametrize("seed", SEEDS)
def test_floats_through_a_narrower_float_are_named(seed, how):
    fn, name = THROUGH[how]
    result = export.check_export(fn, generator(seed))
    assert not result.passed and result.misconception == THROUGH_FLOAT, result.message
    for words in (f"nearest {name}", f"went through {name}", "came back as",
                  "t.detach().cpu().numpy().copy()"):
        assert words in result.message, result.message


def test_the_blind_answer_is_told_float32_on_a_float64_tensor():
    t = torch.tensor([-2.41549, 4.71912, -5.46203, -3.86374], dtype=torch.float64,
                     requires_grad=True)
    got = t.detach().to("cpu", torch.float32).numpy().astype(np.float64)
    verdict = export.judge_export(got, t)
    assert not verdict.ok and verdict.misconception == THROUGH_FLOAT, verdict.message
    assert "nearest float32" in verdict.message and "float64 keeps about 16" in verdict.message


def test_int64_through_bfloat16_is_named_on_large_values():
    t = torch.tensor([2 ** 53 + 1, -(2 ** 30 + 2 ** 20 + 1), 7, 2 ** 33 + 2 ** 20], dtype=torch.int64)
    got = t.to(torch.bfloat16).to(torch.int64).numpy()
    verdict = export.judge_export(got, t)
    assert not verdict.ok and verdict.misconception == THROUGH_FLOAT, verdict.message
    assert "nearest bfloat16" in verdict.message, verdict.message


EXACT = {
    "numpy().copy()": _copy,
    "to('cpu', t.dtype).numpy().copy()": lambda t: t.detach().to("cpu", t.dtype).numpy().copy(),
    "clone().numpy()": lambda t: t.detach().clone().numpy(),
    "np.array(detach(), copy=True)": lambda t: np.array(t.detach(), copy=True),
    "astype(own dtype)": lambda t: t.detach().numpy().astype(_NP[t.dtype]),
    "floats through float64 and back (wider: exact)": _floats_only(
        lambda t: t.detach().double().numpy().astype(_NP[t.dtype])),
}


@pytest.mark.parametrize("how", sorted(EXACT))
@pytest.mark.parametrize("seed", SEEDS)
def test_exact_exports_pass(seed, how):
    assert export.check_export(EXACT[how], generator(seed)).passed


def test_values_a_narrower_float_holds_exactly_pass_through_it():
    t = torch.tensor([[0.5, -1.25], [3.0, 2.75]], dtype=torch.float64, requires_grad=True)
    got = t.detach().float().numpy().astype(np.float64)
    assert export.judge_export(got, t).ok


@pytest.mark.parametrize("seed", SEEDS)
def test_the_narrower_dtype_returned_stays_dtype_changed(seed):
    result = export.check_export(lambda t: t.detach().to("cpu", torch.float32).numpy(),
                                 generator(seed))
    assert not result.passed and result.misconception == "dtype-changed", result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_other_value_mistakes_keep_their_verdicts(seed):
    rounded = export.check_export(lambda t: np.round(_copy(t), 6), generator(seed))
    assert not rounded.passed and rounded.misconception == "values-rounded", rounded.message
    scaled = export.check_export(_floats_only(lambda t: _copy(t) * (1 + 1e-6)), generator(seed))
    assert not scaled.passed and scaled.misconception != THROUGH_FLOAT, scaled.message
    assert "went through" not in scaled.message, scaled.message


def test_a_float64_overflowing_float32_is_not_told_rounded():
    t = torch.tensor([1e300, 2.5, -3.1], dtype=torch.float64)
    got = t.float().double().numpy()
    verdict = export.judge_export(got, t)
    assert not verdict.ok and verdict.misconception != THROUGH_FLOAT, verdict.message
