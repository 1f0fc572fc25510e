"""The parts of the prepared GPU check (``gpu/check.py``) that are not grading: the host and its
driver against the CUDA build the image's wheel needs; the GPU device files, compute and MIG
modes; a confined worker in each confinement mode running real CUDA, with its address-space,
file and thread use; the GPU-vs-CPU error of predict's reference against the check's tolerance,
with TF32 off and on. Each returns a JSON-able dict with ``problems`` (empty: as expected).
"""

from __future__ import annotations

import copy
import json
import os
import stat
import time

from autograder.running.runners import cuda_host

WORKER_CELL = '''import json, torch
from autograder.worker.cuda_state import resources
_d = "cuda" if torch.cuda.is_available() else "cpu"
_x = torch.randn(512, 512, device=_d)
_y = float((_x @ _x).sum().item())
_gpu_check = json.dumps({"device": _d, "matmul_finite": _y == _y, **resources()})
'''


def host(cuda: bool) -> dict:
    """This machine's torch, driver, GPUs and device files, and the image's CUDA build."""
    import torch

    build = os.environ.get("CUDA_BUILD", cuda_host.DEFAULT_CUDA_BUILD)
    version, oldest = cuda_host.CUDA_BUILDS.get(build, ("?", 0))
    report: dict = {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                    "image_build": build, "image_cuda": version, "image_needs_driver": oldest,
                    "device_files": _device_files(), "problems": []}
    try:
        gpus = cuda_host.host_gpus()
    except cuda_host.CudaHostError as exc:
        report["gpus"] = str(exc)
        if cuda:
            report["problems"].append(f"torch sees CUDA but {exc}")
        return report
    report["gpus"] = [vars(g) for g in gpus]
    report["driver"] = gpus[0].driver
    for why in (cuda_host.driver_problem(build, gpus) if build in cuda_host.CUDA_BUILDS
                else f"unknown CUDA_BUILD {build}", cuda_host.compute_problem(gpus)):
        if why:
            report["problems"].append(why)
    closed = [f for f, v in report["device_files"].items() if not v["others_rw"]
              and f.rsplit("/", 1)[-1].startswith("nvidia") and f != "/dev/nvidia-caps"]
    if closed:  # the worker runs as a uid of its own, in no group of these files
        report["problems"].append(f"device files a worker's uid cannot open: {closed}")
    return report


def _device_files() -> dict:
    found = {}
    for path in sorted(f"/dev/{n}" for n in os.listdir("/dev") if n.startswith("nvidia")):
        st = os.stat(path)
        found[path] = {"mode": stat.filemode(st.st_mode), "uid": st.st_uid, "gid": st.st_gid,
                       "others_rw": st.st_mode & 0o006 == 0o006}
    return found


def worker(confinement: str, cuda: bool) -> dict:
    """One confined worker in ``confinement`` mode (with ``cuda``: the judge asks it for CUDA,
    so its start-up report must show one allocation), running a CUDA matmul as student code,
    then reporting its address space, open files and threads."""
    from autograder.running.judge import uids
    from autograder.running.judge.namespace import RemoteNamespace
    from autograder.running.judge.sandbox import SandboxError
    from autograder.running.judge.worker_client import WorkerClient
    from autograder.running.limits import Limits, with_gpu

    limits = Limits(confinement=confinement, cuda=cuda)
    limits = with_gpu(limits) if cuda else limits
    began = time.monotonic()
    try:
        with uids.lease() as uid:
            client = WorkerClient(uid, limits, time.monotonic() + 240)
            try:
                reply = client.request({"op": "run_cells", "cells": [[0, WORKER_CELL]]}, 180)
                entry = reply["ok"][0]
                if entry["status"] != "ok":
                    return {"cuda_report": client.cuda,
                            "problems": [f"{confinement}: the cell failed: {entry.get('error')}"]}
                used = json.loads(RemoteNamespace(client)["_gpu_check"])
            finally:
                client.close()
    except SandboxError as exc:
        return {"problems": [f"{confinement}: {exc}"]}
    problems = [] if used["device"] == ("cuda" if cuda else "cpu") and used["matmul_finite"] \
        else [f"{confinement}: the worker's matmul ran on {used['device']}"]
    return {"cuda_report": client.cuda, "used": used, "problems": problems,
            "seconds": round(time.monotonic() - began, 2)}


def tf32_error(cuda: bool, models: int = 20) -> dict:
    """The worst error of predict's reference computed on the GPU against the CPU's, in units
    of the check's tolerance (``|gpu - cpu| / (ATOL + RTOL |cpu|)``: over 1 fails a right
    answer), with TF32 matmuls off (the default; must stay under 1) and on."""
    import numpy as np
    import torch

    from autograder.checks.porting.device import draw_model
    from autograder.checks.porting.device_predict import ATOL, RTOL

    target = torch.device("cuda" if cuda else "cpu")  # the CPU against itself: 0, a dry run
    matmul = torch.backends.cuda.matmul
    saved = matmul.allow_tf32
    worst = {"tf32_off": 0.0, "tf32_on": 0.0}
    try:
        for i in range(models):
            model, batch = draw_model(np.random.default_rng(i))
            with torch.no_grad():
                reference = copy.deepcopy(model).eval()(batch)
                for key, tf32 in (("tf32_off", False), ("tf32_on", True)):
                    matmul.allow_tf32 = tf32
                    got = copy.deepcopy(model).to(target).eval()(batch.to(target)).cpu()
                    ratio = ((got - reference).abs() / (ATOL + RTOL * reference.abs())).max()
                    worst[key] = max(worst[key], float(ratio))
    finally:
        matmul.allow_tf32 = saved
    problems = [] if worst["tf32_off"] <= 1 else [
        f"with TF32 off the GPU's predict is {worst['tf32_off']:.2f}x the tolerance away from "
        "the CPU reference: right answers would fail on this GPU"]
    return {**{k: round(v, 3) for k, v in worst.items()}, "device": str(target), "rtol": RTOL,
            "atol": ATOL, "models": models, "problems": problems}
