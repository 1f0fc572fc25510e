"""What a worker can observe of the judge's requests carries no hint of the expected answer.

``check_my_op`` is asked with a correct and a broken stand-in op swapped in; the judge keeps
which one it chose (docs/security.md, "check_my_op: the question is asked in the student's
process"). For any input the check draws, in either dtype, everything the worker process gets
and everything student code in it can read at the call is the same for both ops: the request
bytes, the frames above the call and their locals, the stand-in's names, code and closure.
Only the backward's values (the behaviour a gradient check measures) differ.

The worker's request handler runs in this process behind the judge's real ``RemoteFunction``
(``Recorder``, as ``test_observations.Loopback``), so every message crosses as JSON bytes and
is recorded as the pipe would carry it; the sealed runner's run of the same attack in a real
confined worker is ``test_adversarial.test_nothing_in_the_worker_names_the_swapped_op``.
"""

from __future__ import annotations

import json
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks import context
from autograder.checks.porting import gradcheck, selfcheck
from autograder.running.judge.remote import RemoteFunction
from autograder.worker import stand_in
from autograder.worker.main import Worker

WORKER_FILES = ("autograder/worker/",)
ADDRESS = re.compile(r"0x[0-9a-f]+")
SEEN: dict = {}


def snapshot(x):
    """The student's check_my_op: records what it can read of the grader, never checks."""
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        if any(part in frame.f_code.co_filename for part in WORKER_FILES):
            frames.append((frame.f_code.co_name, {k: ADDRESS.sub("@", repr(v))
                                                  for k, v in frame.f_locals.items()}))
        frame = frame.f_back
    op = MyOp
    backward = op.backward
    cells = [ADDRESS.sub("@", repr(c.cell_contents)) for c in backward.__closure__ or ()]
    SEEN["now"] = {"frames": frames, "names": (op.__name__, op.__qualname__, op.__module__,
                                               my_op.__name__),
                   "code": backward.__code__.co_code, "consts": backward.__code__.co_consts,
                   "cells": cells}
    return True


class Recorder:
    """``Worker`` behind the judge's ``RemoteFunction``, its ``check_my_op`` the function
    ``fn`` (of this module: the worker swaps this module's ``MyOp`` and ``my_op``); records
    the bytes of every request, and hands the worker's questions to the judge's ``answer``
    as JSON, as the pipe would."""

    limits = SimpleNamespace(call_timeout=30)

    def __init__(self, fn):
        self.worker = Worker()
        self.worker.namespace["check_my_op"] = fn
        self.sent: list[bytes] = []

    def request(self, message: dict, timeout: float, answer=None) -> dict:
        data = json.dumps(message, allow_nan=False).encode()
        self.sent.append(data)
        message = json.loads(data)
        if answer is not None:
            self.worker.ask = lambda q: json.loads(json.dumps(answer(json.loads(json.dumps(q)))))
        return json.loads(json.dumps(self.worker.call(
            message["target"], message["args"], message["kwargs"], message["context"],
            message.get("backward")), allow_nan=False))


MyOp = my_op = None  # the worker swaps the grader's stand-in in here during a call


def observed(x: torch.Tensor, broken: bool) -> tuple[list[bytes], dict]:
    client = Recorder(snapshot)
    SEEN.clear()
    got, failure, _, _ = selfcheck.run_with_op(RemoteFunction(client, "check_my_op"), x, broken)
    assert failure is None and got is True
    return client.sent, SEEN["now"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.sampled_from([torch.float32, torch.float64]))
def test_the_worker_sees_the_same_request_for_either_op(seed, dtype):
    x = gradcheck.draw_x(np.random.default_rng(seed), dtype)
    sent_broken, seen_broken = observed(x, broken=True)
    sent_lesson, seen_lesson = observed(x, broken=False)
    assert sent_broken == sent_lesson
    assert seen_broken == seen_lesson
    assert seen_broken["names"] == ("MyOp", "MyOp", "__main__", "apply")
    for data in sent_broken:
        assert stand_in.STAND_IN_BACKWARD.encode() not in data
        assert b"broken" not in data and b"lesson" not in data


@pytest.mark.parametrize("kind", ["stand_in_c", 3, None])
def test_a_malformed_question_gets_an_error_that_names_nothing(kind):
    """A question the judge cannot answer (here: its tensors missing, whatever else it says)
    is told so in words that are the same whichever op was chosen."""
    from autograder.running.judge.remote import answerer

    answers = [answerer({stand_in.STAND_IN_BACKWARD: chosen})({"backward": {
        "stand_in": kind}}) for chosen in ("lesson", "broken")]
    assert answers[0] == answers[1] == {"error": "not a backward question the grader can answer"}


def test_the_judge_answers_a_bounded_number_of_small_questions_per_call():
    """Red team rt-s5 looped on the stand-in's backward with 100 000-element tensors: the
    judge, outside the worker's one-core cap, worked beside it. Past the bounds each question
    gets an error, the same whichever op was chosen."""
    from autograder.running.judge import remote
    from autograder.worker import wire

    def question(n: int) -> dict:
        return {"backward": {"x": wire.encode(torch.ones(n, dtype=torch.float64)),
                             "grad_output": wire.encode(torch.ones(n, dtype=torch.float64))}}

    for chosen in ("lesson", "broken"):
        answer = remote.answerer({stand_in.STAND_IN_BACKWARD: chosen})
        assert "ok" in answer(question(9))
        big = answer(question(remote.MAX_QUESTION_ELEMENTS + 1))
        assert big == {"error": "the grader answers backward questions of a stand-in op on "
                                f"tensors of at most {remote.MAX_QUESTION_ELEMENTS} elements"}
        for _ in range(remote.MAX_QUESTIONS - 2):
            assert "ok" in answer(question(3))
        assert "at most 1000 backward questions" in answer(question(3))["error"]


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(["simulate_devices", "swap_globals", "torch_seed",
                                        "count_saved_tensors", "overwrite_module_params",
                                        "observe_forward", "observe_moves",
                                        stand_in.STAND_IN_BACKWARD]),
                       st.one_of(st.booleans(), st.integers(), st.sampled_from(
                           stand_in.BACKWARDS))))
def test_no_judge_only_key_travels(request):
    """Whatever a check's request holds, what goes to the worker holds none of the judge's own
    keys."""
    sent = context.for_worker(request)
    assert not set(sent) & context.JUDGE_ONLY
    assert {k: v for k, v in request.items() if k not in context.JUDGE_ONLY} == sent


def checks(x):
    """An honest check_my_op."""
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


@pytest.mark.parametrize("kind", ["lesson", "broken"])
def test_the_judge_answers_the_backward_it_chose(kind):
    """The stand-in's backward, asked across the wire, is the lesson's gradient or the broken
    one, as the judge chose: gradcheck in the worker tells them apart."""
    x = gradcheck.draw_x(np.random.default_rng(11), torch.float32)
    got, failure, seen, _ = selfcheck.run_with_op(RemoteFunction(Recorder(checks), "check_my_op"),
                                               x, broken=kind == "broken")
    assert failure is None and got is (kind == "lesson")
    assert seen and set(seen) == {torch.float64}
    assert my_op is None and MyOp is None  # restored


# A check_my_op that asks the judge for a backward with a large input, then never reads the
# answer (the judge's write of it fills the pipe) and never returns.
FLOOD = '''
import json, os, sys, time


def check_my_op(x):
    wire = sys.modules["autograder.worker.wire"]
    big = torch.zeros(10_000, dtype=torch.float64)  # its answer, 107 KB: past the pipe's 64 KiB
    question = {"backward": {"x": wire.encode(big), "grad_output": wire.encode(big[0])}}
    os.write(4, json.dumps({"ask": question}).encode() + b"\\n")
    while True:
        time.sleep(1)
'''


@pytest.mark.extended
@pytest.mark.slow
@pytest.mark.needs_root
def test_a_worker_that_stops_reading_the_answers_cannot_block_the_judge(build_dir, tmp_path):
    """The judge writes its answer to the worker within the call's time limit: a worker that
    asks and stops reading loses its call (and only its call) to the time limit; the grader
    neither hangs nor stops."""
    import subprocess

    import nbformat

    from notebooks import ROOT, solution

    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    nb = solution("autograd-porting")
    cell = next(i for i, c in enumerate(nb.cells) if "def check_my_op" in c.source)
    nb.cells[cell].source = nb.cells[cell].source.split("def check_my_op")[0] + FLOOD
    nbformat.write(nb, folder / "flood.ipynb")
    # a 4 s call limit: the two calls that never return wait it out (idle); the solution's
    # other q3 calls pass under 0.3 s quiet, but at load 4.5 (the suite beside two other jobs)
    # one of them lost its call to a 2 s limit (stop 42's first run)
    proc = subprocess.run([sys.executable, "-m", "autograder", "--build", str(build_dir),
                           "grade", "-p", str(folder), "-o", str(out), "--seed", "7",
                           "--runner", "sealed", "--question", "q3_gradcheck", "--timeout", "4",
                           "--no-reports", "--jobs", "1"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((out / "autograd-porting" / "results" / "flood.ipynb.json").read_text())
    checks = {c["check"]: c for t in doc["questions"]["q3_gradcheck"]["tests"]
              for c in t.get("checks", [])}
    assert not checks["check_my_op"]["passed"]
    assert "stopped reading what the grader sent" in checks["check_my_op"]["message"]
    # check_my_op_at_x asks the same check_my_op, which never returns
    assert all(c["passed"] for name, c in checks.items()
               if name not in ("check_my_op", "check_my_op_at_x")), checks
