"""Throughput benchmark: grade one batch of submissions with stock `otter grade` and with each
of our modes, side by side in one run, and print ratios (not absolute times: these machines
are noisy, so only figures measured in the same run are compared).

    python benchmarks/throughput.py [--n 60] [--scale 10,60,300]
                                    [--modes stock,local,docker-fork,docker]

The batch (``--n``, split evenly between the two assignments, drawn with ``--seed``):
correct notebooks, notebooks with one of the project's own wrong variants
(tests/files/variants), notebooks whose answer cell crashes, and one that never finishes (a
top-level ``while True``), which every mode must stop at ``--timeout`` seconds.

Modes:
  stock   stock `otter grade` (otter's own in-kernel execution, one container per
          submission, `--containers JOBS`) on the offline prebuilt base of
          benchmarks/stock-otter/ (Debian python3 + torch + otter-grader from our
          wheelhouse, plus our package: the hidden tests import it), the zip's setup files
          rewritten by that recipe, through the labelled buildx shim (docker/otter_grade_legacy.py).
  local   `autograder grade --runner sealed`: the judge in one process, each submission's
          code in a worker forked from a torch-loaded zygote, in its own namespaces, as its own
          unprivileged uid (needs root).
  docker-fork  `autograder grade --runner docker-fork`: a fresh container of
          autograder-grader:cpu per submission, holding only that student's worker, forked
          from one judge container's torch-loaded zygote (containers started ahead of need).
  docker  `autograder grade --runner docker`: one container of autograder-grader:cpu per
          submission with the judge inside it (containers started ahead of need).

Also: peak extra memory in use on the machine during each run (MemTotal - MemAvailable,
sampled every 0.1 s, minus the level before the run), the image sizes, and with ``--scale``
the time of our modes for several batch sizes (it should grow linearly).

Writes benchmarks/results/<date>-throughput.json and .md (``--record``) and prints the table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import notebooks  # noqa: E402 - the tests' notebook helpers (variants, answer cells)

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
STOCK = ROOT / "benchmarks" / "stock-otter"  # the offline stock-otter recipe (its README)
BENCH = ROOT / "build" / "bench"
STOCK_BASE = "bench-otter-offline:7.0.0-torch2.13-cpu"
OUR_IMAGE = os.environ.get("AUTOGRADER_IMAGE", "autograder-grader") + ":cpu"
PY = sys.executable
AUTOGRADER = [PY, "-m", "autograder"]


# -- the batch -------------------------------------------------------------------------------
def make_batch(n: int, seed: int, folder: Path) -> dict[str, list[str]]:
    """Write ``n`` notebooks under ``folder/<assignment>/``; return the kind of each."""
    rng = random.Random(seed)
    wrong = [v for v in notebooks.variants() if v.kind == "wrong"]
    kinds: dict[str, list[str]] = {}
    shutil.rmtree(folder, ignore_errors=True)
    for a_index, assignment in enumerate(ASSIGNMENTS):
        count = n // len(ASSIGNMENTS) + (1 if a_index < n % len(ASSIGNMENTS) else 0)
        (folder / assignment).mkdir(parents=True)
        solution = notebooks.solution(assignment)
        questions = sorted(notebooks.answer_cells(solution))
        mine = [v for v in wrong if v.assignment == assignment]
        timeout_at = rng.randrange(count) if a_index == 0 else -1
        for i in range(count):
            roll = rng.random()
            if i == timeout_at:
                kind, nb = "timeout", notebooks.with_answer(
                    solution, rng.choice(questions), "while True:\n    pass\n")
            elif roll < 0.4:
                kind, nb = "correct", solution
            elif roll < 0.85:
                variant = rng.choice(mine)
                kind, nb = "wrong", notebooks.with_answer(solution, variant.question,
                                                          variant.source)
            else:
                kind, nb = "crash", notebooks.with_answer(
                    solution, rng.choice(questions),
                    "raise RuntimeError('a bug in the answer cell')\n")
            name = f"s{rng.randrange(10**6):06d}-{i:03d}.ipynb"
            nbformat.write(nb, folder / assignment / name)
            kinds.setdefault(kind, []).append(f"{assignment}/{name}")
    return kinds


# -- measuring -------------------------------------------------------------------------------
def used_memory() -> int:
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = int(value.split()[0]) * 1024
    return info["MemTotal"] - info["MemAvailable"]


def timed(command: list[str], log: Path, cwd: Path = ROOT, env: dict | None = None,
          check: bool = True) -> dict:
    """Run ``command``; its wall time and the peak extra memory in use meanwhile."""
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


def engine():
    import docker

    client = docker.from_env(timeout=600)
    client.ping()
    return client


def image_size_mb(client, tag: str) -> int | None:
    try:
        return round(client.images.get(tag).attrs["Size"] / 1e6)
    except Exception:  # noqa: BLE001
        return None


# -- stock otter grade on the offline base ----------------------------------------------------
def stock_base(client) -> None:
    """The offline stock-otter base (Debian python3, torch, otter-grader from our wheelhouse)
    plus our package, which the hidden tests import. Built once (cached by the engine)."""
    sys.path.insert(0, str(ROOT / "docker"))
    import build_image

    context = BENCH / "stock-base"
    shutil.rmtree(context, ignore_errors=True)
    build_image.link_wheelhouse("cpu", context)
    shutil.copy2(STOCK / "requirements.lock", context / "requirements.lock")
    build_image.our_wheel(context / "app")
    dockerfile = (STOCK / "Dockerfile").read_text()
    dockerfile += ("\n# benchmark only: the hidden tests import our package\n"
                   "COPY app /tmp/app\n"
                   "RUN /opt/otter-env/bin/pip install --no-cache-dir --no-index --no-deps "
                   "/tmp/app/*.whl && rm -rf /tmp/app\n")
    (context / "Dockerfile").write_text(dockerfile)
    build_image.base_image(client)
    for chunk in client.api.build(path=str(context), tag=STOCK_BASE, rm=True, forcerm=True,
                                  decode=True):
        if "error" in chunk:
            raise SystemExit(f"stock base build failed: {chunk['error']}")


def patched_zip(assignment: str) -> Path:
    """The stock-otter recipe's rewrite of our otter zip's setup files (no conda, no downloads)."""
    source = ROOT / "build" / assignment / f"{assignment}-autograder.zip"
    target = BENCH / f"{assignment}-offline.zip"
    subprocess.run([PY, str(STOCK / "patch_autograder_zip.py"), str(source), str(target)],
                   check=True, stdout=subprocess.DEVNULL)
    with zipfile.ZipFile(target, "a") as zf:
        if not any(n.startswith("files/") for n in zf.namelist()):
            # otter's Dockerfile has `ADD files* ...`: the classic builder (no buildx here)
            # fails when nothing matches, BuildKit does not; an empty placeholder either way
            zf.writestr("files/.keep", "")
    return target


def run_stock(batch: Path, out: Path, jobs: int, timeout: int, logs: Path, tag: str = "") -> dict:
    """One `otter grade` per assignment (otter grades one zip at a time), times summed."""
    total = {"seconds": 0.0, "peak_extra_memory_mb": 0}
    for assignment in ASSIGNMENTS:
        files = sorted(str(p) for p in (batch / assignment).glob("*.ipynb"))
        (out / assignment).mkdir(parents=True, exist_ok=True)
        result = timed([PY, str(ROOT / "docker" / "otter_grade_legacy.py"), "grade",
                        "-n", f"bench-{assignment}", "-a", str(patched_zip(assignment)),
                        "--image", STOCK_BASE, "--containers", str(jobs),
                        "--timeout", str(timeout), "-o", str(out / assignment), *files],
                       logs / f"stock-{assignment}{tag}.log", check=False)
        if not (out / assignment / "final_grades.csv").exists():
            tail = (logs / f"stock-{assignment}{tag}.log").read_text(errors="replace")[-2000:]
            raise SystemExit(f"otter grade wrote no final_grades.csv for {assignment}:\n{tail}")
        total["seconds"] += result["seconds"]
        total["peak_extra_memory_mb"] = max(total["peak_extra_memory_mb"],
                                            result["peak_extra_memory_mb"])
    total["seconds"] = round(total["seconds"], 2)
    return total


def run_ours(runner: str, batch: Path, out: Path, jobs: int, timeout: int, logs: Path,
             tag: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    return timed([*AUTOGRADER, "grade", "-p", str(batch), "-o", str(out), "--runner", runner,
                  "--jobs", str(jobs), "--seed", "1", "--submission-timeout", str(timeout),
                  "--timeout", str(timeout)], logs / f"{tag}.log")


def scores(out: Path) -> dict[str, float]:
    """file -> total points, from each assignment's final_grades.csv (to check that the
    modes agree on the batch)."""
    import csv

    found = {}
    for assignment in ASSIGNMENTS:
        path = out / assignment / "final_grades.csv"
        if not path.exists():
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["file"] and row["file"] != "POSSIBLE":
                    name = Path(row["file"]).name
                    found[f"{assignment}/{name}"] = float(row["total_points_earned"] or 0)
    return found


# -- reporting -------------------------------------------------------------------------------
def table(record: dict) -> str:
    lines = ["| mode | N | seconds | s / submission | ratio vs stock (same N) | peak extra memory |",
             "|---|---|---|---|---|---|"]
    stock = {r["n"]: r["seconds"] for r in record["runs"] if r["mode"] == "stock"}
    for r in sorted(record["runs"], key=lambda r: (r["n"], r["mode"] != "stock", r["mode"])):
        ratio = f"{stock[r['n']] / r['seconds']:.1f}x" if r["n"] in stock else "-"
        lines.append(f"| {r['mode']} | {r['n']} | {r['seconds']:.1f} | "
                     f"{r['seconds'] / r['n']:.3f} | {ratio} | {r['peak_extra_memory_mb']} MB |")
    lines += ["", "images: " + ", ".join(f"{k} {v} MB" for k, v in record["images"].items())]
    return "\n".join(lines)


def run_mode(mode: str, batch: Path, n: int, args, logs: Path) -> dict:
    out = BENCH / f"out-{mode}-{n}"
    shutil.rmtree(out, ignore_errors=True)
    print(f"grading {n} with {mode} ...", flush=True)
    if mode == "stock":
        row = run_stock(batch, out, args.jobs, args.timeout, logs, tag=str(n))
    else:
        runner = {"local": "sealed"}.get(mode, mode)
        row = run_ours(runner, batch, out, args.jobs, args.timeout, logs, f"{mode}-{n}")
    print(f"  {row}", flush=True)
    return {"mode": mode, "n": n, **row, "scores": scores(out)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", default="60",
                        help="batch sizes graded by every mode, side by side (e.g. 60,300)")
    parser.add_argument("--modes", default="stock,local,docker-fork,docker")
    parser.add_argument("--scale", default="",
                        help="more batch sizes for our modes only, e.g. 10,60,300")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=10,
                        help="per-submission time limit for every mode (seconds)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/<date>-throughput.{json,md}")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    compared = [int(x) for x in args.n.split(",") if x]
    ours_only = [int(x) for x in args.scale.split(",") if x and int(x) not in compared]
    BENCH.mkdir(parents=True, exist_ok=True)
    logs = BENCH / "logs"
    logs.mkdir(exist_ok=True)
    if not all((ROOT / "build" / a / f"{a}-autograder.zip").exists() for a in ASSIGNMENTS):
        subprocess.run([*AUTOGRADER, "assign"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    client = engine() if {"stock", "docker", "docker-fork"} & set(modes) else None
    if "stock" in modes:
        print("building the offline stock base (cached after the first run) ...", flush=True)
        stock_base(client)
    record: dict = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "kernel": os.uname().release},
        "jobs": args.jobs, "timeout_s": args.timeout, "seed": args.seed,
        "batches": {}, "runs": [], "agree": {}, "images": {},
    }
    for n in sorted(compared + ours_only):
        batch = BENCH / f"batch-{n}"
        kinds = make_batch(n, args.seed, batch)
        record["batches"][n] = {k: len(v) for k, v in kinds.items()}
        for mode in modes:
            if mode == "stock" and n not in compared:
                continue
            record["runs"].append(run_mode(mode, batch, n, args, logs))
        ours = {r["mode"]: r.pop("scores") for r in record["runs"] if r["n"] == n}
        if "local" in ours:  # same seed: same points in every mode of ours
            record["agree"][n] = all(v == ours["local"] for k, v in ours.items()
                                     if k != "stock")
        shutil.rmtree(batch, ignore_errors=True)
    if client is not None:
        record["images"] = {OUR_IMAGE: image_size_mb(client, OUR_IMAGE),
                            STOCK_BASE: image_size_mb(client, STOCK_BASE)}
    text = table(record)
    print(text)
    print(json.dumps(record, indent=2))
    if args.record:
        folder = ROOT / "benchmarks" / "results"
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{record['date'][:10]}-throughput"
        stem.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
        stem.with_suffix(".md").write_text(f"# Throughput, {record['date']}\n\n"
                                           f"batches: {record['batches']}\n\n{text}\n")
        print(f"wrote {stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
