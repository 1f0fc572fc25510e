"""Blind round zg's porting misses, named by class.

- q4: ``predict`` that switches off the caller's model's parameters' ``requires_grad``
  ("no grads needed for inference"): ``modified-input``.
- q2: a float32 computation cast back to float64 on the float64 problem: ``low-precision``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import microbatch, recording

# --- q4: the caller's model frozen -------------------------------------------------------------


def _forward(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))


def model_frozen(model, batch, device):  # blind round zg's porting/student_05
    model.requires_grad_(False)
    return _forward(model, batch, device)


def params_assigned(model, batch, device):
    for p in model.parameters():
        p.requires_grad = False
    return _forward(model, batch, device)


def params_frozen(model, batch, device):
    for p in model.parameters():
        p.requires_grad_(False)
    return _forward(model, batch, device)


def first_layer_frozen(model, batch, device):
    for p in next(iter(model.children())).parameters():
        p.requires_grad_(False)
    return _forward(model, batch, device)


def frozen_after_move(model, batch, device):
    model = model.to(device).eval()
    model.requires_grad_(False)
    with torch.no_grad():
        return model(batch.to(device))


def inference(model, batch, device):  # legal
    model.to(device).eval()
    with torch.inference_mode():
        return model(batch.to(device))


def restored(model, batch, device):  # legal: frozen for the call, restored after it
    flags = [p.requires_grad for p in model.parameters()]
    try:
        model.requires_grad_(False)
        return _forward(model, batch, device)
    finally:
        for p, flag in zip(model.parameters(), flags):
            p.requires_grad_(flag)


@pytest.mark.parametrize("fn", [model_frozen, params_assigned, params_frozen,
                                first_layer_frozen, frozen_after_move])
def test_predict_freezing_the_callers_model_is_named(fn):
    result = recording.check_predict_no_graph(fn, np.random.default_rng(0))
    assert not result.passed, fn.__name__
    assert result.misconception == "modified-input", result.message
    assert "requires_grad=False" in result.message, result.message
    assert "torch.no_grad()/inference_mode" in result.message, result.message


def test_a_model_frozen_instead_of_no_grad_keeps_its_own_name():
    """Frozen parameters without no_grad record through the batch that requires grad: told
    graph-recorded (its own, earlier name), not the frozen model."""
    def frozen_only(model, batch, device):
        model.to(device).eval().requires_grad_(False)
        return model(batch.to(device))

    result = recording.check_predict_no_graph(frozen_only, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception == "graph-recorded", result.message
    assert "nor do parameters set not to require grad" in result.message, result.message


@pytest.mark.parametrize("fn", [_forward, inference, restored])
def test_predict_leaving_the_models_flags_passes(fn):
    assert recording.check_predict_no_graph(fn, np.random.default_rng(0)).passed, fn.__name__


# --- q2: the float64 problem computed in float32 -----------------------------------------------


def _micro(loss_of, how="slice"):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B = sum(sizes)
        if how == "split":
            parts = list(zip(torch.split(X, sizes), torch.split(y, sizes)))
        else:
            parts, start = [], 0
            for b in sizes:
                parts.append((X.narrow(0, start, b), y.narrow(0, start, b)) if how == "narrow"
                             else (X[start:start + b], y[start:start + b]))
                start += b
        for Xj, yj in parts:
            loss_of(Xj, w, yj, B).backward()
        return w.grad.clone()
    return accumulated_grad


BCE = F.binary_cross_entropy_with_logits
IN_FLOAT32 = {  # blind round zg's porting/student_03 first
    "logits and targets .float()": _micro(lambda X, w, y, B: BCE((X @ w).float(), y.float())
                                          * len(y) / B),
    "summed, .float()": _micro(lambda X, w, y, B: BCE((X @ w).float(), y.float(),
                                                      reduction="sum") / B),
    "loss .float()": _micro(lambda X, w, y, B: BCE(X @ w, y).float() * len(y) / B),
    "all in float32": _micro(lambda X, w, y, B: BCE(X.float() @ w.float(), y.float())
                             * (len(y) / B), "split"),
    "share a float32 tensor": _micro(lambda X, w, y, B: BCE(X @ w, y)
                                     * torch.tensor(len(y) / B)),
}
RIGHT = {
    "mean weighted": _micro(lambda X, w, y, B: BCE(X @ w, y) * len(y) / B),
    "sum / B": _micro(lambda X, w, y, B: BCE(X @ w, y, reduction="sum") / B),
    "softplus": _micro(lambda X, w, y, B: (F.softplus(X @ w) - y * (X @ w)).sum() / B),
    "split": _micro(lambda X, w, y, B: BCE(X @ w, y) * (len(y) / B), "split"),
    "narrow": _micro(lambda X, w, y, B: BCE(X @ w, y, reduction="sum") / B, "narrow"),
    "logsigmoid": _micro(lambda X, w, y, B: -(y * F.logsigmoid(X @ w) + (1 - y)
                                             * F.logsigmoid(-(X @ w))).sum() / B),
}


@pytest.mark.parametrize("how", list(IN_FLOAT32))
def test_a_float32_computation_cast_back_is_named(how):
    for stale in (False, True):
        result = microbatch.check_accumulated_grad(IN_FLOAT32[how], np.random.default_rng(0),
                                                   stale=stale)
        assert not result.passed, how
        assert result.misconception == "low-precision", result.message
        assert "computed in float64" in result.message, result.message
        assert "Cast nothing" in result.message, result.message


@pytest.mark.parametrize("how", list(RIGHT))
def test_right_answers_pass_at_float64_tolerance(how):
    for seed in range(6):
        for stale in (False, True):
            result = microbatch.check_accumulated_grad(RIGHT[how], np.random.default_rng(seed),
                                                       stale=stale)
            assert result.passed, (how, seed, stale, result.message)


def test_a_share_rounded_to_five_decimals_is_not_named_low_precision():
    rounded = _micro(lambda X, w, y, B: BCE(X @ w, y) * round(len(y) / B, 5))
    # seed 1: sizes [17, 39, 7, 35] on the float64 problem (seed 0 draws B = 50: exact shares)
    result = microbatch.check_accumulated_grad(rounded, np.random.default_rng(1), stale=False)
    assert not result.passed
    assert result.misconception != "low-precision", result.message
