"""Blind round zc's porting mistakes, as classes: q2's stale grad kept in w.grad and subtracted
from the answer (``stale-grad-kept``), q4's predict that converts the caller's model to another
dtype (``model-dtype-changed``); with near-misses that must not be named so."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import device_predict, microbatch


def _window(w, X, y, sizes):
    B = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * (len(yj) / B)).backward()


def kept_subtracted(w, X, y, sizes):  # blind round zc's porting/student_03
    before = w.grad.detach().clone() if w.grad is not None else torch.zeros_like(w)
    _window(w, X, y, sizes)
    return (w.grad - before).detach().clone()


def kept_sub_out_of_place(w, X, y, sizes):
    before = None if w.grad is None else w.grad.clone()
    _window(w, X, y, sizes)
    return w.grad.clone() if before is None else torch.sub(w.grad, before)


def kept_by_hook_sum(w, X, y, sizes):  # remembers the stale grad as numbers, subtracts at end
    stale = 0 if w.grad is None else w.grad.detach().tolist()
    _window(w, X, y, sizes)
    return w.grad.detach() - torch.as_tensor(stale, dtype=w.dtype)


def cleared(w, X, y, sizes):  # right
    w.grad = None
    _window(w, X, y, sizes)
    return w.grad.detach().clone()


def zeroed_in_place(w, X, y, sizes):  # right: w.grad.zero_()
    if w.grad is not None:
        w.grad.zero_()
    _window(w, X, y, sizes)
    return w.grad


def kept_returned(w, X, y, sizes):  # another mistake: stale + window returned
    _window(w, X, y, sizes)
    return w.grad.clone()


@pytest.mark.parametrize("fn", [kept_subtracted, kept_sub_out_of_place, kept_by_hook_sum])
@pytest.mark.parametrize("seed", [0, 3])
def test_a_stale_grad_kept_and_subtracted_is_named(fn, seed):
    result = microbatch.check_accumulated_grad(fn, np.random.default_rng(seed), stale=True)
    assert not result.passed and result.misconception == "stale-grad-kept", result.message
    assert "w.grad = None" in result.message and "taken from elsewhere" in result.message
    # the subtraction is not observed, only its effect (blind round zzj): never told as seen
    assert "subtracted" not in result.message, result.message


@pytest.mark.parametrize("fn", [cleared, zeroed_in_place])
def test_a_cleared_grad_passes(fn):
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(fn, np.random.default_rng(1), stale=stale).passed


def test_kept_and_subtracted_passes_without_a_stale_grad():
    assert microbatch.check_accumulated_grad(kept_subtracted, np.random.default_rng(1),
                                             stale=False).passed


def test_a_stale_grad_returned_keeps_its_own_message():
    result = microbatch.check_accumulated_grad(kept_returned, np.random.default_rng(1),
                                               stale=True)
    assert not result.passed and result.misconception == "stale-grad-kept"
    assert "not the one left in w.grad" not in result.message


def _predict(model, batch, device):
    model.eval()
    with torch.no_grad():
        return model(batch.to(device))


def to_float32_kw(model, batch, device):  # blind round zc's porting/student_05
    model.to(device=device, dtype=torch.float32)
    return _predict(model, batch, device)


def float_call(model, batch, device):
    model.to(device).float()
    return _predict(model, batch, device)


def type_call(model, batch, device):
    model.type(torch.float32).to(device)
    return _predict(model, batch, device)


def positional(model, batch, device):
    model.to(torch.float32)
    model.to(device)
    return _predict(model, batch, device)


def both_cast(model, batch, device):
    model.to(device, torch.float32)
    return _predict(model, batch.float(), device)


def to_own_dtype(model, batch, device):  # right: the model's own dtype
    model.to(device=device, dtype=next(model.parameters()).dtype)
    return _predict(model, batch, device)


def copy_cast(model, batch, device):  # a copy converted: the caller's model stays float64
    return _predict(copy.deepcopy(model).to(device).float(), batch, device)


@pytest.mark.parametrize("fn", [to_float32_kw, float_call, type_call, positional, both_cast])
def test_a_model_converted_to_another_dtype_is_named(fn):
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert not result.passed and result.misconception == "model-dtype-changed", result.message
    assert "model.to(device) only" in result.message


def test_a_model_moved_in_its_own_dtype_passes():
    for moved in (False, True):
        assert device_predict.check_predict(to_own_dtype, np.random.default_rng(0),
                                            moved=moved).passed


def test_a_converted_copy_is_not_named_model_dtype_changed():
    result = device_predict.check_predict(copy_cast, np.random.default_rng(0), moved=False)
    assert not result.passed and result.misconception != "model-dtype-changed", result.message
