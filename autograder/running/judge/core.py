"""The sealed judge: grade one notebook without ever running its code in this process.

The notebook's code cells run in a confined worker (``sandbox``); the judge runs otter's own
test functions from the autograder zip, public and hidden, against a ``RemoteNamespace``: the
hidden ones call the same checks as under ``otter run``, with the judge's seed, and compute
every reference here. A worker that dies or hangs is replaced (its cells replayed) so that one
broken function costs only the tests that needed it.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from ...checks.calling import (RemoteError, WorkerLost, exception_summary,
                               student_texts)
from ...harness import GraderFault, collecting
from .remote import RemoteNamespace, _short
from ..resultdoc import TIMED_OUT, ResultDoc
from .sandbox import Limits, SandboxError
from ..submissions import read_notebook_bytes
from .worker_client import WorkerClient, submission_cut

MAX_RESTARTS = 4
#: Texts of the student's choosing a failed test's outcome lists (``said_by_student``).
MAX_STUDENT_TEXTS = 20


@dataclass(frozen=True)
class TestSpec:
    """One otter test case, as the judge runs it."""

    question: str
    name: str
    hidden: bool
    points: float
    body: Any  # otter's ``test_case`` object; ``call_func(env)`` runs it


class Session:
    """One submission's worker, replaced when it dies; remembers which cells to replay."""

    def __init__(self, cells: list[tuple[int, str]], uid: int, limits: Limits, deadline: float,
                 first: WorkerClient | None = None):
        self.cells, self.uid, self.limits, self.deadline = cells, uid, limits, deadline
        self.first = first  # a worker for ``uid`` confined ahead of need (``spares``)
        self.report: dict[int, dict] = {}
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
            for index, source in self.cells:
                if index not in self.bad:
                    self._run_cell(index, source)
                    if self.client.lost:
                        break
        return self.env

    def _run_cell(self, index: int, source: str) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._cut()
        try:
            reply = self.client.request({"op": "run_cells", "cells": [[index, source]]},
                                        min(left, self.limits.cell_timeout))
        except WorkerLost as exc:
            self.bad.add(index)
            self.report[index] = {"index": index, "status": "stopped", "reason": str(exc)}
            return
        entries = reply.get("ok") if isinstance(reply.get("ok"), list) else []
        if index not in self.report and entries and isinstance(entries[0], dict):
            self.report[index] = _clean_cell_entry(index, entries[0])

    def _cut(self) -> WorkerLost:
        self.cut = True
        return WorkerLost(submission_cut(self.limits))

    def _retire(self) -> None:
        self.cut = self.cut or self.client.cut
        self.client.close()
        self.outputs.append(self.client.student_output())

    def close(self) -> str:
        """Stop the worker; the output of every worker this submission used, in order."""
        if self.client is not None:
            self._retire()
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
        """What went wrong with the notebook's process, in words for staff and student."""
        sources = dict(self.cells)
        found = [f"{cell_name(i, sources.get(i, ''))} stopped the notebook's process: "
                 f"{self.report[i]['reason']}"
                 for i in sorted(self.bad) if "reason" in self.report.get(i, {})]
        if self.restarts:
            found.append(f"the notebook's process was replaced {self.restarts} time(s)")
        if self.cut:
            found.append(f"stopped by the time limit for the whole submission "
                         f"({self.limits.submission_timeout:g} s for all its cells and tests "
                         "together): the tests still running or not yet run then got no "
                         "points; make the slow cells or functions faster")
        return found


#: Sources longer than this are named by their first line only (never parsed).
MAX_PARSED_SOURCE = 200_000


def defined_names(source: str) -> list[str]:
    """The top-level names a cell defines (functions, classes, assignments, imports), read
    with ``ast`` (parsed, never run); [] when it does not parse or is too long."""
    if len(source) > MAX_PARSED_SOURCE:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return list(dict.fromkeys(names))[:20]


def first_line(source: str) -> str:
    """The cell's first non-blank line, cut to 80 characters."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= 80 else line[:77] + "..."


def cell_name(index: int, source: str) -> str:
    """How feedback names a cell: by what it defines, else by its first line (Jupyter shows
    no cell numbers), with its position as a last resort."""
    names = [n for n in defined_names(source) if not n.startswith("_")]
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return f"the cell defining {shown}"
    line = first_line(source)
    return f"the cell starting `{line}`" if line else f"code cell {index + 1}"


def _named_entry(entry: dict, source: str) -> dict:
    """A cell report entry with what the cell defines, its first line and its name."""
    return {**entry, "defines": defined_names(source), "first_line": first_line(source),
            "name": cell_name(entry["index"], source)}


def _clean_cell_entry(index: int, entry: dict) -> dict:
    """Only the fields we expect, as strings, from the untrusted report."""
    clean: dict[str, Any] = {"index": index, "status": _short(entry.get("status"), 20),
                             "notes": [_short(n, 300) for n in _list(entry.get("notes"))[:20]]}
    error = entry.get("error")
    if isinstance(error, dict):
        clean["error"] = {k: _short(error.get(k), 4000) for k in ("type", "message", "traceback")}
    return clean


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def code_cells(path: Path) -> list[tuple[int, str]]:
    # as vetted: never through a link or a FIFO swapped in since (submissions.py)
    nb = nbformat.reads(read_notebook_bytes(path).decode("utf-8"), as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def run_test(spec: TestSpec, session: Session, seed: int) -> dict:
    """Run one otter test case against the remote namespace; never raises."""
    outcome: dict[str, Any] = {"name": spec.name, "hidden": spec.hidden, "possible": spec.points}
    with collecting(seed) as state, student_texts() as texts:
        try:
            spec.body.call_func(session.ensure())
            passed, message = True, "passed"
        except (SandboxError, GraderFault):
            raise
        except AssertionError as exc:
            passed, message = False, str(exc) or "a public test assertion failed"
        except WorkerLost as exc:
            passed, message = False, f"Your notebook's code did not finish: {exc}."
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
    outcome.update(passed=passed, points=spec.points if passed else 0.0, message=message)
    if state.results:
        outcome["checks"] = [r.to_dict() for r in state.results]
    if texts and not passed:
        outcome.update(said_by_student(message, texts))
    return outcome


def said_by_student(message: str, texts: list[str]) -> dict:
    """``student_text``: the texts of the student's choosing that ``message`` quotes (longest
    first, at most ``MAX_STUDENT_TEXTS``), for feedback that must leave them out; and
    ``student_text_cut`` when there were more than it keeps."""
    found = sorted({t for t in texts if t in message}, key=len, reverse=True)
    kept = found[:MAX_STUDENT_TEXTS]
    return {"student_text": kept, **({"student_text_cut": True} if len(found) > len(kept)
                                     else {})}


def grading_limits(limits: Limits) -> Limits:
    """``limits`` with ``cuda`` set when this judge sees CUDA: its checks then move models to
    the GPU (``checks.porting.device``), so every worker must show it can use it too. Asked
    here, in the judge, never in a process that forks workers afterwards."""
    import torch

    if limits.cuda or not torch.cuda.is_available():
        return limits
    return dataclasses.replace(limits, cuda=True)


def judge(path: Path, name: str, assignment: str, tests: list[TestSpec], *, seed: int,
          uid: int, limits: Limits, worker: WorkerClient | None = None) -> dict:
    """Grade ``path``; return its result document (``ResultDoc.to_dict``: the JSON a container
    sends back), deterministic for a notebook and seed. ``worker``: one already confined for
    ``uid`` under ``grading_limits(limits)`` (``spares``), used first."""
    limits = grading_limits(limits)
    session = Session(code_cells(path), uid, limits, time.monotonic() + limits.submission_timeout,
                      worker)
    outcomes: list[tuple[str, dict]] = []
    with _LOCK:
        _LIVE.add(session)
    try:
        for spec in tests:
            outcomes.append((spec.question, run_test(spec, session, seed)))
    except (SandboxError, GraderFault) as exc:  # the grader's fault, never a lost point
        return ResultDoc.grader_error(name, str(exc), assignment=assignment,
                                      seed=seed).to_dict()
    finally:
        with _LOCK:
            _LIVE.discard(session)
        output = session.close()
    problems = session.problems()
    sources = dict(session.cells)
    return ResultDoc.graded(
        name, _by_question(tests, outcomes), assignment=assignment, seed=seed,
        problems=problems, status=(TIMED_OUT if session.cut else
                                   "graded-with-worker-restarts" if problems else "graded"),
        notebook={"cells": [_named_entry(session.report[i], sources.get(i, ""))
                            for i in sorted(session.report)]},
        output=output).to_dict()


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


def _by_question(tests: list[TestSpec], outcomes: list[tuple[str, dict]]) -> dict:
    questions: dict[str, dict] = {}
    for spec in tests:
        q = questions.setdefault(spec.question, {"points": 0.0, "possible": 0.0, "tests": []})
        q["possible"] += spec.points
    for question, outcome in outcomes:
        questions[question]["tests"].append(outcome)
        questions[question]["points"] += outcome["points"]
    return questions
