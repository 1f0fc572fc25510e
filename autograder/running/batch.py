"""Grade a folder of submissions and write ``final_grades.csv`` plus one JSON per submission.

Two runners: ``sealed`` (default; the judge in this process, each notebook's code in a confined
worker) and ``otter`` (stock ``otter run``: the notebook and the tests share one kernel, for
trusted work and for comparison).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..authoring.layout import Layout
from . import grades_csv, otter_run
from .otter_run import Graded
from .submissions import Submission, duplicate_names, find



def ensure_zip(assignment: str, layout: Layout) -> Path:
    """The assignment's autograder zip, built (without touching committed files) if missing
    or older than its master."""
    zip_path, master = layout.zip(assignment), layout.master(assignment)
    if not zip_path.exists() or zip_path.stat().st_mtime < master.stat().st_mtime:
        from ..authoring.assign import assign

        print(f"{assignment}: building the autograder zip (otter assign) ...", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            assign(assignment, layout, templates=Path(tmp) / "templates",
                   solution=Path(tmp) / "solution.ipynb")
    return layout.zip(assignment)


def grade_folder(folder: Path, layout: Layout, *, assignment: str | None, out: Path,
                 seed: int | None = None, runner: str = "sealed", jobs: int | None = None,
                 limits=None) -> int:
    """Grade every notebook under ``folder``; return the process exit status.

    Student problems (bad files, crashes, timeouts) are rows in the CSV, not failures: the exit
    status is nonzero only when there is nothing to grade or the grader itself failed.
    """
    try:
        subs = find(folder, assignment)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not subs:
        print(f"error: {folder}: no .ipynb files to grade", file=sys.stderr)
        return 2
    if runner == "sealed" and os.geteuid() != 0:
        print("error: the sealed runner confines each notebook with Linux namespaces and an "
              "unprivileged uid, which needs root: run `sudo make grade`, or grade trusted "
              "work with --runner otter", file=sys.stderr)
        return 2
    seed = secrets.randbelow(2**31) if seed is None else seed
    jobs = jobs or os.cpu_count() or 1
    print(f"grading {len(subs)} submission(s) from {folder} with seed {seed} "
          f"({runner} runner, {jobs} job(s))", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    groups, unidentified = _group(subs)
    for sub in unidentified:
        print(f"  cannot grade {sub.problem}", flush=True)
    if unidentified:
        (out / "unidentified.txt").write_text("".join(f"{s.problem}\n" for s in unidentified))
    failed = False
    for name, group in sorted(groups.items()):
        failed |= _grade_group(name, group, layout, out / name, seed, runner, jobs, limits)
    (out / "grading.json").write_text(json.dumps(
        {"seed": seed, "folder": str(folder), "runner": runner}, indent=2) + "\n")
    return 3 if failed else 0


def _write_rejection(results: Path, sub: Submission) -> None:
    """The result document of a file that was not run at all, and why."""
    from .. import RESULT_SCHEMA_VERSION

    path = results / f"{sub.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"schema_version": RESULT_SCHEMA_VERSION, "file": sub.name,
           "assignment": sub.assignment, "status": "rejected", "error": sub.problem,
           "questions": {}}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _group(subs: list[Submission]) -> tuple[dict[str, list[Submission]], list[Submission]]:
    """Submissions by assignment. A file whose assignment cannot be told joins the only group
    when there is one (it gets an error row there); otherwise it is listed on its own."""
    groups: dict[str, list[Submission]] = {}
    for sub in subs:
        if sub.assignment is not None:
            groups.setdefault(sub.assignment, []).append(sub)
    unknown = [sub for sub in subs if sub.assignment is None]
    if len(groups) == 1 and unknown:
        next(iter(groups.values())).extend(unknown)
        return groups, []
    return groups, unknown


def _grade_group(assignment: str, subs: list[Submission], layout: Layout, out: Path, seed: int,
                 runner: str, jobs: int, limits) -> bool:
    for base, names in duplicate_names(subs).items():
        print(f"  note: {len(names)} {assignment} submissions are named {base} "
              f"({', '.join(names)}); each is graded under its folder path", flush=True)
    zip_path = ensure_zip(assignment, layout)
    if runner == "sealed":
        from .sealed import SealedRunner

        grade_one = SealedRunner(zip_path, assignment, seed, out / "results", limits)
    else:
        grade_one = otter_run.OtterRunner(zip_path, seed, out / "results")
    questions = grade_one.points()
    possible = sum(questions.values())
    graded: list[Graded] = []
    done = 0

    def task(sub: Submission) -> tuple[Graded, float]:
        start = time.monotonic()
        if sub.problem:
            _write_rejection(out / "results", sub)
            return Graded(sub.name, {}, sub.problem), 0.0
        return grade_one(sub), time.monotonic() - start

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for result, seconds in pool.map(task, subs):
            done += 1
            graded.append(result)
            total = sum(s for s, _ in result.scores.values())
            print(f"  [{assignment} {done}/{len(subs)}] {result.name}: {total:g}/{possible:g} "
                  f"({result.status}, {seconds:.1f} s)", flush=True)
    grades_csv.write(out / "final_grades.csv", graded, questions)
    print(f"{assignment}: wrote {out / 'final_grades.csv'}", flush=True)
    return any(g.status.startswith("grader-error") for g in graded)
