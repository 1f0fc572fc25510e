"""q5 ``export_numpy`` in blind round zb. A one-element tensor exported as one number
(``np.array(t.item())``, ``np.float32(float(t))``-like, ``t.squeeze()``) comes back with shape
(): the shape message says why. ``t.requires_grad_(False)`` on t and back raises for a non-leaf
t: named ``requires-grad-toggled``, the message says that this changes the caller's tensor and
that ``t.detach()`` is the fix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.seeding import generator

SEEDS = range(4)


def _as_item(t):
    """Blind round zb, student 04."""
    dtype = t.detach().numpy().dtype
    if t.numel() == 1:
        return np.array(t.item(), dtype=dtype)
    return t.detach().cpu().numpy().copy()


ONE_NUMBER = {
    "np.array(t.item())": _as_item,
    "np.array(float(t))": lambda t: np.array(float(t), dtype=np.float32),
    "t.detach().squeeze().numpy().copy()": lambda t: t.detach().squeeze().numpy().copy(),
}


@pytest.mark.parametrize("how", sorted(ONE_NUMBER))
@pytest.mark.parametrize("shape", [(1,), (1, 1)])
def test_one_element_exported_as_one_number_is_told_why(how, shape):
    t = torch.tensor([3.5], dtype=torch.float32).reshape(shape)
    verdict = export.judge_export(ONE_NUMBER[how](t), t)
    assert verdict.misconception == "wrong-shape", verdict.message
    for word in ("one element", ".item()", "dimensions", export.EXPORT):
        assert word in verdict.message, verdict.message


def test_the_independence_check_leaves_the_shape_to_the_values_check():
    """Round zzi: the independence check judges independence only (an array of its own, in
    another shape, is independent); before, it charged the shape a second time."""
    seed = next(s for s in range(40) if any(
        t.numel() == 1 for t, _ in export.draw_tensors(generator(s))))
    assert export.check_independent(_as_item, generator(seed)).passed


def test_a_wrong_number_or_a_larger_tensor_is_not_told_so():
    t = torch.tensor([3.5])
    for got, shown in ((np.array(2.0, dtype=np.float32), t), (np.array(7.0), torch.ones(2, 2))):
        verdict = export.judge_export(got, shown)
        assert verdict.misconception == "wrong-shape" and ".item()" not in verdict.message


def _toggled(t):
    """Blind round zb, student 05."""
    tracked = t.requires_grad
    if tracked:
        t.requires_grad_(False)
    try:
        arr = t.numpy().copy()
    finally:
        if tracked:
            t.requires_grad_(True)
    return arr


def _switched_off(t):
    """The flag switched off and left so (blind round o)."""
    return t.requires_grad_(False).numpy().copy()


@pytest.mark.parametrize("fn", [_toggled, _switched_off])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_flag_switched_on_a_non_leaf_is_named(seed, fn):
    for check in (export.check_export, export.check_independent):
        result = check(fn, generator(seed))
        if result.misconception == "modified-input":  # a leaf left without its flag: told so
            continue
        assert result.misconception == "requires-grad-toggled", result.message
        for word in ("caller's tensor", "t.detach()", "leaf"):
            assert word in result.message, result.message


def test_other_raises_keep_their_names():
    result = export.check_export(lambda t: t.numpy().copy(), generator(0))
    assert result.misconception == "numpy-on-tracked", result.message
    result = export.check_export(lambda t: t.detach().numpy().copy(), generator(0))
    assert result.passed, result.message


@pytest.mark.parametrize("seed", range(12))
def test_a_one_element_tensor_is_always_drawn(seed):
    """Before, only a 1-D case of size 1 (one seed in six) could show it."""
    result = export.check_export(_as_item, generator(seed))
    assert not result.passed and result.misconception == "wrong-shape", result.message
    assert ".item()" in result.message


@pytest.mark.parametrize("how", ["np.ascontiguousarray", "np.atleast_1d"])
def test_a_zero_dim_tensor_given_a_dimension_names_the_likely_call(how):
    # blind round zze's student_03: np.ascontiguousarray returns an array of at least one
    # dimension, so a 0-d tensor comes back with shape (1,)
    t = torch.tensor(7, dtype=torch.int64)
    got = getattr(np, how.split(".")[1])(np.copy(t.detach().numpy()))
    verdict = export.judge_export(got, t)
    assert verdict.misconception == "wrong-shape", verdict.message
    assert how in verdict.message and "keeps shape ()" in verdict.message, verdict.message
