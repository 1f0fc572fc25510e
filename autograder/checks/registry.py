"""Which checks exist, what each needs from the student's notebook, and what it proves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .descriptions import PROVES
from .result import CheckResult


@dataclass(frozen=True)
class Check:
    """One hidden check: a pure function over the student's names and a seeded generator.

    Attributes:
        assignment: the otter assignment name.
        question: the otter question name.
        name: unique within the question.
        needs: the names the check reads from the student's notebook, in call order.
        run: ``run(*values, rng=..., points=...) -> CheckResult``.
    """

    assignment: str
    question: str
    name: str
    needs: tuple[str, ...]
    run: Callable[..., CheckResult]

    @property
    def key(self) -> str:
        return f"{self.question}/{self.name}"

    @property
    def proves(self) -> str:
        """One sentence for feedback: what was checked, without the inputs' generator
        (``descriptions.PROVES``)."""
        return PROVES[self.assignment][self.key]

    def __call__(self, values: dict[str, Any], rng: np.random.Generator,
                 points: float = 1.0) -> CheckResult:
        return self.run(*(values[n] for n in self.needs), rng=rng, points=points)


def index(checks: list[Check]) -> dict[str, Check]:
    """Checks by ``question/name``; refuses duplicates and a check that ``descriptions`` says
    nothing about (its feedback would not say what it checked)."""
    table: dict[str, Check] = {}
    for check in checks:
        if check.key in table:
            raise ValueError(f"duplicate check {check.key} in {check.assignment}")
        if check.key not in PROVES.get(check.assignment, {}):
            raise ValueError(f"check {check.key} of {check.assignment} has no sentence in "
                             "autograder/checks/descriptions.py")
        table[check.key] = check
    return table
