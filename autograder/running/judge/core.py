"""The sealed judge: grade one notebook without ever running its code in this process.

The notebook's code cells run in a confined worker (``sandbox``); the judge runs otter's own
test functions from the autograder zip, public and hidden, against a ``RemoteNamespace``: the
hidden ones call the same checks as under ``otter run``, with the judge's seed, and compute
every reference here. A worker that dies or hangs is replaced (its cells replayed) so that one
broken function costs only the tests that needed it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import threading
import time
from pathlib import Path
from typing import Any

from ...checks.calling import (
    RemoteError,
    UnreadableAnswer,
    WorkerLost,
    exception_summary,
    unreadable_text,
)
from ...checks.describing import student_texts
from ...harness import GraderFault, collecting
from ..limits import Limits
from ..resultdoc import (
    GRADED,
    STOPPED,
    TIMED_OUT,
    WORKER_RESTARTS,
    CheckRecord,
    Notebook,
    Question,
    ResultDoc,
    TestOutcome,
    as_sentence,
)
from .cells import REPORTS_CHARS, cell_name, clean_cell_entry, code_cells, entry_chars, named_entry
from .namespace import RemoteNamespace
from .sandbox import SandboxError
from .tests_zip import TestSpec
from .worker_client import WorkerClient, submission_cut

MAX_RESTARTS = 4
#: Texts of the student's choosing a failed test's outcome lists (``said_by_student``).
MAX_STUDENT_TEXTS = 20


class Session:
    """One submission's worker, replaced when it dies; remembers which cells to replay."""

    def __init__(self, cells: list[tuple[int, str]], uid: int, limits: Limits, deadline: float,
                 first: WorkerClient | None = None):
        self.cells, self.uid, self.limits, self.deadline = cells, uid, limits, deadline
        self.first = first  # a worker for ``uid`` confined ahead of need (``spares``)
        self.report: dict[int, dict] = {}
        self.reported_chars = 0  # the text the cell reports hold (``cells.REPORTS_CHARS``)
        self.bad: set[int] = set()
        self.restarts = 0
        self.cut = False  # the whole submission's time limit ran out
        self.outputs: list[str] = []
        self.client: WorkerClient | None = None
        self.env: RemoteNamespace | None = None

    def ensure(self) -> RemoteNamespace:
        """A live worker with every good cell run; raises ``WorkerLost`` past the limits.

        A cell that kills or hangs the worker is marked bad; the worker is replaced and the
        other cells are replayed without it.
        """
        while self.client is None or self.client.lost:
            if self.client is not None:
                if self.restarts >= MAX_RESTARTS:  # the lost one is retired by close()
                    raise WorkerLost("its process was lost too many times; the remaining "
                                     "tests were not run")
                if self.deadline - time.monotonic() <= 0:
                    raise self._cut()
                self._retire()
                self.restarts += 1
            self.client, self.first = self.first or WorkerClient(self.uid, self.limits), None
            self.client.deadline = self.deadline
            self.env = RemoteNamespace(self.client)
            self._run_cells([(i, source) for i, source in self.cells if i not in self.bad])
        return self.env

    def _run_cells(self, cells: list[tuple[int, str]]) -> None:
        """Run ``cells`` in one request, each within its own time limit (``cell_timeout``, the
        submission's first); the first that loses the worker is marked bad, and the rest wait
        for the next worker."""
        if not cells:
            return
        if self.deadline - time.monotonic() <= 0:
            raise self._cut()
        replies = self.client.stream({"op": "run_cells", "cells": [list(c) for c in cells]},
                                      len(cells), self.limits.cell_timeout)
        with contextlib.closing(replies):
            for index, _ in cells:
                if self.deadline - time.monotonic() <= 0:
                    raise self._cut()  # closing kills the worker: its cells still run
                try:
                    reply = next(replies)
                except WorkerLost as exc:
                    self.bad.add(index)
                    self.report[index] = {"index": index, "status": STOPPED, "reason": str(exc)}
                    return
                entries = reply.get("ok") if isinstance(reply.get("ok"), list) else []
                if index not in self.report and entries and isinstance(entries[0], dict):
                    entry = clean_cell_entry(index, entries[0],
                                             short=self.reported_chars > REPORTS_CHARS)
                    self.reported_chars += entry_chars(entry)
                    self.report[index] = entry
                del reply, entries  # not held while the next cell's reply is read and parsed

    def _cut(self) -> WorkerLost:
        self.cut = True
        return WorkerLost(submission_cut(self.limits))

    def _retire(self, later: list[WorkerClient] | None = None) -> None:
        self.cut = self.cut or self.client.cut
        if later is None:
            self.client.close()
        else:  # stopped: its output is final, its uid's processes are killed by the caller
            self.client.stop()
            later.append(self.client)
        self.outputs.append(self.client.student_output())

    def close(self, later: list[WorkerClient] | None = None) -> str:
        """Stop the worker; the output of every worker this submission used, in order.
        ``later``: the caller closes the last worker (``spares``), else it is closed here. A
        worker replaced before is always closed at once: the next one runs under its uid."""
        if self.client is not None:
            self._retire(later)
            self.client = None
        parts = [o for o in self.outputs if o]
        text, dropped = (parts[0] if parts else ""), 0
        for part in parts[1:]:  # each part is already capped, with its own note
            if len(text) + len(part) < self.limits.output_bytes:
                text += "\n[the notebook's process was replaced; its cells ran again]\n" + part
            else:
                dropped += len(part)
        if dropped:
            text += (f"\n[... {dropped} more characters of output from replaced processes "
                     "were dropped]")
        return text

    def problems(self) -> list[str]:
        """What went wrong with the notebook's process, in words for staff and student: one
        sentence each, so that a message joining them reads as sentences."""
        sources = dict(self.cells)
        found = [f"{cell_name(i, sources.get(i, ''))} stopped the notebook's process: "
                 f"{self.report[i]['reason']}"
                 for i in sorted(self.bad) if "reason" in self.report.get(i, {})]
        if self.restarts:
            found.append(f"the notebook's process was replaced {self.restarts} time(s)")
        if self.cut:
            found.append(f"the time limit for the whole submission ran out "
                         f"({self.limits.submission_timeout:g} s for all its cells and tests "
                         "together): the tests still running or not yet run then got no "
                         "points; make the slow cells or functions faster")
        return [as_sentence(p) for p in found]


def run_test(spec: TestSpec, session: Session, seed: int) -> TestOutcome:
    """Run one otter test case against the remote namespace; never raises."""
    with collecting(seed) as state, student_texts() as texts:
        try:
            env = session.ensure()
            if isinstance(env, RemoteNamespace):  # what call_func fetches, in one request
                env.look_up(parameters(spec.body))
            spec.body.call_func(env)
            passed, message = True, "passed"
        except (SandboxError, GraderFault):
            raise
        except AssertionError as exc:
            passed, message = False, str(exc) or "a public test assertion failed"
        except WorkerLost as exc:
            passed, message = False, f"Your notebook's code did not finish: {exc}."
        except UnreadableAnswer as exc:  # it returned: never "raised"
            passed, message = False, f"Your code {unreadable_text(exc)}."
        except RemoteError as exc:
            passed, message = False, f"Your code raised {exception_summary(exc)}\n{exc.traceback_text}"
        except MemoryError:  # the decoder's budgets should keep this from happening; if a
            # check still runs out, this test fails and the batch goes on
            passed, message = False, ("The grader ran out of memory checking this answer: "
                                      "what your code returned is far larger than the question "
                                      "needs.")
        except Exception as exc:  # noqa: BLE001 - a public test tripping over a wrong value
            passed, message = False, f"{exception_summary(exc)}"
    advice = [r.message for r in state.results if r.passed and r.misconception]
    if passed and advice:  # a passing check with advice (heard, not scored: docs/security.md)
        message = "\n".join(["passed", *advice])
    quoted, more = said_by_student(message, texts) if texts and not passed else (None, None)
    return TestOutcome(
        spec.name, spec.hidden, passed, spec.points if passed else 0.0, spec.points, message,
        tuple(CheckRecord.from_dict(r.to_dict()) for r in state.results) or None,
        quoted, more)


def parameters(body: Any) -> list[str]:
    """The names otter's ``call_func`` fetches from the namespace for a test function: its
    parameters but ``env`` (which gets the namespace itself)."""
    try:
        return [name for name in inspect.signature(body.test_func).parameters if name != "env"]
    except (AttributeError, TypeError, ValueError):
        return []


def said_by_student(message: str, texts: list[str]) -> tuple[tuple[str, ...], bool | None]:
    """The texts of the student's choosing that ``message`` quotes (longest first, at most
    ``MAX_STUDENT_TEXTS``), for feedback that must leave them out; and ``True`` when there were
    more than it keeps (else ``None``: the document leaves ``student_text_cut`` out)."""
    found = sorted({t for t in texts if t in message}, key=len, reverse=True)
    kept = tuple(found[:MAX_STUDENT_TEXTS])
    return kept, (True if len(found) > len(kept) else None)


def grading_limits(limits: Limits) -> Limits:
    """``limits`` with ``cuda`` set when this judge sees CUDA: its checks then move models to
    the GPU (``checks.porting.device``), so every worker must show it can use it too. Asked
    here, in the judge, never in a process that forks workers afterwards."""
    import torch

    if limits.cuda or not torch.cuda.is_available():
        return limits
    return dataclasses.replace(limits, cuda=True)


def judge(path: Path, name: str, assignment: str, tests: list[TestSpec], *, seed: int,
          uid: int, limits: Limits, worker: WorkerClient | None = None,
          later: list[WorkerClient] | None = None) -> ResultDoc:
    """Grade ``path``; return its result document, deterministic for a notebook and seed.
    ``worker``: one already confined for ``uid`` under ``grading_limits(limits)``
    (``spares``), used first. ``later``: where the last worker goes, stopped, for the caller
    to close off the judge's path (``Spares.take``); else it is closed before this returns."""
    limits = grading_limits(limits)
    session = Session(code_cells(path), uid, limits, time.monotonic() + limits.submission_timeout,
                      worker)
    outcomes: list[tuple[str, TestOutcome]] = []
    with _LOCK:
        _LIVE.add(session)
    try:
        for spec in tests:
            outcomes.append((spec.question, run_test(spec, session, seed)))
    except (SandboxError, GraderFault) as exc:  # the grader's fault, never a lost point
        return ResultDoc.grader_error(name, str(exc), assignment=assignment, seed=seed)
    finally:
        with _LOCK:
            _LIVE.discard(session)
        output = session.close(later)
    problems = session.problems()
    sources = dict(session.cells)
    return ResultDoc.graded(
        name, _by_question(tests, outcomes), assignment=assignment, seed=seed,
        problems=problems, status=(TIMED_OUT if session.cut else
                                   WORKER_RESTARTS if problems else GRADED),
        notebook=Notebook(tuple(named_entry(session.report[i], sources.get(i, ""))
                                for i in sorted(session.report))),
        output=output)


_LIVE: set[Session] = set()  # the sessions of the judges running in this process
_LOCK = threading.Lock()


def abandon() -> int:
    """Stop every judge running in this process at once (a second Ctrl-C: ``batch.interrupt``):
    its time is up and its worker is killed, so its remaining tests fail fast and it returns a
    document nobody writes. Returns how many were stopped."""
    with _LOCK:
        live = list(_LIVE)
    for session in live:
        session.deadline = 0.0
        if session.client is not None:
            session.client.kill()
    return len(live)


def _by_question(tests: list[TestSpec],
                 outcomes: list[tuple[str, TestOutcome]]) -> dict[str, Question]:
    possible: dict[str, float] = {}
    for spec in tests:
        possible[spec.question] = possible.get(spec.question, 0.0) + spec.points
    found: dict[str, list[TestOutcome]] = {q: [] for q in possible}
    for question, outcome in outcomes:
        found[question].append(outcome)
    return {q: Question(sum((t.points for t in found[q]), 0.0), possible[q], tuple(found[q]))
            for q in possible}
