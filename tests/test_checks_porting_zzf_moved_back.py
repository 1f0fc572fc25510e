"""Blind round zzf's q4 class told a wrong cause: ``predict`` moving the model back where it
came from after the forward (``model.to(home)`` in a try/finally) raised torch's "Cannot copy
out of meta tensor" on ``meta`` and was told ``output-not-on-device`` ("predict copied a tensor
off the device it was given (.cpu(), .item() ...)"), although the output never left the device.
Now the worker says how the model itself moved during the call and whether the error that
ended it is the one a move of the model raised: then it is ``model-moved-back``, told that the
contract leaves the model on the device. The near-misses keep their names: the output copied
off (``.cpu()``, ``.to('cpu')``, ``.tolist()``, ``.numpy()``, ``.item()``, or to the model's old
device), the batch not moved, the model never moved or a copy moved, and right answers in
unusual styles pass.
"""

from __future__ import annotations

import contextlib
import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from autograder.checks.porting import device, device_predict
from autograder.worker import arrangements
from test_observations import PICK, Loopback

META = torch.device("meta")
on_meta = pytest.mark.skipif(torch.cuda.is_available(),
                             reason="the moved check runs on CUDA here, not meta")


def _forward(model, batch, device_):
    model.eval()
    with torch.no_grad():
        return model(batch.to(device_))


# --- the variants that move the model back: model-moved-back ------------------------------------

def blind_zzf_student_02(model, batch, device_):
    """The blind answer, as written."""
    home = next(model.parameters()).device      # where the caller keeps the model
    model.to(device_)
    model.eval()
    batch = batch.to(device_)
    try:
        with torch.no_grad():
            out = model(batch)
    finally:
        model.to(home)                          # hand the model back where it was
    return out


def back_to_cpu(model, batch, device_):
    model.to(device_)
    out = _forward(model, batch, device_)
    model.cpu()                                 # free the device
    return out


def back_with_to_cpu_string(model, batch, device_):
    model.to(device_)
    out = _forward(model, batch, device_)
    model.to("cpu")
    return out


def back_without_finally(model, batch, device_):
    original = next(model.parameters()).device
    model = model.to(device_)
    out = _forward(model, batch, device_)
    model.to(original)
    return out


def back_to_the_batchs_device(model, batch, device_):
    model.to(device_)
    out = _forward(model, batch, device_)
    model.to(batch.device)                      # the caller's batch, still where it was
    return out


@contextlib.contextmanager
def _on(model, device_):
    home = next(model.parameters()).device
    model.to(device_)
    try:
        yield model
    finally:
        model.to(home)


def back_by_context_manager(model, batch, device_):
    with _on(model, device_) as moved:
        return _forward(moved, batch, device_)


def back_by_to_empty(model, batch, device_):
    """Moves off meta without raising (empty weights): the model is measured off meta after."""
    home = next(model.parameters()).device
    model.to(device_)
    out = _forward(model, batch, device_)
    model.to_empty(device=home)
    return out


def back_then_output_copied(model, batch, device_):
    """Both, the model's move first: the error is the move's, and that is what is told."""
    home = next(model.parameters()).device
    model.to(device_)
    out = _forward(model, batch, device_)
    model.to(home)
    return out.cpu()


MOVED_BACK = [blind_zzf_student_02, back_to_cpu, back_with_to_cpu_string, back_without_finally,
              back_to_the_batchs_device, back_by_context_manager, back_by_to_empty,
              back_then_output_copied]


@on_meta
@pytest.mark.parametrize("predict", MOVED_BACK, ids=lambda f: f.__name__)
def test_a_model_moved_back_is_named_and_told_the_contract(predict):
    result = device_predict.check_predict(predict, np.random.default_rng(0), moved=True)
    assert not result.passed and result.points == 0.0, result.message
    assert result.misconception == "model-moved-back", result.message
    assert "leaves it there" in result.message, result.message
    assert "predict copied a tensor off" not in result.message, result.message
    assert "as your process reported" in result.message, result.message


@on_meta
@pytest.mark.parametrize("seed", [1, 2, 7])
def test_the_blind_answer_is_named_at_other_seeds(seed):
    result = device_predict.check_predict(blind_zzf_student_02, np.random.default_rng(seed),
                                          moved=True)
    assert result.misconception == "model-moved-back", result.message
    assert "after its forward had run there" in result.message, result.message


@pytest.mark.parametrize("predict", MOVED_BACK, ids=lambda f: f.__name__)
def test_on_the_grading_device_a_move_back_changes_nothing(predict):
    """On the grading machine's own device the model's home is the device: nothing to tell
    (back_then_output_copied apart: on a GPU its output comes back on the CPU; and
    back_by_to_empty, whose to_empty leaves the caller's model without its weights there too,
    blind round zzj: ``weights-lost``)."""
    result = device_predict.check_predict(predict, np.random.default_rng(0), moved=False)
    if predict is back_then_output_copied and torch.cuda.is_available():
        assert result.misconception == "output-not-on-device", result.message
    elif predict is back_by_to_empty:
        assert not result.passed and result.misconception == "weights-lost", result.message
    else:
        assert result.passed, result.message


def test_run_predict_hears_the_move_that_raised():
    """The observation itself, on meta wherever the test runs: the model moved to meta, then
    a move that raised while it was there, and that error ended the call."""
    model, batch = device.draw_model(np.random.default_rng(3))
    prediction = device_predict.run_predict(blind_zzf_student_02, model, batch, META)
    assert prediction.moves == (("cpu", "meta"), ("meta", "raised")), prediction.moves
    assert prediction.failure.misconception == "model-moved-back"
    assert nn.Module._apply is arrangements.nn.Module._apply
    assert "noting" not in nn.Module._apply.__qualname__  # put back after the call


def test_the_blind_answer_through_the_worker_is_named():
    """The same through the real worker request handler and wire (``Loopback``)."""
    cell = '''
def predict(model, batch, device):
    home = next(model.parameters()).device
    model.to(device)
    model.eval()
    batch = batch.to(device)
    try:
        with torch.no_grad():
            out = model(batch)
    finally:
        model.to(home)
    return out
'''
    model, batch = device.draw_model(np.random.default_rng(3))
    fn = Loopback(PICK, cell).function("predict")
    prediction = device_predict.run_predict(fn, model, batch, META)
    assert prediction.failure is not None
    assert prediction.failure.misconception == "model-moved-back", prediction.failure.message
    assert fn.last_observed.get("raised_by_move") is True


# --- near-misses that keep their names ---------------------------------------------------------

def _moved(after):
    def predict(model, batch, device_):
        model.to(device_)
        return after(_forward(model, batch, device_), model)
    return predict


def caught_move_then_output_copied(model, batch, device_):
    """A move back that raised and was caught; the output's copy ends the call."""
    home = next(model.parameters()).device
    model.to(device_)
    out = _forward(model, batch, device_)
    try:
        model.to(home)
    except Exception:  # noqa: BLE001 - the student's own
        pass
    return out.cpu()


def output_to_the_models_old_device(model, batch, device_):
    home = next(model.parameters()).device
    model.to(device_)
    return _forward(model, batch, device_).to(home)


NAMED_ELSE = {
    "output-cpu": (_moved(lambda out, m: out.cpu()), "output-not-on-device"),
    "output-to-cpu": (_moved(lambda out, m: out.to("cpu")), "output-not-on-device"),
    "output-tolist": (_moved(lambda out, m: torch.tensor(out.tolist())), "output-not-on-device"),
    "output-numpy": (_moved(lambda out, m: torch.from_numpy(out.numpy())),
                     "output-not-on-device"),
    "output-item": (_moved(lambda out, m: torch.tensor([[out[i, j].item() for j in range(
        out.shape[1])] for i in range(out.shape[0])])), "output-not-on-device"),
    "caught-move-then-output-cpu": (caught_move_then_output_copied, "output-not-on-device"),
    "output-to-the-models-old-device": (output_to_the_models_old_device,
                                        "output-not-on-device"),
    "batch-not-moved": (lambda model, batch, d: model.to(d).eval()(batch), "batch-not-moved"),
    "model-never-moved": (lambda model, batch, d: _forward(model, batch, "cpu").to(d),
                          "model-not-moved"),
}


@on_meta
@pytest.mark.parametrize("how", sorted(NAMED_ELSE))
def test_near_misses_keep_their_names(how):
    fn, name = NAMED_ELSE[how]
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=True)
    assert not result.passed, result.message
    assert result.misconception == name, result.message
    assert "leaves it there" not in result.message, result.message


def deepcopy_moved(model, batch, device_):
    return _forward(copy.deepcopy(model).to(device_), batch, device_)


@on_meta
def test_a_moved_copy_is_not_told_its_forward_ran_elsewhere():
    """The contract moves the caller's model (model-not-moved, as before); the forward of the
    copy was heard on meta, so the message no longer says it did not run there."""
    result = device_predict.check_predict(deepcopy_moved, np.random.default_rng(0), moved=True)
    assert not result.passed and result.misconception == "model-not-moved", result.message
    assert "did not run on the device" not in result.message, result.message
    assert "such as a copy" in result.message, result.message


# --- right answers in unusual styles -----------------------------------------------------------

def in_place_move(model, batch, device_):
    model.to(device_)
    model.eval()
    with torch.no_grad():
        return model(batch.to(device_, non_blocking=True))


def rebound_move(model, batch, device_):
    model = model.to(device=device_).eval()
    with torch.inference_mode():
        return model(batch.to(device=device_))


@torch.no_grad()
def mode_restored(model, batch, device_):
    was_training = model.training
    model.to(device_)
    model.eval()
    out = model(batch.to(device_))
    model.train(was_training)
    return out


def moved_only_when_elsewhere(model, batch, device_):
    if next(model.parameters()).device.type != torch.device(device_).type:
        model.to(device_)
    model.to(device_)  # twice: a no-op the second time
    return _forward(model, batch, device_)


def restored_to_the_device(model, batch, device_):
    """A try/finally that "restores" to the device itself leaves the model there: right."""
    try:
        model.to(device_)
        return _forward(model, batch, device_)
    finally:
        model.to(device_)


RIGHT = [in_place_move, rebound_move, mode_restored, moved_only_when_elsewhere,
         restored_to_the_device]


@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("predict", RIGHT, ids=lambda f: f.__name__)
def test_right_answers_pass(predict, moved):
    result = device_predict.check_predict(predict, np.random.default_rng(0), moved=moved)
    assert result.passed and result.misconception is None, result.message


# --- heard, so it names and never scores -------------------------------------------------------

OUTPUT_COPIED = '''
def predict(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device)).cpu()
'''
RIGHT_CELL = '''
def predict(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))
'''
FORGE_MOVES = '''
import contextlib, sys
@contextlib.contextmanager
def _forged(observed, model):
    observed["module_moves"] = [["meta", "raised"]]  # says: the model's move raised
    try:
        yield
    except BaseException:
        observed["raised_by_move"] = True
        raise
sys.modules["autograder.worker.arrangements"].observed_moves = _forged
'''


def test_a_forged_move_observation_changes_the_name_never_the_points(monkeypatch):
    monkeypatch.setattr(arrangements, "observed_moves", arrangements.observed_moves)

    def results(*cells):
        fn = Loopback(PICK, *cells).function("predict")
        return [device_predict.check_predict(fn, np.random.default_rng(5), moved=moved)
                for moved in (False, True)]

    honest, forged = results(OUTPUT_COPIED), results(OUTPUT_COPIED, FORGE_MOVES)
    assert [(r.passed, r.points) for r in honest] == [(r.passed, r.points) for r in forged]
    if not torch.cuda.is_available():  # on meta the copy raises: named from what is heard
        assert honest[1].misconception == "output-not-on-device", honest[1].message
        assert forged[1].misconception == "model-moved-back", forged[1].message
    right, right_forged = results(RIGHT_CELL), results(RIGHT_CELL, FORGE_MOVES)
    assert all(r.passed and r.misconception is None for r in right + right_forged)


# --- a real device change (CUDA): the caller's model is judged where it is after the call ---------

def test_after_a_real_move_a_model_back_on_the_cpu_is_named_from_the_heard_move():
    """``kept_on_device`` compares device types only, so it is asked here with a CPU model
    and ``cuda`` wherever the test runs: what CUDA's predict_after_move judges after a right
    output."""
    model, _ = device.draw_model(np.random.default_rng(3))
    cuda = torch.device("cuda")
    back = device_predict.kept_on_device(model, cuda, (("cpu", "cuda"), ("cuda", "cpu")))
    assert back.misconception == "model-moved-back" and "leaves it there" in back.message
    assert "meta" not in back.message, back.message
    for unheard in ((), None, (("cpu", "cpu"),)):
        verdict = device_predict.kept_on_device(model, cuda, unheard)
        assert not verdict.ok and verdict.misconception == "model-not-moved", verdict.message
        assert "moved back" not in verdict.message, verdict.message
    assert device_predict.kept_on_device(model.to(META), META, None).ok


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a real device change needs CUDA")
@pytest.mark.parametrize("predict", [blind_zzf_student_02, back_to_cpu, back_without_finally,
                                     back_by_context_manager], ids=lambda f: f.__name__)
def test_on_cuda_a_model_moved_back_loses_predict_after_move_only(predict):
    after = device_predict.check_predict(predict, np.random.default_rng(0), moved=True)
    assert not after.passed and after.misconception == "model-moved-back", after.message
    assert device_predict.check_predict(predict, np.random.default_rng(0), moved=False).passed


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a real device change needs CUDA")
def test_on_cuda_a_moved_copy_loses_predict_after_move():
    after = device_predict.check_predict(deepcopy_moved, np.random.default_rng(0), moved=True)
    assert not after.passed and after.misconception == "model-not-moved", after.message
