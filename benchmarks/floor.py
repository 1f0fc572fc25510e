"""The floor a grading mode is measured against: one solution notebook's code cells plus every
hidden check of its assignment, in one process with no isolation (the tests' own in-process
helpers: ``tests/notebooks.namespace`` and ``harness.run_check``), torch already imported.

    python benchmarks/floor.py [--runs 7] [--seed 1]

prints one JSON object: per assignment, the seconds of each run (after one warm-up), their
median and worst, the median CPU seconds, and how many checks ran and failed (none may fail: it is the solution).
``throughput.py`` runs it in its own process, in the same run as every mode, so that the floor
and the modes are measured on the same machine at the same time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")


def one_notebook(assignment: str, nb, seed: int) -> tuple[float, float, int, int]:
    """Wall and CPU seconds to run ``nb``'s code cells (their output kept, as a kernel keeps
    it) and every hidden check once; the checks run, and failed."""
    from autograder.checks import all_checks
    from autograder.harness import run_check
    from notebooks import namespace

    start, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        env = namespace(nb)
    results = [run_check(env, assignment, key, seed) for key in all_checks()[assignment]]
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    return took, cpu, len(results), sum(not r.passed for r in results)


def measure(runs: int = 7, seed: int = 1) -> dict:
    """Per assignment: the floor's seconds per correct notebook (median and worst of ``runs``
    after one warm-up), and the checks it ran."""
    import torch  # imported once, before any clock starts (a zygote's state)

    # one intra-op thread, as every grading mode runs each submission (workers, containers,
    # the judge): a floor on a thread per CPU would measure torch's parallelism, not isolation
    torch.set_num_threads(1)

    from notebooks import solution

    found = {}
    for assignment in ASSIGNMENTS:
        nb = solution(assignment)
        one_notebook(assignment, nb, seed)  # warm-up: first calls, lazy imports
        samples, cpu, checks, failed = [], [], 0, 0
        for _ in range(runs):
            took, cpu_now, checks, failed_now = one_notebook(assignment, nb, seed)
            samples.append(round(took, 4))
            cpu.append(cpu_now)
            failed = max(failed, failed_now)
        found[assignment] = {"median_s": round(statistics.median(samples), 4),
                             "worst_s": max(samples), "samples": samples,
                             "median_cpu_s": round(statistics.median(cpu), 4),
                             "checks": checks, "failed_checks": failed}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.runs, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
