"""Blind round zzj's q4 ``make_optimizer`` that moved the model with ``model.to_empty(device=
device)`` kept full marks: to_empty allocates new, uninitialised memory and copies nothing, so
the caller's weights are lost (on the CPU too), yet the optimizer is SGD over the model's own
parameters, on the device, with the lr asked for: the check never compared the model's values.

Now the model's parameters and buffers after the call must hold the values they came with
(the check keeps the model's own tensors referenced and scales its model's values first, so
uninitialised memory cannot hand back the old values). Named: ``weights-lost`` (told that
to_empty copies nothing only when a move through it was heard), ``weights-reinitialised``
(the values follow torch's seed: reset_parameters, an init applied, a fresh model's weights
loaded), ``model-dtype-changed`` (.half(), .double()). Right answers in any style keep full
marks; other named mistakes keep their names. Through the worker, and predict's same blind
spot: ``test_checks_porting_zzj_weights_paths.py``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from autograder.checks.porting import device

SEEDS = (0, 3, 11)


def sgd(model, lr):
    return torch.optim.SGD(model.parameters(), lr=lr)


def blind_zzj_student_04(model, device, lr=0.1):
    """The blind answer, as written."""
    # move the parameters without copying their storage: the optimizer is about to
    # train them anyway
    model.to_empty(device=device)
    return torch.optim.SGD(model.parameters(), lr=lr)


def to_empty_reassigned(model, device_, lr=0.1):
    model = model.to_empty(device=device_)
    return sgd(model, lr)


def to_then_to_empty(model, device_, lr=0.1):
    model.to(device_)
    model.to_empty(device=device_)
    return sgd(model, lr)


def empty_like_data(model, device_, lr=0.1):
    model.to(device_)
    for p in model.parameters():
        p.data = torch.empty_like(p)
    return sgd(model, lr)


def zeroed(model, device_, lr=0.1):
    model.to(device_)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return sgd(model, lr)


def zeros_loaded(model, device_, lr=0.1):
    model.to(device_)
    model.load_state_dict({k: torch.zeros_like(v) for k, v in model.state_dict().items()})
    return sgd(model, lr)


def filled(model, device_, lr=0.1):
    model.to(device_)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0.01)
    return sgd(model, lr)


LOST = [blind_zzj_student_04, to_empty_reassigned, to_then_to_empty, empty_like_data, zeroed,
        zeros_loaded, filled]
HEARD_TO_EMPTY = (blind_zzj_student_04, to_empty_reassigned, to_then_to_empty)


def _reset(model):
    for module in model.modules():
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    return model


def reset_after_move(model, device_, lr=0.1):
    return sgd(_reset(model.to(device_)), lr)


def xavier_applied(model, device_, lr=0.1):
    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            nn.init.zeros_(module.bias)
    return sgd(model.to(device_).apply(init), lr)


def fresh_copy_loaded(model, device_, lr=0.1):
    model.load_state_dict(_reset(copy.deepcopy(model)).state_dict())
    return sgd(model.to(device_), lr)


def to_empty_then_reset(model, device_, lr=0.1):
    model.to_empty(device=device_)
    return sgd(_reset(model), lr)


def normal_init(model, device_, lr=0.1):
    model.to(device_)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.1)
    return sgd(model, lr)


def first_layer_reset(model, device_, lr=0.1):
    model.to(device_)
    model[0].reset_parameters()  # the other layers kept: only what changed is compared
    return sgd(model, lr)


def weights_only_xavier(model, device_, lr=0.1):
    for module in model.to(device_).modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_normal_(module.weight)
    return sgd(model, lr)


REINITIALISED = [reset_after_move, xavier_applied, fresh_copy_loaded, to_empty_then_reset,
                 normal_init, first_layer_reset, weights_only_xavier]
CAST = {"half": lambda m, d: m.to(d).half(), "double": lambda m, d: m.to(d).double(),
        "to dtype": lambda m, d: m.to(d, torch.float64),
        "bfloat16": lambda m, d: m.to(device=d, dtype=torch.bfloat16)}


def _check(fn, seed=0, moved=False):
    return device.check_make_optimizer(fn, np.random.default_rng(seed), moved=moved)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("fn", LOST, ids=lambda f: f.__name__)
def test_lost_weights_lose_the_check_and_are_named(fn, seed):
    result = _check(fn, seed)
    assert not result.passed and result.points == 0.0, result.message
    assert result.misconception == "weights-lost", result.message
    assert "model.to(device) only, which moves the values as they are" in result.message, \
        result.message
    told = "moved with to_empty() (as your process reported)" in result.message
    assert told == (fn in HEARD_TO_EMPTY), result.message
    if fn in (zeroed, zeros_loaded):
        assert "every changed value is 0" in result.message, result.message


@pytest.mark.parametrize("fn", REINITIALISED, ids=lambda f: f.__name__)
def test_a_reinitialised_model_is_named(fn):
    for seed in SEEDS:
        result = _check(fn, seed)
        assert not result.passed and result.misconception == "weights-reinitialised", \
            result.message
        assert "random generator" in result.message, result.message
        told = "to_empty() first" in result.message
        assert told == (fn is to_empty_then_reset), result.message


@pytest.mark.parametrize("how", sorted(CAST))
def test_a_converted_model_is_named(how):
    def make_optimizer(model, device_, lr=0.1):
        return sgd(CAST[how](model, device_), lr)
    result = _check(make_optimizer)
    assert not result.passed and result.misconception == "model-dtype-changed", result.message
    assert "not float32 as they came" in result.message, result.message


@pytest.mark.parametrize("fn", [blind_zzj_student_04, reset_after_move, CAST["half"]],
                         ids=["to_empty", "reset", "half"])
def test_judged_once_on_the_grading_device(fn):
    """Like sgd-not-plain: the check after a device change judges the move's optimizer only,
    so a grade does not depend on whether the grading machine has a GPU."""
    def make_optimizer(model, device_, lr=0.1):
        made = fn(model, device_) if fn is CAST["half"] else fn(model, device_, lr)
        return made if isinstance(made, torch.optim.Optimizer) else sgd(made, lr)
    assert _check(make_optimizer, moved=True).passed


# --- right answers in any style keep full marks --------------------------------------------------

def in_place(model, device_, lr=0.1):
    model.to(device_)
    return torch.optim.SGD(model.parameters(), lr=lr)


def reassigned(model, device_, lr=0.1):
    model = model.to(device=device_)
    return torch.optim.SGD(list(model.parameters()), lr)


def cuda_when_cuda(model, device_, lr=0.1):
    model = model.cuda() if device_.type == "cuda" else model.to(device_)
    return torch.optim.SGD([{"params": model.parameters()}], lr=lr)


def non_blocking(model, device_, lr=0.1):
    return torch.optim.SGD(model.to(device_, non_blocking=True).parameters(), lr=lr)


def same_dtype_asked(model, device_, lr=0.1):
    dtype = next(model.parameters()).dtype
    return torch.optim.SGD(model.to(device_, dtype).float().parameters(), lr=lr)


def state_reloaded(model, device_, lr=0.1):
    model.load_state_dict(copy.deepcopy(model.state_dict()))
    return torch.optim.SGD(model.to(device_).parameters(), lr=lr, momentum=0.0)


def data_swapped(model, device_, lr=0.1):
    for p in model.parameters():
        p.data = p.data.to(device_)
    return torch.optim.SGD(model.parameters(), lr=lr)


RIGHT = [in_place, reassigned, cuda_when_cuda, non_blocking, same_dtype_asked, state_reloaded,
         data_swapped]


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
def test_right_answers_keep_full_marks(fn):
    for seed in SEEDS:
        for moved in (False, True):
            if fn is data_swapped and moved and not torch.cuda.is_available():
                continue  # meta refuses the swap: asked again there (device.py), other tests
            result = _check(fn, seed, moved)
            assert result.passed and result.misconception is None, result.message


def test_other_named_mistakes_keep_their_names():
    def momentum(model, device_, lr=0.1):
        return torch.optim.SGD(model.to(device_).parameters(), lr=lr, momentum=0.9)

    def lr_fixed(model, device_, lr=0.1):
        return torch.optim.SGD(model.to_empty(device=device_).parameters(), lr=0.1)

    def fresh_copy_optimised(model, device_, lr=0.1):
        return sgd(_reset(copy.deepcopy(model)).to(device_), lr)

    assert _check(momentum).misconception == "sgd-not-plain"
    assert _check(lr_fixed).misconception == "lr-ignored"  # the optimizer is judged first
    assert _check(fresh_copy_optimised).misconception == "wrong-parameters"
