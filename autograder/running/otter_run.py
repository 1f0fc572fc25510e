"""Grade one notebook with stock ``otter run`` (the notebook and the tests share one kernel:
trusted submissions only until the sealed judge lands)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..harness import SEED_VARIABLE
from .results import Graded  # re-exported: callers import it from here


def grade(notebook: Path, name: str, zip_path: Path, *, seed: int, timeout: float,
          keep: Path | None = None) -> Graded:
    """Run ``otter run`` on ``notebook`` in a scratch folder; never raises for a bad notebook.

    Args:
        notebook: the submission (copied; the original is never touched).
        name: the ``file`` column value.
        zip_path: the autograder zip.
        seed: the grading seed, passed to the hidden tests.
        timeout: seconds before the run is killed.
        keep: where to copy otter's ``results.json``, if anywhere.
    """
    with tempfile.TemporaryDirectory(prefix="autograder-run-") as tmp:
        work = Path(tmp)
        copy = work / "submission" / notebook.name
        copy.parent.mkdir()
        (work / "out").mkdir()
        shutil.copyfile(notebook, copy)
        env = {**os.environ, SEED_VARIABLE: str(seed)}
        cmd = [sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(work / "out"),
               str(copy)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                                  cwd=work)
        except subprocess.TimeoutExpired:
            return Graded(name, {}, f"timed out after {timeout:g} s")
        results = work / "out" / "results.json"
        if not results.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
            return Graded(name, {}, f"otter run failed (exit {proc.returncode}): {tail[0]}")
        if keep is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results, keep)
        return parse(name, json.loads(results.read_text(encoding="utf-8")))


def parse(name: str, results: dict) -> Graded:
    """Per-question scores from otter's Gradescope-style ``results.json``."""
    scores, details = {}, {}
    for test in results.get("tests", []):
        if test.get("max_score") is None:
            continue  # the "Public Tests" summary entry carries no score
        scores[test["name"]] = (float(test.get("score") or 0.0), float(test["max_score"]))
        details[test["name"]] = test.get("output", "")
    return Graded(name, scores, "Completed", details)


class OtterRunner:
    """Grades submissions one ``otter run`` each (stock otter, in-kernel tests)."""

    def __init__(self, zip_path: Path, seed: int, results: Path, timeout: float = 600.0):
        self.zip_path, self.seed, self.results, self.timeout = zip_path, seed, results, timeout

    def points(self) -> dict[str, float]:
        from .tests_zip import load_tests, points_per_question

        return points_per_question(load_tests(self.zip_path))

    def __call__(self, sub) -> Graded:
        keep = self.results / f"{sub.name}.json"
        return grade(sub.path, sub.name, self.zip_path, seed=self.seed, timeout=self.timeout,
                     keep=keep)
