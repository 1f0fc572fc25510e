"""What the judge measures and what it only hears (docs/security.md).

The worker reports observations taken in the student's process (tensors saved for backward,
the dtypes the grader's stand-in ops ran in). A notebook cell can replace the functions that
take them, so no check may score them. Each test below forges one observation the way a cell
would (replacing the function in ``sys.modules["autograder.worker.arrangements"]``, or in
``...worker.stand_in`` for the stand-in's own ``grad_mode``), grades a wrong
answer with and without the forgery, and asks for the same points.

The call goes through the real worker request handler and the real wire, in this process (the
sealed and Docker runs of the same attacks are in ``test_adversarial.py``): ``Loopback``
hands the JSON request to ``Worker.call`` and the JSON reply back, as the pipe would.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from autograder.checks.porting import device, device_predict, selfcheck
from autograder.running.judge.remote import RemoteFunction
from autograder.worker import arrangements as worker_context
from autograder.worker import modes as worker_modes
from autograder.worker import stand_in as worker_stand_in
from autograder.worker.main import Worker

PICK = '''
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
'''
PREDICTS = {
    "right": '''
def predict(model, batch, device):
    model = model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))
''',
    "graph-returned": '''
def predict(model, batch, device):
    model = model.to(device).eval()
    return model(batch.to(device))
''',
    "detach-after": '''
def predict(model, batch, device):
    model = model.to(device).eval()
    return model(batch.to(device)).detach()
''',
}
EMPTY_ON_DEVICE = '''
def predict(model, batch, device):
    with torch.no_grad():
        out = model.eval()(batch)  # the forward on the CPU
    model.to(device)
    return torch.empty_like(out, device=device)
'''
FORGE_FORWARD = '''
import contextlib, sys
@contextlib.contextmanager
def _everywhere(observed, model):
    observed["forward_devices"] = ["meta"]  # says: the forward ran on meta
    yield
sys.modules["autograder.worker.arrangements"].observed_forward = _everywhere
'''
FORGE_COUNT = '''
import contextlib, sys
@contextlib.contextmanager
def _zero(observed):
    observed["saved_tensors"] = 0
    yield
sys.modules["autograder.worker.arrangements"].counted_saved_tensors = _zero
'''
CHECK_IN_FLOAT32 = '''
def check_my_op(x):
    x = x.detach().clone().requires_grad_(True)  # float32 stays float32: gradcheck fails
    return torch.autograd.gradcheck(my_op, (x,), eps=1e-6, atol=1e-8, raise_exception=False)

def my_op(x):
    return MyOp.apply(x)
'''
FORGE_DTYPES = '''
import sys
_ctx = sys.modules["autograder.worker.arrangements"]
_real = _ctx.fresh_stand_ins
def _forged(observed, *rest):
    stand_ins = _real(observed, *rest)
    observed["dtypes"] = ["float64"] * 3  # says: ran in float64, whatever it ran in
    return stand_ins
_ctx.fresh_stand_ins = _forged
'''
MPS_FIRST = '''
def pick_device():
    if torch.backends.mps.is_available():
        return torch.device("mps")
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
'''
FORGE_DEVICES = '''
import contextlib, sys
@contextlib.contextmanager
def _swapped(cuda, mps):  # answer cuda for mps and mps for cuda
    saved = torch.cuda.is_available, torch.backends.mps.is_available
    torch.cuda.is_available, torch.backends.mps.is_available = (lambda: bool(mps)), (lambda: bool(cuda))
    try:
        yield
    finally:
        torch.cuda.is_available, torch.backends.mps.is_available = saved
sys.modules["autograder.worker.arrangements"].simulated_devices = _swapped
'''


class Loopback:
    """The worker's request handler behind the judge's ``RemoteFunction``, in one process:
    requests and replies still cross as JSON text, as through the pipe."""

    limits = SimpleNamespace(call_timeout=30)

    def __init__(self, *cells: str):
        self.worker = Worker()
        report = self.worker.run_cells([[i, "import torch\nfrom torch import nn\n" + c]
                                        for i, c in enumerate(cells)])["ok"]
        assert all(entry["status"] == "ok" for entry in report), report

    def request(self, message: dict, timeout: float, answer=None) -> dict:
        message = json.loads(json.dumps(message))
        # the judge's answers to the worker's questions cross as JSON too
        self.worker.ask = lambda question: json.loads(json.dumps(
            answer(json.loads(json.dumps(question))) if answer else {"error": "none"}))
        reply = self.worker.call(message["target"], message.get("args", []),
                                 message.get("kwargs", {}), message.get("context", {}),
                                 message.get("backward"))
        return json.loads(json.dumps(reply, allow_nan=False))

    def function(self, name: str) -> RemoteFunction:
        return RemoteFunction(self, name)


@pytest.fixture(autouse=True)
def restore_worker_context(monkeypatch):
    """The forging cells replace functions of the real module here: put them back after."""
    for name in ("counted_saved_tensors", "fresh_stand_ins", "simulated_devices",
                 "observed_forward"):
        monkeypatch.setattr(worker_context, name, getattr(worker_context, name))
    monkeypatch.setattr(worker_stand_in, "grad_mode", worker_stand_in.grad_mode)


def _predict_results(*cells: str) -> list:
    fn = Loopback(PICK, *cells).function("predict")
    return [device_predict.check_predict(fn, np.random.default_rng(5), moved=moved)
            for moved in (False, True)]


def _scores(results: list) -> list:
    return [(r.check, r.passed, r.points) for r in results]


def test_the_worker_reports_the_saved_count_it_measured():
    """Honest processes: the heard count is 0 under no_grad, positive for a recorded graph."""
    model, batch = device.draw_model(np.random.default_rng(1))
    counts = {}
    for kind in ("right", "detach-after"):
        fn = Loopback(PICK, PREDICTS[kind]).function("predict")
        counts[kind] = device_predict.run_predict(fn, model, batch, torch.device("cpu")).packed
    assert counts["right"] == 0 and counts["detach-after"] > 0, counts


@pytest.mark.parametrize("kind", ["right", "graph-returned", "detach-after"])
def test_a_forged_saved_count_changes_no_points(kind):
    """The judge scores predict's answer; the worker's count (forged here to 0) only words
    advice, so the forgery earns exactly what the same predict earns without it."""
    honest = _predict_results(PREDICTS[kind])
    forged = _predict_results(PREDICTS[kind], FORGE_COUNT)
    assert _scores(forged) == _scores(honest)
    if kind == "graph-returned":  # the answer itself requires grad: no points, forged or not
        assert [r.passed for r in forged] == [False, False]
        assert all(r.misconception == "graph-recorded" for r in forged)
    else:
        assert all(r.passed for r in forged)
    if kind == "detach-after":  # the honest count is heard as advice; the forged one is not
        assert all("detach() afterwards does not avoid the recording" in r.message
                   and r.misconception == "graph-recorded" for r in honest)
        assert not any("Advice" in r.message for r in forged)


def test_the_worker_reports_where_the_models_forward_ran_and_leaves_no_hook():
    """On meta the worker hears the device types the model's forwards took: meta for a right
    predict, the CPU for one that ran the forward there and made an empty answer on meta.
    The hooks are gone after the call: the module comes back unchanged but for the move."""
    meta = torch.device("meta")
    heard = {}
    for kind, cell in (("right", PREDICTS["right"]), ("empty", EMPTY_ON_DEVICE)):
        model, batch = device.draw_model(np.random.default_rng(1))
        loop = Loopback(PICK, cell)
        seen = []
        real = loop.worker.call
        loop.worker.call = lambda *a, **k: seen.append(real(*a, **k)) or seen[-1]
        prediction = device_predict.run_predict(loop.function("predict"), model, batch, meta)
        assert prediction.failure is None
        heard[kind] = prediction.forward_devices
        assert not any(seen[-1]["args_after"][0].get("hooks", {}).values())
    assert heard == {"right": ("meta",), "empty": ("cpu",)}, heard
    cpu = device_predict.run_predict(Loopback(PICK, PREDICTS["right"]).function("predict"),
                                     *device.draw_model(np.random.default_rng(1)),
                                     torch.device("cpu"))
    assert cpu.forward_devices is None  # asked on meta only


@pytest.mark.skipif(torch.cuda.is_available(), reason="the move goes to CUDA: values decide")
def test_a_forged_forward_observation_buys_back_only_what_the_hole_earned():
    """The observation only costs: an empty answer on meta fails when the worker says the
    forward ran on the CPU; a cell that forges "meta" earns what that answer earned before the
    observation was heard (the check's point on meta), and a right predict is judged the same
    with or without the forgery."""
    honest = _predict_results(EMPTY_ON_DEVICE)
    assert [r.passed for r in honest] == [False, False]  # on the CPU its values say so
    assert honest[1].misconception == "forward-not-on-device"
    forged = _predict_results(EMPTY_ON_DEVICE, FORGE_FORWARD)
    assert [r.passed for r in forged] == [False, True]
    right = _predict_results(PREDICTS["right"])
    assert _scores(_predict_results(PREDICTS["right"], FORGE_FORWARD)) == _scores(right)
    assert all(r.passed and r.misconception is None for r in right)


def test_judge_prediction_scores_the_answer_not_the_count():
    """The judge's own measurement is the returned tensor: a graph on the answer fails with a
    heard count of 0; a clean answer passes with any heard count."""
    model, batch = device.draw_model(np.random.default_rng(2))
    model.eval()
    with torch.no_grad():
        expected = model(batch)
    recorded = model(batch)  # requires grad: what a forward outside no_grad returns
    cpu = torch.device("cpu")
    assert not device_predict.judge_prediction(recorded, 0, model, expected, cpu).ok
    assert device_predict.judge_prediction(expected.clone(), 7, model, expected, cpu).ok
    assert device_predict.judge_prediction(expected.clone(), 0, model, expected, cpu).ok


def test_a_forged_dtype_observation_changes_no_points():
    """check_my_op checking in float32 fails on the grader's correct op; stand-ins that claim
    float64 change which mistake the message names, never the points."""
    honest = selfcheck.check_check_my_op(Loopback(CHECK_IN_FLOAT32).function("check_my_op"),
                                         np.random.default_rng(3))
    forged = selfcheck.check_check_my_op(
        Loopback(CHECK_IN_FLOAT32, FORGE_DTYPES).function("check_my_op"),
        np.random.default_rng(3))
    assert honest.misconception == "checking-in-float32" and not honest.passed
    assert not forged.passed and forged.points == honest.points == 0.0
    assert forged.misconception == "rejects-correct-op"  # the forged dtypes chose the wording


CHECK_UNDER_NO_GRAD = {
    "block": '''
def check_my_op(x):
    with torch.no_grad():
        x64 = x.to(torch.float64).clone().requires_grad_()
        return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8,
                                        raise_exception=False)

def my_op(x):
    return MyOp.apply(x)
''',
    "decorator": '''
@torch.no_grad()
def check_my_op(x):
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)

def my_op(x):
    return MyOp.apply(x)
'''}
FORGE_RECORDING = '''
import sys
_ctx = sys.modules["autograder.worker.stand_in"]
_ctx.grad_mode = lambda args: "recording"  # says: autograd recorded every call
'''


@pytest.mark.parametrize("how", sorted(CHECK_UNDER_NO_GRAD))
def test_how_autograd_met_the_stand_in_crosses_the_wire_and_changes_no_points(how):
    """check_my_op under no_grad (a block, or a decorator, whose globals are the wrapped
    function's) fails on the grader's correct op, named by the grad mode the stand-in saw in
    the worker; stand-ins that claim recording change the name, never the points."""
    honest = selfcheck.check_check_my_op(
        Loopback(CHECK_UNDER_NO_GRAD[how]).function("check_my_op"), np.random.default_rng(3))
    forged = selfcheck.check_check_my_op(
        Loopback(CHECK_UNDER_NO_GRAD[how], FORGE_RECORDING).function("check_my_op"),
        np.random.default_rng(3))
    assert honest.misconception == "check-without-autograd" and not honest.passed
    assert "torch.no_grad()" in honest.message
    assert not forged.passed and forged.points == honest.points == 0.0
    assert forged.misconception == "rejects-correct-op"


def test_a_forged_device_simulation_changes_no_points():
    """pick_device is judged against the availability the judge asked for; a cell that answers
    cuda for mps (so that an mps-first pick_device says cuda when cuda was asked) cannot make
    the wrong order right in every combination."""
    honest = device.check_pick_device(Loopback(MPS_FIRST).function("pick_device"),
                                      np.random.default_rng(0))
    forged = device.check_pick_device(Loopback(MPS_FIRST, FORGE_DEVICES).function("pick_device"),
                                      np.random.default_rng(0))
    assert not honest.passed and not forged.passed and forged.points == 0.0
    right = device.check_pick_device(Loopback(PICK, FORGE_DEVICES).function("pick_device"),
                                     np.random.default_rng(0))
    assert not right.passed  # the forgery only costs: a right answer under lies is judged wrong


def test_advice_reaches_the_passed_tests_message():
    """The judge's test outcome for a passing check with advice says passed, then the advice
    (feedback shows it under the passed test); points are the test's full points."""
    from autograder.harness import expect
    from autograder.running.judge.core import run_test

    env = {"predict": Loopback(PICK, PREDICTS["detach-after"]).function("predict")}
    spec = SimpleNamespace(name="q4_device - 3", hidden=True, points=1.0, question="q4_device",
                           body=SimpleNamespace(call_func=lambda e: expect(
                               e, "autograd-porting", "q4_device/predict_values")))
    outcome = run_test(spec, SimpleNamespace(ensure=lambda: env), seed=4)
    assert outcome.passed and outcome.points == 1.0
    head, _, advice = outcome.message.partition("\n")
    assert head == "passed" and "detach() afterwards does not avoid the recording" in advice
    right = {"predict": Loopback(PICK, PREDICTS["right"]).function("predict")}
    assert run_test(spec, SimpleNamespace(ensure=lambda: right), seed=4).message == "passed"


LEAVES_MODES = '''
def leaves_modes(x):
    torch.set_grad_enabled(False)
    torch.set_default_dtype(torch.float64)
    return x * 2

def grad_of_square(x):
    x = x.detach().requires_grad_()
    return torch.autograd.grad((x ** 2).sum(), x)[0]

leaves_modes(torch.ones(1))  # a cell calls it: the notebook goes on with autograd off
'''


@pytest.fixture
def modes_kept():
    """The cells below run in this process: torch's modes as they were, after the test."""
    kept = worker_modes.current_modes()
    yield
    worker_modes.apply_modes(kept)


def test_every_call_runs_with_autograd_on_and_leaves_no_mode_behind(modes_kept):
    """A notebook whose cell switched autograd off still has its functions called with it on
    (another question's code must not lose points to it); what a call leaves changed is put
    back after it, and reported as ``modes_left``."""
    loop = Loopback(LEAVES_MODES)
    after_cells = worker_modes.current_modes()
    assert after_cells["grad_enabled"] is False  # the cell's call left it off
    got = loop.function("grad_of_square")(torch.tensor([1.5, -2.0], dtype=torch.float32))
    assert torch.equal(got, torch.tensor([3.0, -4.0], dtype=torch.float32))
    leaves = loop.function("leaves_modes")
    leaves(torch.ones(2))
    assert leaves.last_observed["modes_left"] == {"grad_enabled": "False"}
    assert worker_modes.current_modes() == after_cells


KEPT_LEAF = '''
_leaves = {}

def vjp_square(x, weights):
    leaf = _leaves.setdefault((tuple(x.shape), x.dtype),
                              torch.zeros(x.shape, dtype=x.dtype, requires_grad=True))
    with torch.no_grad():
        leaf.copy_(x)
    if leaf.grad is not None:
        leaf.grad.zero_()
    (leaf ** 2).backward(weights)
    return leaf.grad
'''
FRESH_LEAF = '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad
'''


@pytest.mark.parametrize("source", [KEPT_LEAF, FRESH_LEAF], ids=["kept", "fresh"])
def test_a_later_call_changes_the_answer_in_the_worker_as_here(source):
    """``call_again``: the same function called once more on the grader's other inputs before
    the first answer is read. In the worker that is before the answer is encoded, so a tensor
    the later call overwrites is judged as overwritten there too, with the same result."""
    from autograder.checks.exercises import vjp

    space = {"__name__": "__main__"}
    exec("import torch\n" + source, space)
    here = vjp.check_vjp(space["vjp_square"], np.random.default_rng(6))
    remote = vjp.check_vjp(Loopback(source).function("vjp_square"), np.random.default_rng(6))
    assert (remote.passed, remote.misconception, remote.message) == (
        here.passed, here.misconception, here.message)
    assert (here.passed, here.misconception) == (
        (True, None) if source == FRESH_LEAF else (False, "result-reused"))


def test_the_second_call_runs_after_the_first_and_its_answer_is_discarded():
    """The arrangement calls the function again after the block, on the decoded arguments;
    what that call returns or raises is not the first call's."""
    from autograder.worker import wire

    calls = []

    def fn(x):
        calls.append(float(x))
        if len(calls) == 2:
            raise ValueError("the second call's failure is not the answer")
        return x * 2

    with worker_context.arranged(fn, {"call_again": [wire.encode(torch.tensor(5.0))]}):
        first = fn(torch.tensor(1.0))
        assert calls == [1.0]
    assert calls == [1.0, 5.0] and float(first) == 2.0
