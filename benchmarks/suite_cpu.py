"""Where the test suite's CPU goes, per test and per file: the suite is CPU-bound on 2 cores
(its wall time is about its CPU-seconds over 2), so a cut is found and shown in CPU-seconds,
which another job on the machine moves less than wall time.

    PYTHONPATH=benchmarks SUITE_CPU_OUT=build/suite-cpu PYTEST_ADDOPTS="-p suite_cpu" make test
    python benchmarks/suite_cpu.py build/suite-cpu [TOP]

As a pytest plugin it writes one JSON line per test (per xdist worker): its wall span, its
process's own CPU, the CPU of the children it reaped meanwhile (the CLI runs, pip, otter), and
the Docker containers' CPU over its span (cgroup v1's ``cpuacct``, as on these machines). The
summary gives each test its own and children's CPU plus the containers' CPU split evenly
between the tests that overlapped it. Two blind spots: a process reaped later (a zygote a
fixture keeps) lands on the test that reaps it, and the engine's own daemons are counted
nowhere.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

DOCKER_CPU = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
_spans: dict[str, tuple[float, float, float, float]] = {}
_out = None


def _cpu() -> tuple[float, float]:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _docker() -> float:
    try:
        return int(DOCKER_CPU.read_text()) / 1e9
    except (OSError, ValueError):
        return 0.0


def pytest_configure(config) -> None:
    global _out
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # the xdist controller: it runs no test
    folder = Path(os.environ.get("SUITE_CPU_OUT", "build/suite-cpu"))
    folder.mkdir(parents=True, exist_ok=True)
    _out = open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a",
                buffering=1)


def pytest_runtest_logstart(nodeid: str, location) -> None:
    if _out is not None:
        _spans[nodeid] = (time.time(), *_cpu(), _docker())


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    if _out is None or nodeid not in _spans:
        return
    t0, own0, children0, docker0 = _spans.pop(nodeid)
    own, children = _cpu()
    _out.write(json.dumps({"id": nodeid, "t0": t0, "t1": time.time(), "own": own - own0,
                           "children": children - children0,
                           "docker": _docker() - docker0}) + "\n")


def summary(folder: Path, top: int = 30) -> str:
    rows = [json.loads(line) | {"worker": f.stem}
            for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]
    if not rows:
        return f"no records in {folder}"
    per_test, per_file = [], defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for r in rows:
        overlapping = 1 + sum(1 for o in rows if o["worker"] != r["worker"]
                              and o["t0"] < r["t1"] and o["t1"] > r["t0"])
        docker = r["docker"] / min(overlapping, 2)  # two xdist workers at most
        cpu = r["own"] + r["children"] + docker
        per_test.append((cpu, r["t1"] - r["t0"], r["own"] + r["children"], docker, r["id"]))
        total = per_file[r["id"].split("::")[0]]
        for i, v in enumerate((cpu, r["t1"] - r["t0"], r["own"] + r["children"], docker)):
            total[i] += v
    span = max(r["t1"] for r in rows) - min(r["t0"] for r in rows)
    lines = [f"{len(rows)} tests, {span:.0f} s from the first test's start to the last one's end, "
             f"{sum(t[0] for t in per_test):.0f} CPU-s attributed", "",
             "| file | CPU-s | wall s (summed) | own + children | containers |",
             "|---|---|---|---|---|"]
    lines += [f"| {name} | {v[0]:.1f} | {v[1]:.1f} | {v[2]:.1f} | {v[3]:.1f} |"
              for name, v in sorted(per_file.items(), key=lambda kv: -kv[1][0])[:top]]
    lines += ["", "| test | CPU-s | wall s | own + children | containers |", "|---|---|---|---|---|"]
    lines += [f"| {t[4][:140]} | {t[0]:.1f} | {t[1]:.1f} | {t[2]:.1f} | {t[3]:.1f} |"
              for t in sorted(per_test, reverse=True)[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30))
