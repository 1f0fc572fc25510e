"""Throughput benchmark: every figure measured side by side in one run on one machine, and
compared only with figures of that same run (these machines are noisy, and stock `otter grade`
alone varies threefold between machines).

    python benchmarks/throughput.py [--n 300,1000] [--stock-n 300] [--per-submission 10]
                                    [--modes stock,local,docker-fork,docker] [--cold-runs 5]
                                    [--record]

In order:

1. The floor (``benchmarks/floor.py``, its own process): a solution notebook's code cells plus
   every hidden check, in one process with no isolation; seconds per correct notebook, per
   assignment (median and worst of several).
2. Per correct submission, ``--jobs 1``: each isolating mode grades ``--per-submission``
   copies of each assignment's solution, one at a time; the median of the batch's own
   per-submission times (``timings.json``) against the floor. For ``docker-fork`` the next
   container starts while this one is graded, so its start is not on this path.
3. Throughput: each batch of ``--n`` (split evenly between the two assignments, drawn with
   ``--seed``: correct notebooks, ones with one of the project's wrong variants, ones whose
   answer cell crashes, and one that never finishes, stopped at ``--timeout`` seconds by
   every mode) graded by every mode at ``--jobs``; stock `otter grade` only at the sizes in
   ``--stock-n`` (default: every size; stock grades about 5 s a submission at ``--jobs 2`` on
   2 CPUs: N=1000 takes about 80 minutes). Ratios vs
   stock at the same N, the peak extra memory per N (it should stay flat), and whether every
   mode gave every notebook the same points.
4. Cold start: ``benchmarks/cold_start.py``'s ``measure`` for the PrairieLearn and Gradescope
   entry points, each assignment's solution (median and worst of ``--cold-runs``), when that
   module is in the tree.

Modes:
  floor   the batch with no isolation at all (``benchmarks/floor_batch.py``): each notebook's
          cells and every hidden check in a fork of one warmed process, ``--jobs`` at a time;
          the lower bound of any mode that keeps one notebook's state from the next one's.
  stock   stock `otter grade` (otter's own in-kernel execution, one container per submission,
          ``--containers JOBS``) on the offline prebuilt base (benchmarks/stock_otter.py).
  local   `autograder grade --runner sealed`: the judge in one process, each submission's
          code in a worker forked from a torch-loaded zygote, in its own namespaces, as its own
          unprivileged uid (needs root).
  docker-fork  `autograder grade --runner docker-fork`: a fresh container of the CPU image
          per submission, holding only that student's worker, forked from one judge
          container's torch-loaded zygote (containers started ahead of need).
  docker  `autograder grade --runner docker`: one container of the CPU image per submission
          with the judge inside it (containers started ahead of need).

Prints the tables; ``--record`` writes benchmarks/results/<date>-throughput.json and .md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import batches
from measuring import engine, image_size_mb, scores, timed
from record import markdown

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
BENCH = ROOT / "build" / "bench"
OUR_IMAGE = os.environ.get("AUTOGRADER_IMAGE", "autograder-grader") + ":cpu"
PY = sys.executable
AUTOGRADER = [PY, "-m", "autograder"]
ISOLATING = ("local", "docker-fork", "docker")
COLD_ENTRIES = ("prairielearn", "gradescope")


def run_ours(mode: str, batch: Path, out: Path, jobs: int, timeout: int, log: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)

    def graded() -> int:  # documents written so far (the reports come after the last)
        return sum(len(files) for a in ASSIGNMENTS
                   for _, _, files in os.walk(out / a / "results"))

    return timed([*AUTOGRADER, "grade", "-p", str(batch), "-o", str(out),
                  "--runner", {"local": "sealed"}.get(mode, mode), "--jobs", str(jobs),
                  "--seed", "1", "--submission-timeout", str(timeout), "--timeout", str(timeout)],
                 log, client=engine() if mode in ("docker-fork", "docker") else None,
                 graded=graded, n=sum(1 for _ in batch.rglob("*.ipynb")))


def floor(runs: int, logs: Path) -> dict:
    """``floor.py`` in its own process: per assignment, seconds per correct notebook."""
    print("measuring the floor (solution + every hidden check, one process) ...", flush=True)
    proc = subprocess.run([PY, str(ROOT / "benchmarks" / "floor.py"), "--runs", str(runs)],
                          cwd=ROOT, capture_output=True, text=True)
    (logs / "floor.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"floor.py exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"  { {a: f['median_s'] for a, f in found.items()} }", flush=True)
    return found


def per_submission(mode: str, count: int, args, logs: Path, floors: dict) -> list[dict]:
    """``count`` correct notebooks per assignment graded one at a time (``--jobs 1``); the
    median of their per-submission times against that assignment's floor."""
    rows = []
    for assignment in ASSIGNMENTS:
        batch = batches.correct(assignment, count, BENCH / f"correct-{assignment}")
        out = BENCH / f"out-{mode}-jobs1-{assignment}"
        print(f"grading {count} correct {assignment} with {mode}, --jobs 1 ...", flush=True)
        row = run_ours(mode, batch, out, 1, args.timeout, logs / f"{mode}-jobs1-{assignment}.log")
        samples = sorted(json.loads((out / assignment / "timings.json").read_text()).values())
        median = statistics.median(samples)
        rows.append({"mode": mode, "assignment": assignment, "count": count, **row,
                     "median_s": round(median, 3), "worst_s": samples[-1],
                     "samples": samples, "x_floor": round(median / floors[assignment]
                                                          ["median_s"], 2)})
        print(f"  median {median:.3f} s, {rows[-1]['x_floor']}x the floor", flush=True)
        shutil.rmtree(batch, ignore_errors=True)
    return rows


def throughput(mode: str, batch: Path, n: int, args, logs: Path) -> dict:
    out = BENCH / f"out-{mode}-{n}"
    shutil.rmtree(out, ignore_errors=True)
    print(f"grading {n} with {mode} ...", flush=True)
    if mode == "stock":
        from stock_otter import run_stock

        row = run_stock(ASSIGNMENTS, batch, out, args.jobs, args.timeout, logs, tag=str(n))
    elif mode == "floor":  # no isolation, no documents: the time is the figure
        row = timed([PY, str(ROOT / "benchmarks" / "floor_batch.py"), str(batch), "--jobs",
                     str(args.jobs), "--timeout", str(args.timeout)], logs / f"floor-{n}.log")
        print(f"  { {k: v for k, v in row.items() if k != 'long_lived_series'} }", flush=True)
        return {"mode": mode, "n": n, **row, "scores": None}
    else:
        row = run_ours(mode, batch, out, args.jobs, args.timeout, logs / f"{mode}-{n}.log")
    print(f"  { {k: v for k, v in row.items() if k != 'long_lived_series'} }", flush=True)
    return {"mode": mode, "n": n, **row, "scores": scores(out, ASSIGNMENTS)}


def agreement(graded: dict[str, dict[str, float]]) -> dict:
    """Whether our modes gave every notebook the same points, and stock too; the points of
    each notebook they did not agree on (a loaded machine can time a notebook out in one mode:
    its row says so)."""
    ours = [v for k, v in graded.items() if k != "stock"]
    files = sorted(set().union(*graded.values())) if graded else []
    differ = {f: {mode: points.get(f) for mode, points in graded.items()} for f in files
              if len({points.get(f) for points in graded.values()}) > 1}
    return {"ours": all(v == ours[0] for v in ours) if ours else None,
            "stock": all(v == graded["stock"] for v in ours) if ours and "stock" in graded
            else None, "differ": differ}


def cold_starts(runs: int) -> dict:
    """``benchmarks/cold_start.py``'s figures for each entry point, or why there are none."""
    try:
        import cold_start
    except ImportError as exc:
        why = f"benchmarks/cold_start.py is not in this tree ({exc})"
        print(f"cold start: skipped: {why}")
        return {"skipped": why}
    found = {}
    for assignment in ASSIGNMENTS:
        for entry in COLD_ENTRIES:
            print(f"cold start of the {entry} entry point, {assignment}, {runs} runs ...",
                  flush=True)
            key = f"{entry} {assignment}"
            found[key] = cold_start.measure(entry, runs, OUR_IMAGE, assignment=assignment)
            print(f"  median {found[key]['median_s']} s, worst {found[key]['worst_s']} s")
    return found


def sizes(text: str) -> list[int]:
    return sorted({int(x) for x in text.split(",") if x.strip()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", default="300,1000", help="batch sizes every mode of ours grades")
    parser.add_argument("--stock-n", default=None,
                        help="the sizes stock otter grade also grades (default: every --n)")
    parser.add_argument("--modes", default="stock,floor,local,docker-fork,docker")
    parser.add_argument("--per-submission", type=int, default=10, metavar="K",
                        help="correct notebooks per assignment graded with --jobs 1 (0: none)")
    parser.add_argument("--floor-runs", type=int, default=7)
    parser.add_argument("--cold-runs", type=int, default=5, help="0: no cold start figures")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=10,
                        help="per-submission time limit for every mode (seconds)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/<date>-throughput.{json,md}")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    compared = sizes(args.n)
    with_stock = set(compared if args.stock_n is None else sizes(args.stock_n))
    logs = BENCH / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    if not all((ROOT / "build" / a / f"{a}-autograder.zip").exists() for a in ASSIGNMENTS):
        subprocess.run([*AUTOGRADER, "assign"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    client = engine() if {"stock", "docker", "docker-fork"} & set(modes) else None
    if "stock" in modes and with_stock:
        from stock_otter import stock_base

        print("building the offline stock base (cached after the first run) ...", flush=True)
        stock_base(client)
    record: dict = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "kernel": os.uname().release,
                    "load_before": os.getloadavg()[0]},
        "jobs": args.jobs, "timeout_s": args.timeout, "seed": args.seed,
        "floor": floor(args.floor_runs, logs), "per_submission": [],
        "batches": {}, "runs": [], "agree": {}, "images": {}, "cold_start": {},
    }
    if args.per_submission > 0:
        for mode in (m for m in modes if m in ISOLATING):
            record["per_submission"] += per_submission(mode, args.per_submission, args, logs,
                                                       record["floor"])
    for n in compared:
        batch = BENCH / f"batch-{n}"
        record["batches"][n] = {k: len(v) for k, v in
                                batches.mixed(ASSIGNMENTS, n, args.seed, batch).items()}
        for mode in modes:
            if mode != "stock" or n in with_stock:
                record["runs"].append(throughput(mode, batch, n, args, logs))
        graded = {r["mode"]: r.pop("scores") for r in record["runs"] if r["n"] == n}
        record["agree"][n] = agreement({m: s for m, s in graded.items() if s is not None})
        shutil.rmtree(batch, ignore_errors=True)
    if args.cold_runs > 0:
        record["cold_start"] = cold_starts(args.cold_runs)
    if client is not None:
        from stock_otter import STOCK_BASE

        record["images"] = {OUR_IMAGE: image_size_mb(client, OUR_IMAGE),
                            STOCK_BASE: image_size_mb(client, STOCK_BASE)}
    record["machine"]["load_after"] = os.getloadavg()[0]
    text = markdown(record)
    print(text)
    if args.record:
        folder = ROOT / "benchmarks" / "results"
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{record['date'][:10]}-throughput"
        stem.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
        stem.with_suffix(".md").write_text(text + "\n")
        print(f"wrote {stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
