"""How fast the disk budget of the ``container`` confinement stops a flood, and by how much it
overshoots (``running/judge/disk_budget.py``; figures in docs/confinement.md).

    sudo .venv/bin/python benchmarks/disk_flood.py [--mib 1024] [--files 100000] [--processes 8]

Needs root (a confined worker under a leased uid). Writes into the worker's working folder
(a scratch folder in /tmp here) up to the budget plus what one poll lets through, then the
judge deletes it: keep ``--mib`` well under the free space of /tmp's disk.

Three floods, each in a fresh worker: one process writing files of 64 MiB as fast as it can;
``--processes`` processes doing the same; one process creating empty files. For each: how long
from the request to the worker's loss (the count of its files and their deletion included),
the growth the judge saw when it stopped it, and how long the deletion took.
"""

from __future__ import annotations

import argparse
import time

from autograder.checks.calling import WorkerLost
from autograder.running.judge import uids
from autograder.running.judge.worker_client import WorkerClient
from autograder.running.limits import Limits

BIG = """
import os
for k in range({forks}):
    if os.fork() == 0:
        break
chunk = b"x" * 2**20
i = 0
while True:
    with open(f"big-{{os.getpid()}}-{{i}}", "wb") as f:
        for _ in range(64):
            f.write(chunk)
    i += 1
"""
SMALL = """
import os
os.mkdir("many")
i = 0
while True:
    open(f"many/{i}", "w").close()
    i += 1
"""


def flood(source: str, limits: Limits) -> None:
    with uids.lease() as uid:
        client = WorkerClient(uid, limits)
        cleaned: list[float] = []
        clean = client.disk.clean

        def timed_clean():
            start = time.monotonic()
            try:
                return clean()
            finally:
                cleaned.append(time.monotonic() - start)

        client.disk.clean = timed_clean
        start = time.monotonic()
        try:
            list(client.stream({"op": "run_cells", "cells": [[0, source]]}, 1, 120))
            why = "not stopped"
        except WorkerLost as exc:
            why = str(exc).split(" (")[0]
        stopped = time.monotonic() - start
        client.close()
        grown = client.disk.peak
        print(f"  stopped after {stopped:.2f} s at {grown[0] / 2**20:,.0f} MiB and "
              f"{grown[1]:,} files of growth; deleting took {cleaned[0]:.2f} s: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="the byte budget, in MiB")
    parser.add_argument("--files", type=int, default=100_000, help="the file budget")
    parser.add_argument("--processes", type=int, default=8)
    args = parser.parse_args()
    limits = Limits(confinement="container", disk_bytes=args.mib * 2**20,
                    disk_files=args.files, cell_timeout=120)
    print(f"budget {args.mib} MiB, {args.files:,} files")
    print("one process writing 64 MiB files:")
    flood(BIG.format(forks=0), limits)
    print(f"{args.processes} processes writing 64 MiB files:")
    flood(BIG.format(forks=args.processes - 1), limits)
    print("one process creating empty files:")
    flood(SMALL, limits)


if __name__ == "__main__":
    main()
