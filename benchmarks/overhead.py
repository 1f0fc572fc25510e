"""What the sealed runner's isolation costs per submission: the floor (a solution notebook's
code cells and every hidden check in this process, no isolation) against the sealed judge at
``--jobs 1`` (each notebook's code in a worker forked from the zygote), on the solution
notebooks, with the sealed run split into phases.

    sudo .venv/bin/python benchmarks/overhead.py [--n 10] [--assignment autograd-porting]
                                                 [--phases]

Needs root (the sealed judge) and the autograder zips under ``build/`` (``make assign``).
Times are CPU seconds of the whole process tree (this process, its reaped children, the zygote
and the workers it reaped: ``/proc/<zygote>/stat``), which a shared, loaded machine leaves far
steadier than wall time; wall time is printed beside them.

With ``--phases``, a second sealed pass splits the time into phases, from timers wrapped
around the judge's own functions here (nothing in the package is changed; the timers add a
little host CPU of their own, so the totals are taken without them): per phase the judge's main-thread CPU (``host``), the worker's CPU
(``worker``, from ``/proc/<worker>/schedstat``) and the wall time. Nested phases are shown
indented under the phase they belong to; the worker's confinement is its CPU from the fork to
its first line. The spawn phases run beside the previous submission (``spares``), off the
judge's path.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import notebooks  # noqa: E402 - the tests' notebook helpers
from autograder.harness import collecting  # noqa: E402
from autograder.running.judge import cgroups, core, namespace, remote, uids, zygote, zygotes  # noqa: E402
from autograder.running.judge.spares import Spares  # noqa: E402
from autograder.running.judge.tests_zip import load_tests  # noqa: E402
from autograder.running.judge.worker_client import WorkerClient  # noqa: E402
from autograder.running.limits import Limits  # noqa: E402

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
LIMITS = Limits(call_timeout=30, submission_timeout=300)
TICK = os.sysconf("SC_CLK_TCK")

#: (phase, owner, function name, nested under): the seams timed in the sealed run
PHASES = [
    ("judge", core, "judge", None),
    ("spawn: zygote forks", zygote.Zygote, "spawn", None),
    ("spawn: cgroup + read-back", cgroups, "place", None),
    ("cells", core.Session, "_run_cells", "judge"),
    ("checks (run_test)", core, "run_test", "judge"),
    ("calls", remote.RemoteFunction, "__call__", "checks (run_test)"),
    ("lookups", namespace.RemoteNamespace, "_fetch", "checks (run_test)"),
    ("request round trips", WorkerClient, "request", None),
    ("encode (judge)", remote.wire, "encode", None),
    ("decode (judge)", remote.wire, "decode", None),
    ("decode tensors (judge)", remote.wire, "decode_tensor", None),
    ("mirror arguments", remote, "mirror_arguments", None),
    ("close: kill, reap, cgroup", WorkerClient, "close", "judge"),
    ("lease: kill_uid", uids, "kill_uid", None),
]


def process_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and of the children it reaped."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / TICK


def on_cpu(pid: int | None) -> float:
    """Seconds ``pid`` has run (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, TypeError):
        return 0.0


def _worker_pid(owner) -> int | None:
    """The worker a timed method talks to: its own (``WorkerClient``) or its client's."""
    client = owner if isinstance(owner, WorkerClient) else getattr(owner, "client", None)
    proc = getattr(client, "proc", None)
    return proc.pid if proc is not None else None


class Timers:
    """Host CPU, worker CPU, wall time and count per phase."""

    def __init__(self) -> None:
        self.host, self.worker, self.wall = (collections.defaultdict(float) for _ in range(3))
        self.count: collections.Counter = collections.Counter()
        self.originals: list[tuple] = []

    def wrap(self, phase: str, owner, name: str) -> None:
        original = getattr(owner, name)
        self.originals.append((owner, name, original))

        def timed(*args, **kwargs):
            pid = _worker_pid(args[0]) if args else None
            host, wall, worker = time.thread_time(), time.perf_counter(), on_cpu(pid)
            try:
                return original(*args, **kwargs)
            finally:
                self.host[phase] += time.thread_time() - host
                self.wall[phase] += time.perf_counter() - wall
                self.worker[phase] += max(on_cpu(pid) - worker, 0.0) if pid else 0.0
                self.count[phase] += 1

        setattr(owner, name, timed)

    def install(self) -> None:
        for phase, owner, name, _ in PHASES:
            self.wrap(phase, owner, name)
        confined = WorkerClient._confined
        self.originals.append((WorkerClient, "_confined", confined))

        def hello(client: WorkerClient) -> None:
            confined(client)
            self.worker["spawn: worker confines itself"] += on_cpu(client.proc.pid)

        WorkerClient._confined = hello

    def uninstall(self) -> None:
        for owner, name, original in reversed(self.originals):
            setattr(owner, name, original)
        self.originals.clear()

    def clear(self) -> None:
        for table in (self.host, self.worker, self.wall, self.count):
            table.clear()


def floor(assignment: str, n: int, seed: int) -> tuple[float, float]:
    """CPU and wall seconds per notebook: cells and every hidden check, in this process."""
    tests = load_tests(ROOT / "build" / assignment / f"{assignment}-autograder.zip")
    nb = notebooks.solution(assignment)

    def once(s: int) -> None:
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            env = notebooks.namespace(nb)  # what the cells print goes nowhere, as in a worker
        with collecting(s):
            for spec in tests:
                spec.body.call_func(env)

    once(seed)
    cpu, wall = process_cpu(), time.perf_counter()
    for i in range(n):
        once(seed + 1 + i)
    return (process_cpu() - cpu) / n, (time.perf_counter() - wall) / n


def sealed(assignment: str, n: int, seed: int, timers: Timers) -> tuple[float, float]:
    """CPU (judge, zygote and workers) and wall seconds per notebook through the sealed judge."""
    tests = load_tests(ROOT / "build" / assignment / f"{assignment}-autograder.zip")
    path = ROOT / "solutions" / f"{assignment}.ipynb"
    spares = Spares(core.grading_limits(LIMITS))

    def once(s: int) -> None:
        with spares.take() as slot:  # as the sealed runner does
            doc = core.judge(path, path.name, assignment, tests, seed=s, uid=slot.uid,
                             limits=LIMITS, worker=slot.worker, later=slot.later)
        if doc.status != "graded":
            raise SystemExit(f"{assignment}: {doc.status}: {doc.error}")

    once(seed)
    timers.clear()
    pid = zygotes.shared(LIMITS.confinement).pid
    cpu, zcpu, wall = process_cpu(), tree_cpu(pid), time.perf_counter()
    for i in range(n):
        once(seed + 1 + i)
    elapsed = time.perf_counter() - wall
    spares.close()  # its worker's exit is counted: one spare for the n notebooks' last
    total = process_cpu() - cpu + tree_cpu(pid) - zcpu
    return total / n, elapsed / n


def report(timers: Timers, n: int) -> None:
    parents = {phase: parent for phase, _, _, parent in PHASES}
    print(f"    {'phase (ms per submission)':38s} {'host':>7s} {'worker':>7s} {'wall':>7s} "
          f"{'calls':>6s}")
    phases = [p for p, *_ in PHASES] + ["spawn: worker confines itself"]
    for phase in phases:
        depth, up = 0, parents.get(phase)
        while up:
            depth, up = depth + 1, parents.get(up)
        print(f"    {'  ' * depth + phase:38s} {1000 * timers.host[phase] / n:7.1f} "
              f"{1000 * timers.worker[phase] / n:7.1f} {1000 * timers.wall[phase] / n:7.1f} "
              f"{timers.count[phase] / n:6.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10, help="notebooks per assignment (10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--assignment", choices=ASSIGNMENTS, action="append")
    parser.add_argument("--phases", action="store_true", help="also the per-phase breakdown")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the sealed judge needs root")
    import torch

    torch.set_num_threads(1)
    timers = Timers()
    sums = collections.Counter()
    for assignment in args.assignment or ASSIGNMENTS:
        f_cpu, f_wall = floor(assignment, args.n, args.seed)
        s_cpu, s_wall = sealed(assignment, args.n, args.seed, timers)
        sums.update(floor=f_cpu, sealed=s_cpu)
        print(f"{assignment}: floor {1000 * f_cpu:.0f} ms cpu ({1000 * f_wall:.0f} wall), "
              f"sealed {1000 * s_cpu:.0f} ms cpu ({1000 * s_wall:.0f} wall): "
              f"{s_cpu / f_cpu:.2f}x, {1000 * (s_cpu - f_cpu):.0f} ms of isolation")
        if args.phases:
            timers.install()
            sealed(assignment, args.n, args.seed, timers)
            timers.uninstall()
            report(timers, args.n)
    print(f"mean over assignments: {sums['sealed'] / sums['floor']:.2f}x the floor (cpu)")


if __name__ == "__main__":
    main()
