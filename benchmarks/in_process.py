"""The sealed judge's wire without the wall: the judge's ``RemoteNamespace`` and checks over a
``Worker`` in this process, every request and reply still through ``json.dumps``/``loads``, on
the solution notebooks. What it costs beyond ``floor.py`` is the protocol and the wire alone
(no fork, confinement or pipes); ``--profile`` writes a cProfile file per assignment for
``pstats`` (the worker's ``Worker.call`` and its callees, the judge's ``RemoteFunction``).

    .venv/bin/python benchmarks/in_process.py [--n 10] [--assignment autograd-exercises]
                                              [--profile DIR]

Needs the autograder zips under ``build/`` (``make assign``); no root.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import notebooks  # noqa: E402 - the tests' notebook helpers
from autograder.running.judge import core  # noqa: E402
from autograder.running.judge.namespace import RemoteNamespace  # noqa: E402
from autograder.running.judge.tests_zip import load_tests  # noqa: E402
from autograder.running.limits import Limits  # noqa: E402
from autograder.worker.main import Worker, _handle, _handled  # noqa: E402

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
LIMITS = core.grading_limits(Limits(call_timeout=30, submission_timeout=300))


def _json(x: object) -> object:
    return json.loads(json.dumps(x, allow_nan=False))


class Client:
    """``WorkerClient``'s ``request`` and ``stream`` over a ``Worker`` in this process."""

    limits = LIMITS

    def __init__(self) -> None:
        self.worker = Worker(ask=lambda question: _json(self.answer(_json(question))))
        self.answer = None

    def request(self, message: dict, timeout: float, answer=None, step: str = "") -> dict:
        self.answer, message = answer, _json(message)
        return _json(_handled(lambda: _handle(self.worker, message)))

    def stream(self, message: dict, count: int, timeout: float, step: str = ""):
        message = _json(message)
        if message["op"] == "run_cells":
            for entry in self.worker.each_cell(message["cells"]):
                yield _json({"ok": [entry]})
        else:
            for name in message["names"]:
                yield _json(_handled(lambda name=name: self.worker.lookup(name)))


class Session:
    """What ``core.run_test`` needs of a session: the namespace, the cells run once."""

    def __init__(self, cells: list) -> None:
        client = Client()
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            list(client.stream({"op": "run_cells", "cells": cells}, len(cells), 10))
        self.env = RemoteNamespace(client)

    def ensure(self) -> RemoteNamespace:
        return self.env


def grade(cells: list, tests: list, seed: int) -> None:
    session = Session(cells)
    failed = [o.name for o in (core.run_test(spec, session, seed) for spec in tests)
              if not o.passed]
    if failed:
        raise SystemExit(f"the solution failed {failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10, help="notebooks per assignment (10)")
    parser.add_argument("--assignment", choices=ASSIGNMENTS, action="append")
    parser.add_argument("--profile", type=Path, help="a folder for the cProfile files")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    for assignment in args.assignment or ASSIGNMENTS:
        tests = load_tests(ROOT / "build" / assignment / f"{assignment}-autograder.zip")
        nb = notebooks.solution(assignment)
        cells = [[i, c.source] for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        grade(cells, tests, 1)  # warm-up
        profile = cProfile.Profile() if args.profile else None
        cpu = time.process_time()
        with profile or contextlib.nullcontext():
            for i in range(args.n):
                grade(cells, tests, 2 + i)
        print(f"{assignment}: {1000 * (time.process_time() - cpu) / args.n:.1f} ms cpu per "
              f"notebook, in-process")
        if profile:
            args.profile.mkdir(parents=True, exist_ok=True)
            profile.dump_stats(args.profile / f"{assignment}.prof")


if __name__ == "__main__":
    main()
