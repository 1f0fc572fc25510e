"""The floor at N: a batch graded with no isolation at all, as the lower bound for any mode
that keeps one student's code from the next one's.

    python benchmarks/floor_batch.py FOLDER [--jobs 2] [--timeout 20] [--seed 1]

FOLDER holds ``<assignment>/*.ipynb`` (``batches.mixed``). One process imports torch and grades
each assignment's solution once (the first calls and lazy imports paid, as a zygote pays
them); then each notebook is graded in a fork of it, ``--jobs`` at a time: its code cells and
every hidden check in that one process (``floor.py``'s ``one_notebook``: the tests' own
in-process helpers), no namespaces, no second process, no wire, nothing written. A fork still
past ``--timeout`` seconds is killed, as every mode stops the notebook that never finishes.

The fork is the least a batch needs (one notebook's state, its monkey-patches and its
globals, must not reach the next), so the wall time of this run is what grading the batch
costs before any isolation: ``throughput.py`` prints it beside stock ``otter grade`` and each
mode of ours at the same N. Prints one JSON line: notebooks, seconds, how many were killed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floor import ASSIGNMENTS, one_notebook  # noqa: E402 - the floor's own grading of one


def _grade_in_child(assignment: str, path: Path, seed: int) -> None:
    """In the forked child: grade ``path``, then leave at once (no interpreter teardown)."""
    status = 0
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)  # what the cells print, as in a worker: nowhere
        one_notebook(assignment, nbformat.read(path, as_version=4), seed)
    except BaseException:  # noqa: BLE001 - a notebook may raise anything, even SystemExit
        status = 1
    finally:
        os._exit(status)


def grade_batch(folder: Path, jobs: int, timeout: float, seed: int) -> dict:
    import torch

    from notebooks import solution

    torch.set_num_threads(1)  # each fork one thread, as every worker of ours
    for assignment in ASSIGNMENTS:
        one_notebook(assignment, solution(assignment), seed)  # warm-up, before any clock
    queue = [(a, p) for a in ASSIGNMENTS for p in sorted((folder / a).glob("*.ipynb"))]
    running: dict[int, float] = {}
    killed = 0
    start = time.monotonic()
    while queue or running:
        while queue and len(running) < jobs:
            assignment, path = queue.pop(0)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                _grade_in_child(assignment, path, seed)
            running[pid] = time.monotonic()
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid:
            running.pop(pid, None)
            continue
        now = time.monotonic()
        for late in [p for p, began in running.items() if now - began > timeout]:
            os.kill(late, signal.SIGKILL)
            os.waitpid(late, 0)
            running.pop(late)
            killed += 1
        time.sleep(0.002)
    return {"notebooks": sum(1 for _ in folder.rglob("*.ipynb")),
            "seconds": round(time.monotonic() - start, 2), "killed": killed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(json.dumps(grade_batch(args.folder, args.jobs, args.timeout, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
