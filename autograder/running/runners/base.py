"""What a runner is: the one interface the batch grades through (``registry`` makes them).

A runner grades one submission at a time (threads call it at once) and returns its
``ResultDoc``; it never writes ``results/`` (the batch does) and never raises for a student's
doing (a fault of its own is a ``grader_error`` document; the batch also turns an exception
into one, so one broken submission never stops the others).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path

from ..limits import Limits
from ..resultdoc import ResultDoc
from ..submissions import Submission


@dataclass(frozen=True)
class Setup:
    """What every runner is made from.

    Attributes:
        zip_path: the assignment's autograder zip.
        assignment: its name.
        seed: the grading seed.
        limits: the worker's limits (``--timeout``, ``--submission-timeout``, ...).
        jobs: submissions graded at once.
        batch: notebooks the whole run runs now, every assignment's (``None``: not known);
            a rejected file is not run.
    """

    zip_path: Path
    assignment: str
    seed: int
    limits: Limits
    jobs: int = 1
    batch: int | None = None


class Runner(abc.ABC):
    """Grades submissions of one assignment."""

    @abc.abstractmethod
    def grade(self, sub: Submission, questions: frozenset[str] | None = None) -> ResultDoc:
        """Grade ``sub``; with ``questions``, only those (the registry says which runners
        can: ``RunnerKind.partial``)."""

    @abc.abstractmethod
    def points(self) -> dict[str, float]:
        """Points possible per question."""

    def expect(self, count: int) -> None:
        """``count`` submissions are coming (a runner may start containers ahead of need)."""

    def close(self) -> None:
        """Release what the runner holds (containers started ahead of need, ...)."""


class WholeNotebooks(ValueError):
    """A runner that grades whole notebooks only was asked for some questions."""

    def __init__(self, runner: str):
        super().__init__(f"the {runner} runner grades whole notebooks only")
