"""Blind round zzi's ``pick_device`` asked torch the wrong question: ``torch.cuda.is_initialized()``
("CUDA is set up and ready"), False until the process has used CUDA, so it never returned cuda
and was told only that (``never-picks-cuda``: the right effect and fix, not what it asked).

The worker now hears which of torch's device questions a call asked (``asked_devices``), and a
failing ``pick_device`` is asked again with the questions that do not say whether a device is
there answering as availability would: when every answer comes right, they are told as the
cause. Names and points still come from the returned devices. Each spelling of the mistake is
told; right answers that also read those questions (for a print, beside ``is_available()``)
keep full marks and hear nothing; other named mistakes keep their names and words.
"""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest
import torch

from autograder.checks.porting import device
from autograder.running.judge.reports import clean_observed
from autograder.worker import arrangements
from autograder.worker.arrangements import arranged
from autograder.worker.asked_devices import QUESTIONS
from test_observations import Loopback

CUDA = torch.device("cuda")
MPS = torch.device("mps")
CPU = torch.device("cpu")
HEARD = "As your process reported, pick_device asked"
CONFIRMED = "Asked again with that question answering as the simulated availability does"


def _then_mps(asks_cuda):
    def pick_device():
        if asks_cuda():
            return CUDA
        if torch.backends.mps.is_available():
            return MPS
        return CPU
    return pick_device


# (what the student asked for cuda, the question told, the name the answers give)
CUDA_QUESTIONS = {
    "is_initialized": (lambda: torch.cuda.is_initialized(), "torch.cuda.is_initialized()",
                       "whether this process has used CUDA yet"),
    "cudnn_available": (lambda: torch.backends.cudnn.is_available(),
                        "torch.backends.cudnn.is_available()", "includes cuDNN"),
    "cudnn_enabled": (lambda: torch.backends.cudnn.enabled, "torch.backends.cudnn.enabled",
                      "is a setting"),
    "version_cuda": (lambda: torch.version.cuda is not None, "torch.version.cuda",
                     "the CUDA version this PyTorch was built with"),
    "cuda_built": (lambda: torch.backends.cuda.is_built(), "torch.backends.cuda.is_built()",
                   "built with CUDA"),
    "has_cuda": (lambda: torch.has_cuda, "torch.has_cuda", "built with CUDA"),
    "visible_get": (lambda: os.environ.get("CUDA_VISIBLE_DEVICES") is not None,
                    "os.environ['CUDA_VISIBLE_DEVICES']", "which GPUs a process may see"),
    "visible_in": (lambda: "CUDA_VISIBLE_DEVICES" in os.environ,
                   "os.environ['CUDA_VISIBLE_DEVICES']", "which GPUs a process may see"),
    "visible_getenv": (lambda: bool(os.getenv("CUDA_VISIBLE_DEVICES")),
                       "os.environ['CUDA_VISIBLE_DEVICES']", "which GPUs a process may see"),
    # the right question asked too, spoiled by the wrong one
    "available_and_initialized": (lambda: torch.cuda.is_available()
                                  and torch.cuda.is_initialized(),
                                  "torch.cuda.is_initialized()", "used CUDA yet"),
}


def _check(fn, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.has_cuda is deprecated
        return device.check_pick_device(fn, np.random.default_rng(seed))


@pytest.fixture(autouse=True)
def no_cuda_visible(monkeypatch):
    """Without the variable set (as on this machine and most graders), the env spellings
    never pick cuda."""
    for key in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(arrangements, "heard_devices", arrangements.heard_devices)


@pytest.mark.parametrize("name", CUDA_QUESTIONS)
def test_a_wrong_cuda_question_is_told_as_the_cause(name):
    asks, told, meaning = CUDA_QUESTIONS[name]
    result = _check(_then_mps(asks))
    assert not result.passed and result.points == 0.0
    # the name comes from the answers: cudnn.enabled is True on any machine
    expected = "availability-ignored" if name == "cudnn_enabled" else "never-picks-cuda"
    assert result.misconception == expected, result.message
    assert f"{HEARD} {told}, which" in result.message, result.message
    assert meaning in result.message and CONFIRMED in result.message, result.message
    assert "fixed before the call" not in result.message, result.message
    assert "torch.cuda.is_available()" in result.message


def test_blind_round_zzi_student_is_told_is_initialized():
    def pick_device():
        """The best available device: cuda, then mps, then cpu."""
        if torch.cuda.is_initialized():          # CUDA is set up and ready to take work
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")

    result = _check(pick_device, seed=3)
    assert result.misconception == "never-picks-cuda" and result.points == 0.0
    for words in ("torch.cuda.is_initialized()", "has used CUDA yet", "not whether a GPU is "
                  "there", "Decide with torch.cuda.is_available() itself"):
        assert words in result.message, result.message


def test_on_a_machine_that_used_cuda_is_initialized_is_told_not_a_cache(monkeypatch):
    """On a GPU grader the worker has used CUDA, is_initialized() is True, and the answer is
    cuda whatever is simulated: told as the question, not as a constant fixed before the
    call."""
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    result = _check(_then_mps(lambda: torch.cuda.is_initialized()))
    assert result.misconception == "availability-ignored" and result.points == 0.0
    assert f"{HEARD} torch.cuda.is_initialized()" in result.message, result.message
    assert "fixed before the call" not in result.message


@pytest.mark.parametrize("mps_question, told", [
    (lambda: torch.backends.mps.is_built(), "torch.backends.mps.is_built()"),
    (lambda: torch.has_mps, "torch.has_mps"),
])
def test_a_wrong_mps_question_is_told(mps_question, told):
    def pick_device():
        if torch.cuda.is_available():
            return CUDA
        return MPS if mps_question() else CPU

    result = _check(pick_device)
    assert not result.passed and result.points == 0.0
    assert f"{HEARD} {told}, which says whether this PyTorch was built with MPS" \
        in result.message, result.message
    assert "torch.backends.mps.is_available()" in result.message
    assert "Checked without finding the cause" not in result.message


def test_bf16_support_is_told_where_asking_it_raised():
    """is_bf16_supported() asks the real GPU's properties once the simulation says cuda: on a
    CPU build that raises torch's own assertion, told as the question, not as an `assert` of
    the student's."""
    result = _check(_then_mps(lambda: torch.cuda.is_bf16_supported()))
    if torch.cuda.is_available():  # a real GPU answers for the simulated one
        return
    assert result.misconception == "raised" and result.points == 0.0, result.message
    assert f"{HEARD} torch.cuda.is_bf16_supported()" in result.message, result.message
    assert "An `assert` in your function" not in result.message


def test_a_question_heard_beside_another_mistake_is_told_as_heard_only():
    """is_initialized() and no mps at all: asked again with it answering as availability,
    mps is still never returned, so the question is told as heard, not as the cause."""
    def pick_device():
        return CUDA if torch.cuda.is_initialized() else CPU

    result = _check(pick_device)
    assert result.misconception in ("never-picks-cuda", "availability-ignored")
    assert f"{HEARD} torch.cuda.is_initialized()" in result.message, result.message
    assert CONFIRMED not in result.message


# --- near-misses: right answers, and other mistakes, as before --------------------------------

def _right_with(extra):
    def pick_device():
        extra()
        if torch.cuda.is_available():
            return CUDA
        return MPS if torch.backends.mps.is_available() else CPU
    return pick_device


RIGHT = {
    "cudnn_enabled_too": _right_with(lambda: torch.backends.cudnn.enabled),
    "version_printed": _right_with(lambda: str(torch.version.cuda)),
    "env_read": _right_with(lambda: os.environ.get("CUDA_VISIBLE_DEVICES")),
    "initialized_read": _right_with(lambda: torch.cuda.is_initialized()),
    "mps_built_and_available": lambda: (
        CUDA if torch.cuda.is_available() else MPS
        if torch.backends.mps.is_built() and torch.backends.mps.is_available() else CPU),
    "count": lambda: CUDA if torch.cuda.device_count() > 0 else (
        MPS if torch.backends.mps.is_available() else CPU),
    "accelerator": lambda: torch.accelerator.current_accelerator() or CPU,
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_answers_keep_full_marks_and_are_asked_four_times(name):
    calls = []

    def counted():
        calls.append(1)
        return RIGHT[name]()

    result = _check(counted)
    assert result.passed and result.points == 1.0 and result.misconception is None
    assert len(calls) == 4  # nothing asked again on a passing answer


def _cached():
    answer = torch.device("cpu")
    return lambda: answer


NAMED = {
    "mps-first": (lambda: MPS if torch.backends.mps.is_available() else (
        CUDA if torch.cuda.is_available() else CPU), "wrong-preference-order"),
    "cached": (_cached(), "availability-ignored"),
    "mps-never-asked": (lambda: CUDA if torch.cuda.is_available() else CPU, "never-picks-mps"),
    "string": (lambda: "cuda" if torch.cuda.is_available() else "cpu", "device-as-string"),
    # is_built() beside is_available(), wrong for another reason: is_built() is not blamed
    "index-one": (lambda: torch.device("cuda", 1) if torch.cuda.is_available() else MPS
                  if torch.backends.mps.is_built() and torch.backends.mps.is_available()
                  else CPU, "device-index"),
}


@pytest.mark.parametrize("name", NAMED)
def test_other_mistakes_keep_their_names_and_words(name):
    fn, expected = NAMED[name]
    result = _check(fn)
    assert not result.passed and result.misconception == expected, result.message
    assert HEARD not in result.message, result.message
    if name == "cached":
        assert "fixed before the call" in result.message


# --- the worker side: the real simulation, through the worker's request handler --------------

CELL = '''
import os
def pick_device():
    if torch.cuda.is_initialized():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")

def right():
    print(torch.version.cuda, os.environ.get("CUDA_VISIBLE_DEVICES"))
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("mps" if torch.backends.mps.is_available() else "cpu")

def mps_only():
    return torch.device("mps" if torch.backends.mps.is_available() else "cpu")
'''
FORGE_HEARD = '''
import contextlib, sys
@contextlib.contextmanager
def _forged(observed, cuda, mps, as_available):
    try:
        yield
    finally:  # says: asked is_initialized(), and noise the judge must drop
        observed["devices_asked"] = ["torch.cuda.is_initialized()", 7, "x" * 100_000,
                                     "torch.cuda.is_available() and more"]
sys.modules["autograder.worker.arrangements"].heard_devices = _forged
'''


def test_the_worker_hears_the_question_and_the_judge_tells_it():
    worker = Loopback(CELL)
    result = _check(worker.function("pick_device"), seed=5)
    assert result.misconception == "never-picks-cuda" and result.points == 0.0
    assert f"{HEARD} torch.cuda.is_initialized()" in result.message, result.message
    assert CONFIRMED in result.message
    assert _check(worker.function("right"), seed=5).passed


def test_a_forged_report_changes_the_words_never_the_points():
    honest, forged = Loopback(CELL), Loopback(CELL, FORGE_HEARD)
    for name in ("right", "mps_only"):
        a, b = (_check(w.function(name), seed=2) for w in (honest, forged))
        assert (a.passed, a.points, a.misconception) == (b.passed, b.points, b.misconception)
    wrong = _check(forged.function("mps_only"), seed=2)
    assert wrong.misconception == "never-picks-cuda"
    # heard only: the forgery cannot answer as availability, so nothing is confirmed
    assert f"{HEARD} torch.cuda.is_initialized()" in wrong.message and CONFIRMED not in \
        wrong.message, wrong.message
    # the forged question and the honest one both lose the point they lost before
    assert _check(forged.function("pick_device"), seed=2).points == 0.0


def test_the_judge_keeps_only_known_questions():
    clean = clean_observed({"devices_asked": ["torch.cuda.is_initialized()", 7, None,
                                              "x" * 10_000, ["torch.version.cuda"],
                                              "torch.version.cuda"] + ["y"] * 100})
    assert clean["devices_asked"] == ["torch.cuda.is_initialized()", "torch.version.cuda"]
    assert "devices_asked" not in clean_observed({"devices_asked": "torch.version.cuda"})


# --- the simulation puts torch back, and hears only its own thread ---------------------------

def _torch_state():
    return (torch.cuda.is_initialized, torch.cuda.is_available, torch.backends.mps.is_built,
            torch.backends.cudnn.is_available, torch.backends.cuda.is_built,
            vars(type(torch.backends.cudnn))["enabled"], vars(torch).get("__getattr__"),
            vars(torch.version).get("cuda"), "__getattr__" in vars(torch.version),
            type(os.environ), set(vars(torch.backends.cudnn)))


@pytest.mark.parametrize("as_available", [False, True])
def test_every_question_is_put_back_even_when_the_call_raises(as_available):
    before = _torch_state()
    with pytest.raises(RuntimeError):
        with arranged(None, {"simulate_devices": {"cuda": True, "mps": False,
                                                  "as_available": as_available}}) as seen:
            assert torch.cuda.is_initialized() is (True if as_available else
                                                   before[0]())
            raise RuntimeError("the student's code")
    assert _torch_state() == before
    assert seen["devices_asked"] == ["torch.cuda.is_initialized()"]
    assert set(seen["devices_asked"]) <= QUESTIONS


def test_other_threads_get_torchs_own_answers_and_are_not_heard():
    got = {}

    def other():
        got["initialized"] = torch.cuda.is_initialized()
        got["visible"] = os.environ.get("CUDA_VISIBLE_DEVICES")

    real = torch.cuda.is_initialized()
    with arranged(None, {"simulate_devices": {"cuda": True, "mps": False,
                                              "as_available": True}}) as seen:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert got == {"initialized": real, "visible": None}
    assert seen["devices_asked"] == []


def test_every_label_the_worker_can_report_has_words_or_is_a_right_question():
    from autograder.checks.porting.device_questions import ANSWERING, MEANINGS
    assert QUESTIONS == set(MEANINGS) | ANSWERING["cuda"] | ANSWERING["mps"]


def test_torch_asking_for_itself_gets_its_own_answers_and_is_not_heard():
    """torch reads CUDA_VISIBLE_DEVICES itself (``_parse_visible_devices``), its
    ``is_bf16_supported`` asks ``is_available()``, its ``_lazy_init`` asks
    ``is_initialized()``: none of that is what the student asked, nor answered as availability."""
    real = torch.cuda._parse_visible_devices()
    with arranged(None, {"simulate_devices": {"cuda": True, "mps": False,
                                              "as_available": True}}) as seen:
        assert torch.cuda._parse_visible_devices() == real
    assert seen["devices_asked"] == []
