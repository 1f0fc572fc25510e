"""What a result document holds below its top level, typed: a ``Question``'s points and its
``TestOutcome``s, each test's ``CheckRecord``s (a ``checks.result.CheckResult`` as it crossed
the wire), and the notebook's ``CellReport``s. Each has ``from_dict`` (``ValueError`` naming
what is wrong) and ``to_dict``, which gives back the object it was read from: keys a part does
not know are kept in ``extra`` and written back unchanged. No torch, no otter: the Docker
runner's host side reads these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

T = TypeVar("T")
#: ``checks.result.GRADER`` and ``STUDENT``, the check's ``fault`` (not imported from there:
#: ``checks`` loads numpy, and the Docker runner's host side reads documents).
GRADER_FAULT, STUDENT_FAULT = "grader", "student"
#: A cell's status when it stopped the notebook's process (a crash, its time limit).
STOPPED = "stopped"
#: The keys ``CheckResult.to_dict`` writes (``checks.result``), each written back.
_CHECK_KEYS = ("question", "check", "passed", "points", "max_points", "message", "seed",
               "misconception", "evidence", "fault", "traceback")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _get(raw: dict, key: str, ok: Callable[[Any], bool], default: Any, what: str) -> Any:
    """``raw[key]`` when it passes ``ok``, ``default`` when missing; ``ValueError`` else."""
    if key not in raw:
        return default
    if not ok(raw[key]):
        raise ValueError(f"{key!r} is not {what}")
    return raw[key]


def _optional(kind: type) -> Callable[[Any], bool]:
    return lambda v: v is None or isinstance(v, kind)


def _is(kind: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, kind)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _strings_at(raw: dict, key: str) -> tuple[str, ...] | None:
    """``raw[key]``, a list of strings, as a tuple; ``None`` when missing."""
    found = _get(raw, key, _strings, None, "a list of strings")
    return None if found is None else tuple(found)


def _listed(items: tuple | None) -> list | None:
    return None if items is None else list(items)


def _each(raw: Any, parse: Callable[[dict], T], what: str) -> tuple[T, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{what}s are not a list")
    found = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"{what} {i} is not an object")
        try:
            found.append(parse(item))
        except ValueError as exc:
            raise ValueError(f"{what} {i}: {exc}") from None
    return tuple(found)


def _rest(raw: dict, known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in known}


def _present(**values: Any) -> dict[str, Any]:
    """The keys whose value is not ``None`` (an optional key left out of the document)."""
    return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class CheckRecord:
    """One check's result inside a test outcome (``CheckResult.to_dict``; ``evidence`` is plain
    data: inputs, expected, got, largest error, tolerance, probes)."""

    check: str
    passed: bool = True
    fault: str | None = None  # ``"student"`` or ``"grader"`` (``checks.result``) when failed
    misconception: str | None = None
    message: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    question: str | None = None
    points: float = 0.0
    max_points: float = 0.0
    seed: int | None = None
    traceback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def by_grader(self) -> bool:
        """The grader failed here, not the student."""
        return self.fault == GRADER_FAULT

    @property
    def by_student(self) -> bool:
        return self.fault == STUDENT_FAULT

    @classmethod
    def from_dict(cls, raw: dict) -> "CheckRecord":
        if not isinstance(raw.get("check"), str):
            raise ValueError("'check' is not a name")
        text = _optional(str)
        return cls(
            raw["check"], _get(raw, "passed", _is(bool), True, "a bool"),
            _get(raw, "fault", text, None, "a string"),
            _get(raw, "misconception", text, None, "a string"),
            _get(raw, "message", _is(str), "", "a string"),
            _get(raw, "evidence", _is(dict), {}, "an object"),
            _get(raw, "question", text, None, "a string"),
            _get(raw, "points", _number, 0.0, "a number"),
            _get(raw, "max_points", _number, 0.0, "a number"),
            _get(raw, "seed", _optional(int), None, "an integer"),
            _get(raw, "traceback", text, None, "a string"), _rest(raw, _CHECK_KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, **{k: getattr(self, k) for k in _CHECK_KEYS}}


_TEST_KEYS = ("name", "hidden", "passed", "points", "possible", "message", "checks",
              "student_text", "student_text_cut")


@dataclass(frozen=True)
class TestOutcome:
    """One otter test case's outcome.

    Attributes:
        name: otter's test name (``"q1_accumulation - 3"``).
        hidden, passed, points, possible, message: as they read.
        checks: the checks it ran (``None``: a test with no record of them, otter's own).
        student_text: texts of the student's choosing that ``message`` quotes
            (``judge.core.said_by_student``); ``student_text_cut``: there were more.
    """

    __test__ = False  # not a pytest class
    name: str
    hidden: bool = False
    passed: bool = False
    points: float = 0.0
    possible: float = 0.0
    message: str = ""
    checks: tuple[CheckRecord, ...] | None = None
    student_text: tuple[str, ...] | None = None
    student_text_cut: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def grader_fault(self) -> bool:
        return any(c.by_grader for c in self.checks or ())

    @classmethod
    def from_dict(cls, raw: dict) -> "TestOutcome":
        if not isinstance(raw.get("name"), str):
            raise ValueError("'name' is not a name")
        checks = raw.get("checks")
        return cls(
            raw["name"], _get(raw, "hidden", _is(bool), False, "a bool"),
            _get(raw, "passed", _is(bool), False, "a bool"),
            _get(raw, "points", _number, 0.0, "a number"),
            _get(raw, "possible", _number, 0.0, "a number"),
            _get(raw, "message", _is(str), "", "a string"),
            None if checks is None else _each(checks, CheckRecord.from_dict, "check"),
            _strings_at(raw, "student_text"),
            _get(raw, "student_text_cut", _is(bool), None, "a bool"), _rest(raw, _TEST_KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "name": self.name, "hidden": self.hidden, "passed": self.passed,
                "points": self.points, "possible": self.possible, "message": self.message,
                **_present(checks=None if self.checks is None
                           else [c.to_dict() for c in self.checks],
                           student_text=_listed(self.student_text),
                           student_text_cut=self.student_text_cut)}


@dataclass(frozen=True)
class Question:
    """One question's points, points possible and test outcomes."""

    points: float
    possible: float
    tests: tuple[TestOutcome, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict) -> "Question":
        if not (_number(raw.get("points")) and _number(raw.get("possible"))):
            raise ValueError("no numeric points and possible")
        return cls(raw["points"], raw["possible"],
                   _each(raw.get("tests", []), TestOutcome.from_dict, "test"),
                   _rest(raw, ("points", "possible", "tests")))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "points": self.points, "possible": self.possible,
                "tests": [t.to_dict() for t in self.tests]}


@dataclass(frozen=True)
class CellError:
    """What a cell raised: the exception's type, message and traceback, as text."""

    type: str | None = None
    message: str | None = None
    traceback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict) -> "CellError":
        text = _optional(str)
        return cls(*(_get(raw, k, text, None, "a string")
                     for k in ("type", "message", "traceback")),
                   _rest(raw, ("type", "message", "traceback")))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, **_present(type=self.type, message=self.message,
                                         traceback=self.traceback)}


_CELL_KEYS = ("index", "status", "notes", "error", "reason", "defines", "first_line", "name")


@dataclass(frozen=True)
class CellReport:
    """One code cell as the notebook's process ran it (``judge.core``).

    Attributes:
        index: its position among the notebook's cells (from 0).
        status: how it ran (``STOPPED``: it stopped the notebook's process).
        notes: what the worker noted (skipped magics); error: what it raised; reason: why it
            stopped the process.
        defines, first_line, name: how feedback names it (``judge.core.cell_name``).
    """

    index: int
    status: str | None = None
    notes: tuple[str, ...] | None = None
    error: CellError | None = None
    reason: str | None = None
    defines: tuple[str, ...] | None = None
    first_line: str | None = None
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stopped(self) -> bool:
        return self.status == STOPPED

    @classmethod
    def from_dict(cls, raw: dict) -> "CellReport":
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise ValueError("'index' is not an integer")
        text = _optional(str)
        error = _get(raw, "error", _optional(dict), None, "an object")
        return cls(index, _get(raw, "status", text, None, "a string"),
                   _strings_at(raw, "notes"),
                   None if error is None else CellError.from_dict(error),
                   _get(raw, "reason", text, None, "a string"), _strings_at(raw, "defines"),
                   _get(raw, "first_line", text, None, "a string"),
                   _get(raw, "name", text, None, "a string"), _rest(raw, _CELL_KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "index": self.index, **_present(
            status=self.status, notes=_listed(self.notes),
            error=None if self.error is None else self.error.to_dict(), reason=self.reason,
            defines=_listed(self.defines), first_line=self.first_line, name=self.name)}


@dataclass(frozen=True)
class Notebook:
    """The notebook's cell report: every code cell that ran, in order."""

    cells: tuple[CellReport, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict) -> "Notebook":
        return cls(_each(raw.get("cells", []), CellReport.from_dict, "cell"),
                   _rest(raw, ("cells",)))

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "cells": [c.to_dict() for c in self.cells]}
