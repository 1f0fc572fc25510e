"""How ``throughput.py`` measures one command: its wall time, the peak extra memory in use
on the machine meanwhile and the peak memory of the grading itself (the command's processes
and the containers it started); the points each notebook got; the engine and its images."""

from __future__ import annotations

import csv
import os
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def used_memory() -> int:
    """Bytes in use on the machine: MemTotal - MemAvailable."""
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = int(value.split()[0]) * 1024
    return info["MemTotal"] - info["MemAvailable"]


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    except OSError:  # gone meanwhile
        pass
    return found


def _kib_field(path: str, field: str) -> int:
    """Bytes of the ``field:`` line (in kB) of a ``/proc`` file; 0 when gone meanwhile."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _pss(pid: int) -> int:
    """Bytes of ``pid``'s proportional set size (shared pages split among their sharers: the
    zygote's torch counted once, not once per forked worker)."""
    return _kib_field(f"/proc/{pid}/smaps_rollup", "Pss:")


CONTAINERS = Path("/sys/fs/cgroup/memory/docker")  # cgroup v1, as on these machines


def _containers() -> dict[str, Path]:
    if not CONTAINERS.is_dir():
        return {}
    return {p.name: p for p in CONTAINERS.iterdir() if p.is_dir()}


def _container_rss(group: Path) -> int:
    """A container's anonymous memory (``total_rss``: its processes' own, not the page cache
    of files it read)."""
    try:
        for line in (group / "memory.stat").read_text().splitlines():
            if line.startswith("total_rss "):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rss(pid: int) -> int:
    """Bytes resident for ``pid`` (shared pages counted whole: a zygote's figure does not move
    when it forks a worker, as its PSS would)."""
    return _kib_field(f"/proc/{pid}/status", "VmRSS:")


def _judge_container(client, seen: dict) -> Path | None:
    """The memory cgroup of the run's judge container (``docker-fork``), looked up by its label
    until found: ``None`` for the runners that start none."""
    if "judge" not in seen and client is not None:
        try:
            found = client.containers.list(filters={"label": "autograder-role=judge"})
        except Exception:  # noqa: BLE001 - the engine busy or gone: try at the next sample
            found = []
        if found:
            seen["judge"] = CONTAINERS / found[0].id
    return seen.get("judge")


def long_lived_memory(pid: int, client, seen: dict) -> tuple[int, int, int]:
    """What lives for the whole run, in bytes: the command's own process (the judge, or the
    host's client of a judge container), its direct children (the zygote: a worker is the
    zygote's child, not the judge's), and the judge container's anonymous memory. Flat in N
    means these do not grow with the submissions graded; a worker's or a submission
    container's memory goes with its submission."""
    group = _judge_container(client, seen)
    return (_rss(pid), sum(_rss(child) for child in _children(pid)),
            _container_rss(group) if group is not None else 0)


#: Fractions of a batch graded at which ``memory_in_n`` reads what lives for the whole run:
#: the last short of 100 %, which the sampler often first sees after the reports began
CHECKPOINTS = (0.1, 0.25, 0.45, 0.55, 0.75, 0.99)


def memory_in_n(series: list[list[float]], n: int) -> dict[str, dict[str, int]]:
    """From ``long_lived_memory``'s samples (``[seconds, graded, judge, children, judge
    container]``): those three in MB at the first sample where each of ``CHECKPOINTS`` of the
    ``n`` submissions had their documents written (before the reports, which hold a slim copy
    of every document and draw the figures). Flat in N: a run of 1000 holds near its end what
    a run of 300 holds. The exercises are graded first, then the porting notebooks: compare
    within an assignment (45 % with 10 %, 99 % with 55 %)."""
    found = {}
    for fraction in CHECKPOINTS:
        row = next((r for r in series if r[1] >= fraction * n), None)
        if row is not None:
            found[f"{fraction:.0%}"] = dict(zip(("judge", "children", "judge_container"),
                                                (round(v / 2**20) for v in row[2:])))
    return found


def grading_memory(pid: int, before: set[str]) -> int:
    """Bytes the grading holds: the PSS of ``pid`` and every process below it (the CLI, the
    judge, the zygote, its workers), plus the memory of every container that was not running
    before the command (``before``: their ids), wherever the engine runs them."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += _pss(current)
        todo += _children(current)
    return total + sum(_container_rss(g) for name, g in _containers().items()
                       if name not in before)


def timed(command: list[str], log: Path, cwd: Path = ROOT, env: dict | None = None,
          check: bool = True, client=None, graded=None, n: int = 0) -> dict:
    """Run ``command``; its wall time, the peak extra memory in use on the machine meanwhile
    (minus the level before the run: page cache and other work included), and the peak of
    ``grading_memory`` (sampled every 0.1 s), and ``long_lived_memory`` every 0.5 s beside
    ``graded()`` (how many of the ``n`` submissions have their documents; ``client``: the
    engine, to find a judge container): flat in N is what a batch's size must not move, and a
    peak cannot show it (it depends on which submissions met at its moment)."""
    baseline, peak, done = used_memory(), [0, 0], threading.Event()
    before = set(_containers())
    holder: list[subprocess.Popen] = []
    series: list[list[float]] = []
    seen: dict = {}

    def sample() -> None:
        ticks = 0
        while not done.wait(0.1):
            peak[0] = max(peak[0], used_memory() - baseline)
            if holder:
                peak[1] = max(peak[1], grading_memory(holder[0].pid, before))
                ticks += 1
                if ticks % 5 == 0:
                    series.append([round(time.monotonic() - start, 1),
                                   graded() if graded else 0,
                                   *long_lived_memory(holder[0].pid, client, seen)])

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        holder.append(proc)
        proc.wait()
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    if check and proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(command[:6])} ... exited {proc.returncode}:\n{tail}")
    return {"seconds": round(wall, 2), "peak_extra_memory_mb": round(peak[0] / 2**20),
            "peak_grading_memory_mb": round(peak[1] / 2**20),
            "long_lived_memory_mb": memory_in_n(series, n) if graded else {},
            "long_lived_series": [[t, count, *(round(v / 2**20, 1) for v in rest)]
                                  for t, count, *rest in series]}


def scores(out: Path, assignments: tuple[str, ...]) -> dict[str, float]:
    """``assignment/file`` -> total points, from each assignment's ``final_grades.csv`` (to
    check that the modes agree on the batch)."""
    found = {}
    for assignment in assignments:
        path = out / assignment / "final_grades.csv"
        if not path.exists():
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["file"].endswith(".ipynb"):  # not otter's POSSIBLE, nor our points row
                    name = Path(row["file"]).name
                    found[f"{assignment}/{name}"] = float(row["total_points_earned"] or 0)
    return found


def engine():
    import docker

    client = docker.from_env(timeout=600)
    client.ping()
    return client


def image_size_mb(client, tag: str) -> int | None:
    try:
        return round(client.images.get(tag).attrs["Size"] / 1e6)
    except Exception:  # noqa: BLE001 - not built
        return None
