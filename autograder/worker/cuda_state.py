"""What the worker reports of CUDA at start, when the judge grades with it (``limits["cuda"]``):
after the uid drop, before any student code, in the worker's first line. The judge compares
it with what it asked for (``cuda_report.cuda_mismatch``): a worker that cannot use the GPU
the judge grades with is the grader's error, never a student's lost points.

A worker that inherited an initialised CUDA from the process that forked it ("bad fork": the
zygote touched CUDA before forking) can never use it; that is reported too.
"""

from __future__ import annotations

import os
import resource


def cuda_state() -> dict:
    """``available``, ``devices``, ``allocated`` (one small tensor made and read back on the
    first device), ``bad_fork``, ``initialized_before`` (CUDA initialised before this probe),
    ``error`` (what raised, if anything)."""
    import torch

    state: dict = {"bad_fork": bool(torch.cuda._is_in_bad_fork()),
                   "initialized_before": bool(torch.cuda.is_initialized()),
                   "available": False, "devices": 0, "allocated": False}
    try:
        state["available"] = bool(torch.cuda.is_available())
        state["devices"] = int(torch.cuda.device_count())
        if state["available"]:
            probe = torch.ones(1024, device="cuda")
            state["allocated"] = float(probe.sum().item()) == 1024.0
            del probe
    except Exception as exc:  # noqa: BLE001 - the reason is the report
        state["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return state


def resources() -> dict:
    """This process's address space, open files and threads, with their limits (what the
    prepared GPU check shows of a confined worker after CUDA's initialisation)."""
    status = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmPeak", "VmSize", "VmRSS", "Threads"):
                status[key] = value.strip()
    return {**status, "open_files": len(os.listdir("/proc/self/fd")),
            "rlimit_as": resource.getrlimit(resource.RLIMIT_AS)[0],
            "rlimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
            "rlimit_nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0]}
