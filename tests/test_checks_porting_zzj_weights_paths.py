"""Blind round zzj's lost weights (``test_checks_porting_zzj_weights.py``) through the real
worker request handler and wire (``Loopback``), after the predict checks drew the same model
from the same seed; a forged heard move that changes no points; and ``predict``, which had
the same blind spot: a re-initialised model was told ``eval-missing`` (its outputs follow
torch's seed, as dropout's would), a to_empty one a history probe, and a to_empty after a
right forward passed.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import device_predict
from autograder.worker import arrangements
from test_checks_porting_zzj_weights import SEEDS, _check, _reset, blind_zzj_student_04
from test_observations import PICK, Loopback

# --- through the worker and the wire -------------------------------------------------------------

CELL = '''
def make_optimizer(model, device, lr=0.1):
    model.to_empty(device=device)
    return torch.optim.SGD(model.parameters(), lr=lr)

def predict(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))
'''
RESET_CELL = '''
def make_optimizer(model, device, lr=0.1):
    model.to(device)
    for m in model.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
    return torch.optim.SGD(model.parameters(), lr=lr)
'''
RIGHT_CELL = '''
def make_optimizer(model, device, lr=0.1):
    return torch.optim.SGD(model.to(device).parameters(), lr=lr)
'''


def test_the_blind_answer_through_the_worker_is_named_after_the_predict_checks():
    """The same seed draws the same model for every q4 check: the predict checks' freed copies
    of it lie in the worker's memory, and to_empty must still show."""
    worker = Loopback(PICK, CELL)
    make_optimizer, predict = worker.function("make_optimizer"), worker.function("predict")
    for seed in SEEDS:
        for moved in (False, True):
            assert device_predict.check_predict(predict, np.random.default_rng(seed),
                                                moved=moved).passed
        result = _check(make_optimizer, seed)
        assert not result.passed and result.misconception == "weights-lost", result.message
        assert "moved with to_empty() (as your process reported)" in result.message
        assert make_optimizer.last_observed.get("move_kinds") == ["Module.to_empty"]


def test_in_process_after_the_predict_checks_too():
    for seed in SEEDS:
        device_predict.check_predict(in_place_predict, np.random.default_rng(seed), moved=False)
        result = _check(blind_zzj_student_04, seed)
        assert not result.passed and result.misconception == "weights-lost", result.message


def test_through_the_worker_reinitialised_and_right():
    result = _check(Loopback(PICK, RESET_CELL).function("make_optimizer"))
    assert result.misconception == "weights-reinitialised", result.message
    right = Loopback(PICK, RIGHT_CELL).function("make_optimizer")
    assert all(_check(right, seed, moved).passed for seed in SEEDS for moved in (False, True))


FORGE_TO_EMPTY = '''
import contextlib, sys
@contextlib.contextmanager
def _forged(observed, model):
    try:
        yield
    finally:
        observed["module_moves"], observed["move_kinds"] = [], ["Module.to_empty"]
sys.modules["autograder.worker.arrangements"].observed_moves = _forged
'''
ZERO_CELL = '''
def make_optimizer(model, device, lr=0.1):
    model.to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return torch.optim.SGD(model.parameters(), lr=lr)
'''


def test_a_forged_move_changes_the_words_never_the_points(monkeypatch):
    monkeypatch.setattr(arrangements, "observed_moves", arrangements.observed_moves)
    for cell in (ZERO_CELL, RIGHT_CELL):
        honest = _check(Loopback(PICK, cell).function("make_optimizer"))
        forged = _check(Loopback(PICK, cell, FORGE_TO_EMPTY).function("make_optimizer"))
        assert (honest.passed, honest.points) == (forged.passed, forged.points)
        assert honest.misconception == forged.misconception
        assert honest.passed == (cell is RIGHT_CELL)


# --- predict: the same blind spot -----------------------------------------------------------------

def in_place_predict(model, batch, device_):
    model.to(device_).eval()
    with torch.no_grad():
        return model(batch.to(device_))


def predict_to_empty(model, batch, device_):
    model.to_empty(device=device_).eval()
    with torch.no_grad():
        return model(batch.to(device_))


def predict_reset(model, batch, device_):
    _reset(model.to(device_)).eval()
    with torch.no_grad():
        return model(batch.to(device_))


def predict_then_to_empty(model, batch, device_):
    out = in_place_predict(model, batch, device_)
    model.to_empty(device=device_)
    return out


@pytest.mark.parametrize("predict, name", [
    (predict_to_empty, "weights-lost"), (predict_reset, "weights-reinitialised"),
    (predict_then_to_empty, "weights-lost")], ids=lambda v: getattr(v, "__name__", v))
def test_predict_that_loses_the_weights_is_named(predict, name):
    for seed in SEEDS[:2]:
        result = device_predict.check_predict(predict, np.random.default_rng(seed), moved=False)
        assert not result.passed and result.misconception == name, result.message
        assert "eval()" not in result.message, result.message
    if predict is predict_then_to_empty:
        assert "was right, but the caller's model was left without its weights" \
            in result.message, result.message


def test_predict_right_in_place_passes():
    for moved in (False, True):
        result = device_predict.check_predict(in_place_predict, np.random.default_rng(0),
                                              moved=moved)
        assert result.passed and result.misconception is None, result.message
