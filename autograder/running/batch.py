"""Grade a folder of submissions, one ``otter run`` each, and write ``final_grades.csv``."""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ..authoring.layout import Layout
from . import grades_csv, otter_run
from .otter_run import Graded
from .submissions import Submission, find


def points_in_zip(zip_path: Path) -> dict[str, float]:
    """Question -> points possible, read from the autograder zip's test files by otter itself."""
    from otter.test_files import ExceptionTestFile

    questions = {}
    with zipfile.ZipFile(zip_path) as zf:
        for member in sorted(zf.namelist()):
            if member.startswith("tests/") and member.endswith(".py"):
                test = ExceptionTestFile.from_string(zf.read(member).decode("utf-8"), member)
                questions[test.name] = float(sum(tc.points or 0 for tc in test.test_cases))
    return questions


def ensure_zip(assignment: str, layout: Layout) -> Path:
    """The assignment's autograder zip, built (without touching committed files) if missing."""
    if not layout.zip(assignment).exists():
        from ..authoring.assign import assign

        print(f"{assignment}: no autograder zip yet, running otter assign ...", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            assign(assignment, layout, templates=Path(tmp) / "templates",
                   solution=Path(tmp) / "solution.ipynb")
    return layout.zip(assignment)


def grade_folder(folder: Path, layout: Layout, *, assignment: str | None, out: Path,
                 seed: int | None = None, timeout: float = 600.0) -> int:
    """Grade every notebook under ``folder``; return the process exit status.

    Student problems (bad files, crashes, timeouts) are rows in the CSV, not failures: the exit
    status is nonzero only when there is nothing to grade.
    """
    try:
        subs = find(folder, assignment)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not subs:
        print(f"error: {folder}: no .ipynb files to grade", file=sys.stderr)
        return 2
    seed = secrets.randbelow(2**31) if seed is None else seed
    print(f"grading {len(subs)} submission(s) from {folder} with seed {seed}", flush=True)
    unidentified = [sub for sub in subs if sub.assignment is None]
    for sub in unidentified:
        print(f"  skipped {sub.problem}", flush=True)
    if unidentified:
        out.mkdir(parents=True, exist_ok=True)
        (out / "unidentified.txt").write_text("".join(f"{s.problem}\n" for s in unidentified))
    groups: dict[str, list[Submission]] = {}
    for sub in subs:
        if sub.assignment is not None:
            groups.setdefault(sub.assignment, []).append(sub)
    for name, group in sorted(groups.items()):
        _grade_group(name, group, layout, out / name, seed, timeout)
    (out / "grading.json").write_text(json.dumps({"seed": seed, "folder": str(folder)}, indent=2))
    return 0


def _grade_group(assignment: str, subs: list[Submission], layout: Layout, out: Path,
                 seed: int, timeout: float) -> None:
    zip_path = ensure_zip(assignment, layout)
    questions = points_in_zip(zip_path)
    possible = sum(questions.values())
    graded: list[Graded] = []
    for i, sub in enumerate(subs, 1):
        start = time.monotonic()
        if sub.problem:
            result = Graded(sub.name, {}, sub.problem)
        else:
            keep = out / "results" / f"{sub.name.replace('/', '__')}.json"
            result = otter_run.grade(sub.path, sub.name, zip_path, seed=seed, timeout=timeout,
                                     keep=keep)
        graded.append(result)
        total = sum(s for s, _ in result.scores.values())
        print(f"  [{assignment} {i}/{len(subs)}] {sub.name}: {total:g}/{possible:g} "
              f"({result.status}, {time.monotonic() - start:.1f} s)", flush=True)
    grades_csv.write(out / "final_grades.csv", graded, questions)
    print(f"{assignment}: wrote {out / 'final_grades.csv'}", flush=True)
