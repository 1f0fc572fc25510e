"""One assignment's part of a batch (``Group``): its runner, the submissions it grades now,
their documents as they finish, then its ``timings.json``, ``final_grades.csv`` and summary."""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ...authoring.assign import ensure_zip
from ..names import look_alike
from ..outputs import final_grades, timings, written_questions
from ..resultdoc import Graded, ResultDoc
from ..resultdoc.document import with_source
from ..results import result_path
from ..runners import registry
from ..runners.base import Setup
from ..submissions import Submission, duplicate_names, identical
from . import interrupt, stale, written_answers
from .options import Options
from .progress import Display
from .selection import Picked, on_disk


class RunnerStartError(RuntimeError):
    """The runner for an assignment could not start (the engine, its first container): the
    grader's problem, said in one line (exit status 3)."""


class Group:
    """One assignment's part of the batch: its runner, the submissions to grade now (those
    ``selection`` picks), their results as they finish, then its CSV and summary. After a
    SIGINT (``stop``) it starts nothing new, and after a second writes nothing in flight."""

    def __init__(self, assignment: str, subs: list[Submission], picked: Picked, run: Options,
                 kind: registry.RunnerKind, display: Display, stop: interrupt.Stop,
                 batch: int | None = None):
        """``subs``: the assignment's submissions, each with its seed; ``picked``: those to
        grade now and the documents on disk a partial run keeps; ``run``: the run's options,
        every default decided (``folder``); ``batch``: the notebooks the whole run runs now
        (``Setup.batch``)."""
        out = run.out / assignment
        self.assignment, self.out, self.display = assignment, out, display
        self.stop = stop
        for base, names in duplicate_names(subs).items():
            display.say(f"  note: {len(names)} {assignment} submissions are named {base} "
                        f"({', '.join(names)}); each is graded under its folder path")
        for same in identical(subs):
            display.say(f"  note: {len(same)} {assignment} submissions are the same file, byte "
                        f"for byte ({', '.join(same)}): a resubmission, or one notebook handed "
                        f"in twice? each is graded on its own")
        for same in look_alike([sub.name for sub in subs]):
            display.say(f"  note: {len(same)} {assignment} submissions have names that print "
                        f"alike but differ in Unicode form ({', '.join(map(ascii, same))}); "
                        f"each is graded under its own name")
        zip_path = ensure_zip(assignment, run.layout)
        self.written = written_questions.snapshot(run.layout.master(assignment), out)
        try:
            self.runner = kind.make(Setup(zip_path, assignment, run.seed, run.limits, run.jobs,
                                           batch))
        except Exception as exc:  # noqa: BLE001 - the engine, a container: never a traceback
            raise RunnerStartError(f"{assignment}: the {kind.name} runner could not start "
                                   f"({type(exc).__name__}: {exc}); nothing was graded for "
                                   f"it") from exc
        self.questions = self.runner.points()
        self.question, self.docs, self.now = run.selection.question, picked.docs, picked.now
        # graded in full: a question alone would mix versions, or hidden inputs of two seeds
        self.changed = picked.changed | picked.redrawn
        if self.question is not None and self.question not in self.questions:
            self.now = []  # --question names a question of another assignment
        self.listed = subs
        names = {sub.name for sub in self.now}
        self.kept = [sub for sub in subs if sub.name not in names]
        self.futures: dict = {}  # future -> its submission
        self.fresh: list[Graded] = []
        self.summary: dict = {}
        self.running, self.lock = 0, threading.Lock()  # submissions being graded right now

    def _task(self, sub: Submission) -> tuple[Graded, float] | None:
        """``sub`` graded and its document written; ``None`` when a SIGINT came first (not
        started) or abandoned it (nothing written)."""
        start = time.monotonic()
        if sub.problem:  # never run: its document says why
            doc = ResultDoc.rejected(sub.name, sub.problem, assignment=sub.assignment)
        else:
            with self.lock:
                if self.stop.stopping:
                    return None
                self.running += 1
            try:
                doc = self._grade(sub)
            finally:
                with self.lock:
                    self.running -= 1
            if self.stop.abandoned:
                return None
        doc = written_answers.attach(doc, sub, self.written)  # read here, never run
        doc = with_source(doc, sub.sha256)
        return doc.written(self.out / "results"), 0.0 if sub.problem else time.monotonic() - start

    def _grade(self, sub: Submission) -> ResultDoc:
        """``sub``'s new document; with ``--question``, that question graded alone and merged
        into the document on disk (everything graded where there is none to merge into)."""
        old = self.docs.get(sub.name)
        try:
            if (self.question is not None and old is not None and old.questions
                    and old.status.is_graded and sub.name not in self.changed):
                new = self.runner.grade(sub, frozenset({self.question}))
                doc = old.with_question(new, self.question)
            else:
                doc = self.runner.grade(sub)
        except Exception as exc:  # noqa: BLE001 - one broken submission never stops the batch
            doc = ResultDoc.grader_error(sub.name, f"{type(exc).__name__}: {exc}",
                                         assignment=self.assignment, seed=sub.seed)
        if doc.is_grader_error and not sub.path.exists():
            # staff moved it during the run, not the grader's failure (red-team rt-s3)
            return ResultDoc.rejected(sub.name, f"{sub.name}: the file was moved or deleted "
                                      "during the run, before it was graded; grade it again "
                                      "with --only", assignment=self.assignment)
        return doc

    def submit(self, pool: ThreadPoolExecutor) -> None:
        self.runner.expect(len(self.now))  # e.g. start containers ahead of need
        self.futures = {pool.submit(self._task, sub): sub for sub in self.now}

    def cancel(self) -> None:
        """Start none of this group's submissions that have not started."""
        for future in self.futures:
            future.cancel()

    def finish(self, react) -> dict:
        """Wait for this group's submissions (progress as they finish, not in order), calling
        ``react()`` between waits (a SIGINT's effects); write its timings and CSV (what was
        graded, after a SIGINT); return its summary."""
        possible = sum(self.questions.values())
        seconds: dict[str, float] = {}
        pending = set(self.futures)
        with self.display.group(self.assignment, len(self.now),
                                in_flight=lambda: self.running) as advance:
            while pending:
                react()
                if self.stop.abandoned:
                    break
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    got = None if future.cancelled() else future.result()
                    if got is None:
                        continue
                    result, took = got
                    self.fresh.append(result)
                    seconds[result.name] = took
                    total = sum(s for s, _ in result.scores.values())
                    advance(f"{result.name}: {total:g}/{possible:g} ({result.status}, "
                            f"{took:.1f} s)")
        react()
        timings.write(self.out, {k: v for k, v in seconds.items() if v})
        graded = {g.name for g in self.fresh}
        rows = self.fresh + on_disk(self.docs, [s for s in self.kept + self.now
                                                if s.name not in graded])
        if self.fresh or not self.stop.stopping:  # a SIGINT before any: the old CSV stays
            final_grades.write(self.out / final_grades.FILE, rows, self.questions)
            self.display.say(f"{self.assignment}: wrote {self.out / final_grades.FILE}")
            moved, where = stale.move_aside(self.out, {result_path(self.out / "results", s.name)
                                                       for s in self.listed})
            if moved:
                self.display.say(f"  note: {moved} file(s) under {self.out / 'results'} belong "
                                 f"to no submission of this run (renamed or removed since an "
                                 f"earlier run); moved to {where}, not reported")
        return summary(rows, self.fresh, len(self.kept), possible)

    def close(self) -> None:
        self.cancel()
        self.runner.close()  # e.g. containers started ahead of need


def summary(rows: list[Graded], fresh: list[Graded], skipped: int,
                   possible: float) -> dict:
    """What ``--json`` and the final table say about one assignment."""
    totals = [sum(s for s, _ in g.scores.values()) for g in rows]
    return {
        "submissions": len(rows), "graded_now": len(fresh), "skipped": skipped,
        "possible": possible, "mean": round(sum(totals) / len(totals), 4) if totals else 0.0,
        "grader_errors": sorted(g.name for g in rows if g.outcome.is_grader_error),
        "student_problems": sorted(g.name for g in rows if not g.outcome.is_clean
                                   and not g.outcome.is_grader_error),
        "timed_out": sorted(g.name for g in rows if g.outcome.is_timed_out),
    }
