"""What one call of a student's function costs across the sealed judge's wall, without the
rest of a submission: a live confined worker (forked from the zygote, as for grading) whose
notebook defines ``f(x): return x`` and ``g(net, x, track=True): return 3`` (count_saved's
arguments), called through ``calling.call`` and ``RemoteFunction`` as the checks call it.

    sudo .venv/bin/python benchmarks/round_trip.py [--calls 1600]

Prints, per kind of call, the judge's CPU (this thread) and the worker's CPU
(``/proc/<worker>/schedstat``) per call: the smallest of 8 blocks, which a shared machine's
other work inflates least. Needs root (the sealed judge).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from autograder.checks import calling  # noqa: E402
from autograder.harness import collecting  # noqa: E402
from autograder.running.judge import core, uids  # noqa: E402
from autograder.running.judge.namespace import RemoteNamespace  # noqa: E402
from autograder.running.judge.worker_client import WorkerClient  # noqa: E402
from autograder.running.limits import Limits  # noqa: E402

CELL = "def f(x):\n    return x\n\n\ndef g(net, x, track=True):\n    return 3\n"
BLOCKS = 8


def on_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1600, help="calls per kind (1600)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the sealed judge needs root")
    torch.set_num_threads(1)
    limits = core.grading_limits(Limits(call_timeout=30, submission_timeout=3600))
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    cases = [("f(5x3 tensor)", "f", (torch.randn(5, 3),)),
             ("g(net, x, True)", "g", (net, torch.randn(4, 3, dtype=torch.float64), True))]
    with uids.lease() as uid:
        client = WorkerClient(uid, limits, time.monotonic() + 3600)
        try:
            list(client.stream({"op": "run_cells", "cells": [[0, CELL]]}, 1, 10))
            env = RemoteNamespace(client)
            per_block = max(args.calls // BLOCKS, 1)
            for label, name, call_args in cases:
                fn, host, worker = env[name], [], []
                with collecting(1):
                    for _ in range(50):  # warm-up
                        calling.call(fn, name, *call_args)
                    for _ in range(BLOCKS):
                        h, w = time.thread_time(), on_cpu(client.proc.pid)
                        for _ in range(per_block):
                            calling.call(fn, name, *call_args)
                        host.append(time.thread_time() - h)
                        worker.append(on_cpu(client.proc.pid) - w)
                print(f"{label:18s} judge {1e6 * min(host) / per_block:6.0f} us, "
                      f"worker {1e6 * min(worker) / per_block:6.0f} us per call")
        finally:
            client.close()


if __name__ == "__main__":
    main()
