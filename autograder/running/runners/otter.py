"""The ``otter`` runner: stock ``otter run`` per notebook (the notebook and the tests share one
kernel: trusted submissions only), its ``results.json`` made a ``ResultDoc``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ...seed_env import SEED_VARIABLE
from ..resultdoc import TIMED_OUT, Question, ResultDoc, TestOutcome
from ..submissions import Submission, seed_of
from .base import Runner, Setup, WholeNotebooks


def grade(notebook: Path, name: str, zip_path: Path, *, assignment: str, seed: int,
          timeout: float, points: dict[str, float]) -> ResultDoc:
    """Run ``otter run`` on ``notebook`` in a scratch folder; never raises for a bad notebook.

    Args:
        notebook: the submission (copied; the original is never touched).
        name: the ``file`` column value.
        zip_path: the autograder zip.
        assignment: its name.
        seed: the grading seed, passed to the hidden tests.
        timeout: seconds before the run is killed (then every question scores 0).
        points: points possible per question (for a run that was killed).
    """
    with tempfile.TemporaryDirectory(prefix="autograder-run-") as tmp:
        work = Path(tmp)
        # a name of our own: the student's may be long or hold bytes that are not UTF-8
        copy = work / "submission" / "notebook.ipynb"
        copy.parent.mkdir()
        (work / "out").mkdir()
        shutil.copyfile(notebook, copy)
        # One torch thread per kernel, as the other runners give student code: ``-j`` kernels
        # side by side, each with torch's thread per core, spin against each other.
        env = {**os.environ, "OMP_NUM_THREADS": "1", SEED_VARIABLE: str(seed)}
        cmd = [sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(work / "out"),
               str(copy)]
        try:
            # a session of its own: Ctrl-C stops the batch, not this run midway (which would
            # be written as the student's failure)
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                                  cwd=work, start_new_session=True)
        except subprocess.TimeoutExpired:
            questions = {q: Question(0.0, p) for q, p in points.items()}
            return ResultDoc.graded(name, questions, assignment=assignment, seed=seed,
                                    status=TIMED_OUT,
                                    problems=[f"the notebook's otter run took longer than "
                                              f"{timeout:g} s and was stopped"])
        results = work / "out" / "results.json"
        if not results.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
            return ResultDoc.grader_error(name, f"otter run failed (exit {proc.returncode}): "
                                          f"{tail[0]}", assignment=assignment, seed=seed)
        return parse(name, json.loads(results.read_text(encoding="utf-8")),
                     assignment=assignment, seed=seed)


def parse(name: str, results: dict, *, assignment: str, seed: int) -> ResultDoc:
    """The result document of otter's Gradescope-style ``results.json``: one test a question,
    otter's output for it as the message."""
    questions = {}
    for test in results.get("tests", []):
        if test.get("max_score") is None:
            continue  # the "Public Tests" summary entry carries no score
        score, possible = float(test.get("score") or 0.0), float(test["max_score"])
        questions[test["name"]] = Question(score, possible, (TestOutcome(
            test["name"], False, score >= possible, score, possible, test.get("output", "")),))
    return ResultDoc.graded(name, questions, assignment=assignment, seed=seed)


class OtterRunner(Runner):
    """Grades submissions one ``otter run`` each (stock otter, in-kernel tests). One kernel
    runs the whole notebook and its tests, so no single call can be timed: the submission
    timeout bounds the whole run."""

    def __init__(self, setup: Setup):
        from ..judge.tests_zip import load_tests, points_per_question

        self.zip_path, self.assignment, self.seed = setup.zip_path, setup.assignment, setup.seed
        self.timeout = setup.limits.submission_timeout
        self.questions = points_per_question(load_tests(self.zip_path))

    def points(self) -> dict[str, float]:
        return dict(self.questions)

    def grade(self, sub: Submission, questions: frozenset[str] | None = None) -> ResultDoc:
        if questions is not None:
            raise WholeNotebooks("otter")
        return grade(sub.path, sub.name, self.zip_path, assignment=self.assignment,
                     seed=seed_of(sub, self.seed), timeout=self.timeout,
                     points=self.questions)
