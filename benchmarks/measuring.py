"""How ``throughput.py`` measures one command: its wall time and the peak extra memory in use
on the machine meanwhile; the points each notebook got; the engine and its images."""

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


def timed(command: list[str], log: Path, cwd: Path = ROOT, env: dict | None = None,
          check: bool = True) -> dict:
    """Run ``command``; its wall time and the peak extra memory in use meanwhile (sampled every
    0.1 s, minus the level before the run)."""
    baseline, peak, done = used_memory(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], used_memory() - baseline)

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    with open(log, "w") as out:
        proc = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                              env={**os.environ, **(env or {})})
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    if check and proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(command[:6])} ... exited {proc.returncode}:\n{tail}")
    return {"seconds": round(wall, 2), "peak_extra_memory_mb": round(peak[0] / 2**20)}


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
