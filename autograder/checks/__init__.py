"""Checking: pure functions that take the student's callables or values and a seeded
generator and return a ``CheckResult``. Nothing here knows about notebooks, otter or Docker."""

from __future__ import annotations

from .registry import Check


def all_checks() -> dict[str, dict[str, Check]]:
    """Every assignment's checks, keyed by assignment then ``question/name``."""
    from . import exercises, porting

    return {exercises.ASSIGNMENT: exercises.CHECKS, porting.ASSIGNMENT: porting.CHECKS}


def find(assignment: str, key: str) -> Check:
    """The check ``key`` (``"q1_accumulation/square_grads_cleared"``) of ``assignment``."""
    table = all_checks()
    if assignment not in table:
        raise KeyError(f"unknown assignment {assignment!r}; known: {sorted(table)}")
    if key not in table[assignment]:
        raise KeyError(f"unknown check {key!r} in {assignment}; known: {sorted(table[assignment])}")
    return table[assignment][key]
