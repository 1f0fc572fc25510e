"""The batch runner for the sealed judge: one confined worker per submission."""

from __future__ import annotations

from pathlib import Path

from . import uids
from .judge import judge
from .results import Graded, graded, write_document
from .sandbox import Limits, SandboxError
from .submissions import Submission, seed_of
from .tests_zip import load_tests, points_per_question



class SealedRunner:
    """Grades each submission with ``judge``; writes its JSON result document."""

    def __init__(self, zip_path: Path, assignment: str, seed: int, results: Path,
                 limits: Limits | None = None):
        self.tests = load_tests(zip_path)
        self.assignment, self.seed, self.results = assignment, seed, results
        self.limits = limits or Limits()
        results.mkdir(parents=True, exist_ok=True)

    def points(self) -> dict[str, float]:
        return points_per_question(self.tests)

    def __call__(self, sub: Submission) -> Graded:
        try:
            with uids.lease() as uid:
                doc = judge(sub.path, sub.name, self.assignment, self.tests, seed=seed_of(sub, self.seed),
                            uid=uid, limits=self.limits)
        except SandboxError as exc:
            doc = {"file": sub.name, "status": "grader-error", "error": str(exc), "questions": {},
                   "seed": seed_of(sub, self.seed)}
        except Exception as exc:  # noqa: BLE001 - one broken notebook never stops the batch
            doc = {"file": sub.name, "status": "grader-error", "seed": seed_of(sub, self.seed),
                   "error": f"{type(exc).__name__}: {exc}", "questions": {}}
        write_document(self.results, doc)
        return graded(doc)
