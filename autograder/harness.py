"""The bridge between otter's hidden tests and the checks.

A hidden test in a master notebook is one line::

    def test_square_grads_cleared(env):
        from autograder.harness import expect
        expect(env, "autograd-exercises", "q1_accumulation/square_grads_cleared")

``expect`` looks the check up, reads the names it needs from the student's globals, runs it
with the grading seed and raises ``AssertionError(message)`` when it fails, which is what
otter's exception-based tests count as a failure. The sealed judge gives the seed explicitly
(``collecting``); under stock ``otter run`` (runner ``otter``) it comes from the environment
(``seed_env.seed_from``): a grading run is reproduced with ``AUTOGRADER_SEED=<seed>``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import traceback
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

from .checks import find, modes
from .checks.calling import RemoteError, WorkerLost
from .checks.result import GRADER, CheckResult
from .checks.seeding import generator
from .seed_env import seed_from
from .worker.modes import DEFAULT_MODES, NOTEBOOK_MODES, apply_modes, current_modes

_run_seed: int | None = None


@dataclass
class Collected:
    """Set by the sealed judge around one otter test: the seed to use, and the
    ``CheckResult`` of each check the test ran."""

    seed: int
    results: list[CheckResult] = field(default_factory=list)


_COLLECTING: ContextVar[Collected | None] = ContextVar("collecting", default=None)


@contextlib.contextmanager
def collecting(seed: int) -> Iterator[Collected]:
    """Run otter's test functions with an explicit seed, collecting every ``CheckResult``."""
    state = Collected(seed)
    token = _COLLECTING.set(state)
    try:
        yield state
    finally:
        _COLLECTING.reset(token)


def grading_seed() -> int:
    """This grading run's seed: ``$AUTOGRADER_SEED`` if set, else a fresh one, fixed per process."""
    global _run_seed
    if _run_seed is None:
        given = seed_from(os.environ)
        _run_seed = secrets.randbelow(2**31) if given is None else given
    return _run_seed


def run_check(env: dict[str, Any], assignment: str, key: str, seed: int) -> CheckResult:
    """Run one check against the names in ``env``; missing names become a failing result."""
    check = find(assignment, key)
    missing = [n for n in check.needs if n not in env]
    if missing:
        names = ", ".join(missing)
        return CheckResult(check.question, check.name, False, 0.0, 1.0,
                           f"{names} is not defined: write it in the cell for "
                           f"{check.question} and run that cell before grading. "
                           f"[grading seed {seed}]", seed, misconception="not-defined",
                           fault="student")
    with checks_modes(), modes.watched() as left:
        result = check({n: env[n] for n in check.needs}, generator(seed))
    return modes.scored(result, left)


@contextlib.contextmanager
def checks_modes() -> Iterator[None]:
    """The checks' own code under torch's default modes, whatever the notebook set (a cell's
    ``torch.set_grad_enabled(False)`` must not change the grader's references), and the
    student's calls under the notebook's (``worker.modes.fenced_modes``); the notebook's
    modes as they were afterwards."""
    notebook = current_modes()
    token = NOTEBOOK_MODES.set(notebook)
    apply_modes(DEFAULT_MODES, notebook)
    try:
        yield
    finally:
        NOTEBOOK_MODES.reset(token)
        apply_modes(notebook)


class GraderFault(Exception):
    """The grader's own code failed in a hidden test (a check the registry does not hold, a
    check that raised, a result marked as the grader's fault): never the student's lost point.
    The judge turns it into a grader error for the whole submission (exit status 3)."""


def expect(env: dict[str, Any], assignment: str, key: str) -> None:
    """Run the check ``key`` for otter; raise ``AssertionError`` with its message on failure,
    ``GraderFault`` when the grader itself failed."""
    state = _COLLECTING.get()
    try:
        result = run_check(env, assignment, key, state.seed if state else grading_seed())
    except (RemoteError, WorkerLost, MemoryError):
        raise  # the student's code raised or its process died: the judge's own verdicts
    except Exception as exc:  # noqa: BLE001 - anything else is the grader's own code failing
        raise GraderFault(f"hidden test {assignment} {key}: the grader failed "
                          f"({type(exc).__name__}: {exc}{_raised_at(exc)}); "
                          f"{_likely(exc)}") from exc
    if state is not None:
        state.results.append(result)
    if not result.passed and result.fault == GRADER:
        raise GraderFault(f"hidden test {assignment} {key}: {result.message}")
    if not result.passed:
        detail = f"\n{result.traceback}" if result.traceback else ""
        raise AssertionError(result.message + detail)


def _likely(exc: Exception) -> str:
    """What staff should look at: a check the package does not hold points to a zip or image
    built from other sources; anything else is a bug in a check (red-team round rt-1: an inf
    answer made a probe round an infinite ratio, and the old words blamed the image)."""
    if isinstance(exc, (KeyError, ImportError)):
        return "is the grading image or zip older than the checks?"
    return ("a bug in the grader's check, not the student's answer: grade this submission "
            "again once the check is fixed")


def _raised_at(exc: BaseException) -> str:
    """`` at checks/exercises/vjp.py:151``: the package's last frame that raised, for staff."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "/autograder/" in f.filename.replace("\\", "/")]
    if not frames:
        return ""
    path = frames[-1].filename.replace("\\", "/").rsplit("/autograder/", 1)[-1]
    return f" at {path}:{frames[-1].lineno}"
