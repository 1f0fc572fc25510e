"""The ``sealed`` runner: the judge in this process, each notebook's code in a confined worker.
The judge (torch, the checks) is imported by the first submission it grades: a run in which
no notebook runs (rejected files, a resume with nothing left) pays no ``import torch``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..judge.sandbox import SandboxError
from ..judge.tests_zip import load_tests, points_per_question
from ..resultdoc import ResultDoc
from ..submissions import Submission, seed_of
from .base import Runner, Setup

if TYPE_CHECKING:
    from ..judge.spares import Spares


class SealedRunner(Runner):
    """Grades each submission with ``judge`` under a leased sandbox uid."""

    def __init__(self, setup: Setup):
        self.tests = load_tests(setup.zip_path)
        self.assignment, self.seed, self.limits = setup.assignment, setup.seed, setup.limits
        self.spares: Spares | None = None  # made by the first submission (CUDA asked then)
        self.judged = False  # a submission reached the judge
        self.lock = threading.Lock()

    def points(self) -> dict[str, float]:
        return points_per_question(self.tests)

    def grade(self, sub: Submission, questions: frozenset[str] | None = None) -> ResultDoc:
        tests = [t for t in self.tests if questions is None or t.question in questions]
        seed = seed_of(sub, self.seed)
        self.judged = True
        try:
            return self._judge(sub, tests, seed)
        except SandboxError as exc:
            return ResultDoc.grader_error(sub.name, str(exc), assignment=self.assignment,
                                          seed=seed)
        except Exception as exc:  # noqa: BLE001 - one broken notebook never stops the batch
            return ResultDoc.grader_error(sub.name, f"{type(exc).__name__}: {exc}",
                                          assignment=self.assignment, seed=seed)

    def close(self) -> None:
        """A judge still running here (a second Ctrl-C abandoned its submission) stops now:
        its worker is killed, nothing of it is left running."""
        if self.judged:
            from ..judge.core import abandon

            abandon()
        if self.spares is not None:
            self.spares.close()

    def _judge(self, sub: Submission, tests: list, seed: int) -> ResultDoc:
        """The judge's document for ``sub``, its worker under a uid leased for it: the one
        confined while the previous submission was graded, when there is one."""
        from ..judge.core import grading_limits, judge
        from ..judge.spares import Spares

        with self.lock:
            if self.spares is None:
                self.spares = Spares(grading_limits(self.limits))
        with self.spares.take() as slot:
            return judge(sub.path, sub.name, self.assignment, tests, seed=seed, uid=slot.uid,
                         limits=self.limits, worker=slot.worker, later=slot.later)
