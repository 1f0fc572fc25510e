"""The value every check returns: a ``CheckResult``, never an exception."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

#: The student's code is at fault (wrong value, exception, wrong type).
STUDENT = "student"
#: The grader itself failed; staff must look, the student is not to blame.
GRADER = "grader"


@dataclass(frozen=True)
class Evidence:
    """What a check saw, in plain JSON-able data.

    Attributes:
        inputs: the arguments the student's code was called with.
        expected: the grader's reference value.
        got: what the student's code returned (plain data, never the object itself).
        max_error: the largest absolute error, when values were compared.
        tolerance: the tolerance the comparison used, as text (``"rtol=1e-05, atol=1e-06"``).
        probes: what the diagnostic probes did when no known mistake matched
            (``checks/probes/``): each the probe's id, what it established and its calls, or
            ``{"id": None, "tried": [...]}`` when none established a cause.
    """

    inputs: dict[str, Any] = field(default_factory=dict)
    expected: Any = None
    got: Any = None
    max_error: float | None = None
    tolerance: str | None = None
    probes: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check on one submission.

    Attributes:
        question: the otter question name, e.g. ``"q1_accumulation"``.
        check: the check's name within the question, e.g. ``"square_grads_uncleared"``.
        passed: whether the student's code met the contract on every drawn input.
        points: points earned (``max_points`` when passed, else 0).
        max_points: points the check is worth.
        message: student-facing feedback; names the mistake when it is a known one.
        misconception: identifier of the recognised mistake, or ``None``.
        evidence: inputs, expected, got, largest error and tolerance.
        seed: the grading seed the inputs were drawn from; rerun with it to reproduce.
        fault: ``None`` when passed, else ``"student"`` or ``"grader"``.
        traceback: the student's traceback, trimmed to their own frames, if their code raised.
    """

    question: str
    check: str
    passed: bool
    points: float
    max_points: float
    message: str
    seed: int | None
    misconception: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    fault: str | None = None
    traceback: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form, ready for ``json.dumps``."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Verdict:
    """What one comparison inside a check concluded; checks turn it into a ``CheckResult``.

    ``ok`` with no ``message`` means the value met the contract.
    """

    ok: bool
    message: str = ""
    misconception: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    traceback: str | None = None
    fault: str | None = None


PASS = Verdict(ok=True)


def finish(question: str, check: str, verdict: Verdict, *, seed: int | None,
           points: float, passed_message: str) -> CheckResult:
    """Turn a ``Verdict`` into the ``CheckResult`` a check returns."""
    if verdict.ok:
        return CheckResult(question, check, True, points, points, passed_message, seed,
                           evidence=verdict.evidence)
    return CheckResult(
        question, check, False, 0.0, points,
        f"{verdict.message} [grading seed {seed}]" if seed is not None else verdict.message,
        seed, misconception=verdict.misconception, evidence=verdict.evidence,
        fault=verdict.fault or STUDENT, traceback=verdict.traceback,
    )


def with_probe(verdict: Verdict, probe: dict, **changes: Any) -> Verdict:
    """``verdict`` with ``probe`` (what a probe established, as ``Evidence.probes`` holds it)
    added to its evidence, and ``changes`` (a ``misconception``, a ``message``) made."""
    evidence = dataclasses.replace(verdict.evidence, probes=[*verdict.evidence.probes, probe])
    return dataclasses.replace(verdict, evidence=evidence, **changes)
