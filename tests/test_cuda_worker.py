"""CUDA failures kept apart from students' mistakes, proven on this CPU machine.

- A judge that grades with CUDA (``Limits.cuda``, set when the judge sees CUDA) makes each
  confined worker report its CUDA state before any student code runs; a worker that cannot use
  it is a grader error with the reason, never a student's lost points. Here the worker (real,
  confined, CPU torch) truly sees no CUDA: asked for it, the solution becomes a grader error,
  through the sealed judge and through the container entry point's command line.
- Fork order: the zygote's warm-up (and the judge's entry points' imports) call nothing that
  reaches CUDA's driver, CUDA is not initialised, and a child it forks is not in a bad fork;
  the negative control (a warm-up followed by what a judge asks, ``is_available()``, and an
  initialisation) is seen by the same tracer. With this CPU wheel the control's child cannot be
  in a bad fork (torch has no CUDA state to poison): that half runs in gpu/check.py on a GPU.
- TF32: a real worker reports whether the student's cells left TF32 matmuls on, and the
  predict check names ``tf32-enabled`` for a value mismatch on CUDA with it on.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from autograder.checks.porting import device, device_predict
from autograder.running.container_protocol import RESULT_MARKER
from autograder.running.judge import uids
from autograder.running.judge.core import judge
from autograder.running.judge.cuda_report import cuda_mismatch
from autograder.running.judge.namespace import RemoteNamespace
from autograder.running.judge.tests_zip import load_tests
from autograder.running.judge.worker_client import WorkerClient
from autograder.running.limits import Limits
from notebooks import ROOT

sys.path.insert(0, str(ROOT / "gpu"))
import fork_order  # noqa: E402

PORTING = "autograd-porting"
NO_CUDA = "the judge grades with CUDA but the confined worker cannot use it: torch sees no " \
          "CUDA device in it"


@pytest.mark.slow
@pytest.mark.needs_root
def test_a_judge_asking_for_cuda_of_a_worker_without_it_is_a_grader_error(zips):
    path = ROOT / "solutions" / f"{PORTING}.ipynb"
    with uids.lease() as uid:
        doc = judge(path, path.name, PORTING, load_tests(zips[PORTING]), seed=3, uid=uid,
                    limits=Limits(cuda=True, submission_timeout=120))
    assert doc.is_grader_error and doc.error.startswith(NO_CUDA), doc
    assert doc.questions == {}  # no test ran, so no points were lost


@pytest.mark.slow
@pytest.mark.needs_root
def test_the_container_entry_reports_the_worker_without_cuda_as_the_graders_error(zips):
    """The ``docker``/``docker-gpu`` runner's entry point, as a command, with a job whose
    limits ask for CUDA (as the judge's own ``is_available()`` does on a GPU host)."""
    job = {"notebook": base64.b64encode((ROOT / "solutions" / f"{PORTING}.ipynb")
                                        .read_bytes()).decode(),
           "zip": base64.b64encode(zips[PORTING].read_bytes()).decode(),
           "name": "a.ipynb", "assignment": PORTING, "seed": 3,
           "limits": {"cuda": True, "submission_timeout": 120}}
    with uids.lease() as uid:
        proc = subprocess.run([sys.executable, "-m", "autograder.running.entry.container"],
                              input=json.dumps({**job, "uid": uid}), capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
    line = next(x for x in proc.stdout.splitlines() if x.startswith(RESULT_MARKER))
    doc = json.loads(line[len(RESULT_MARKER):])
    assert doc["status"] == "grader-error" and doc["error"].startswith(NO_CUDA), doc


@pytest.mark.parametrize("report, says", [
    (None, "it sent no CUDA report"),
    ({"bad_fork": True, "available": True, "allocated": True}, "forked from a process"),
    ({"available": False, "error": "RuntimeError: no driver"}, "(RuntimeError: no driver)"),
    ({"available": True, "devices": 1, "allocated": False,
      "error": "OutOfMemoryError: CUDA out of memory"}, "GPU memory full (fewer --jobs)"),
])
def test_each_way_a_worker_falls_short_of_cuda_is_named(report, says):
    assert says in cuda_mismatch(report)


def test_a_worker_that_allocated_on_the_gpu_is_enough():
    assert cuda_mismatch({"bad_fork": False, "available": True, "devices": 2,
                          "allocated": True}) is None


def test_the_zygote_touches_no_cuda_and_the_control_shows_the_tracer_sees_it():
    found = fork_order.check(cuda=torch.cuda.is_available())
    assert found["problems"] == [], found
    assert found["zygote"]["touched"] == [] and not found["zygote"]["initialized"]
    assert not found["zygote"]["child"]["bad_fork"]
    assert {"torch.cuda.is_available", "torch.cuda.init"} <= set(found["control"]["touched"])
    # with this CPU wheel, torch has no CUDA state to mark a fork bad: said, not assumed
    assert found["control_proves_bad_fork"] == (found["control"]["torch_cuda"] is not None)


PREDICT = '''import torch
def predict(model, batch, device):
    model = model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))
'''


@pytest.mark.slow
@pytest.mark.needs_root
@pytest.mark.parametrize("setup, tf32", [
    ("", False),
    ("torch.backends.cuda.matmul.allow_tf32 = True", True),
    ("torch.set_float32_matmul_precision('high')", True),
])
def test_a_real_worker_reports_tf32_left_on_by_the_students_cells(setup, tf32):
    model, batch = device.draw_model(np.random.default_rng(4))
    with uids.lease() as uid:
        client = WorkerClient(uid, Limits(), time.monotonic() + 120)
        try:
            reply = client.request({"op": "run_cells", "cells": [[0, PREDICT + setup]]}, 60)
            assert reply["ok"][0]["status"] == "ok", reply
            predict = RemoteNamespace(client)["predict"]
            got, failure, _, heard, *_ = device_predict.run_predict(predict, model, batch,
                                                                torch.device("cpu"))
        finally:
            client.close()
    assert failure is None and heard is tf32


def test_a_value_mismatch_on_cuda_with_tf32_on_is_named_and_only_there():
    named, hint = device_predict.tf32_cause(True, torch.device("cuda"))
    assert named == "tf32-enabled" and "allow_tf32" in hint
    for tf32, where in ((False, "cuda"), (True, "cpu"), (True, "meta")):
        assert device_predict.tf32_cause(tf32, torch.device(where)) == (None, "")
    model, batch = device.draw_model(np.random.default_rng(6))
    model.eval()
    with torch.no_grad():
        expected = model(batch)
    off = expected * (1 + 1e-3)  # what TF32's rounding does to a float32 matmul's output
    cpu = torch.device("cpu")
    verdict = device_predict.judge_prediction(off, 0, model, expected, cpu, tf32=True)
    assert verdict.misconception is None  # on the CPU, TF32 changes nothing: never the cause


def test_a_zygote_of_a_cuda_build_runs_no_backward_before_it_forks():
    """A backward pass starts the autograd engine's device threads, which start CUDA's driver
    (torch marks no bad fork for it): every worker forked afterwards failed its first GPU
    allocation (the first GPU check, 2026-12-04). With a CUDA build the zygote's warm-up skips
    the rehearsal (which runs backward); with the CPU wheel it rehearses."""
    code = ("import torch\n"
            "torch.backends.cuda.is_built = lambda: {built}\n"
            "from autograder.worker import rehearsal\n"
            "ran = []\n"
            "rehearsal.rehearse = lambda: ran.append(True)\n"
            "from autograder.worker.zygote import warm_up\n"
            "warm_up(rehearse=True)\n"
            "print(ran)")
    for built, expected in ((True, "[]"), (False, "[True]")):
        out = subprocess.run([sys.executable, "-c", code.format(built=built)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, check=True)
        assert out.stdout.strip() == expected, (built, out.stdout, out.stderr[-500:])
