"""Grade a folder of submissions and write ``final_grades.csv`` plus one JSON per submission.

The runners, and ``auto`` which picks one, are in ``registry``; each grades one submission and
returns its ``ResultDoc``, which the batch writes (a rejected file's too, without running it).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from ...authoring.assign import ensure_zip
from ...authoring.layout import Layout
from ...checks.seeding import submission_seed
from ...reporting.written import answers as written_answers, questions as written_questions
from ..runners import registry
from ..files import write_atomic
from .progress import Display
from ..results import Graded, result_path
from ..resultdoc import GRADED, TIMED_OUT_ROW, DocumentError, ResultDoc
from ..runners.container import zip_points
from . import grades_csv, interrupt, preflight, stale, unplaced
from .roster import absent_lines, identity, write_absent
from ..runners.base import Setup
from ..judge.sandbox import Limits
from .selection import Selection, on_disk, pick, read_json, write_timings
from ..names import look_alike
from ..submissions import Submission, duplicate_names, find, seed_of


class RunnerStartError(RuntimeError):
    """The runner for an assignment could not start (the engine, its first container): the
    grader's problem, said in one line (exit status 3)."""


def grade_folder(folder: Path, layout: Layout, *, assignment: str | None, out: Path,
                 seed: int | None = None, runner: str = "sealed", jobs: int | None = None,
                 limits=None, selection: Selection | None = None,
                 display: Display | None = None, roster: dict[str, str] | None = None,
                 feedback: str | None = None, shard=None) -> int:
    """Grade every notebook under ``folder``; return the process exit status.

    Student problems (bad files, crashes, timeouts) are rows in the CSV, not failures: the exit
    status is nonzero only when there is nothing to grade, an argument is wrong (2, before any
    work: ``preflight``), the grader itself failed (3) or a SIGINT stopped the run (130,
    ``interrupt``). ``selection`` grades part of the batch and merges into ``out``
    (``--resume``, ``--only``, ``--question``); ``display`` shows progress and prints the final
    summary. ``shard`` (``shards.Shard``) grades only its part of the folder and writes
    ``shard.json`` last. Every file of the folder that no CSV holds is listed with the reason
    (``unplaced``); so is every roster row that no notebook matched (``not_submitted.csv``).
    """
    selection = selection or Selection()
    display = display or Display(sys.stdout)
    stop = interrupt.Stop()
    with interrupt.catching(stop):
        try:
            return _grade_folder(folder, layout, assignment, out, seed, runner, jobs, limits,
                                 selection, display, roster, feedback, shard, stop)
        except preflight.Refused as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2


def _grade_folder(folder, layout, assignment, out, seed, runner, jobs, limits, selection,
                  display, roster, feedback, shard, stop) -> int:
    try:  # before any runner starts: a wrong -p costs no judge container
        subs = find(folder, assignment)
    except FileNotFoundError as exc:
        raise preflight.Refused(str(exc)) from None
    if not subs:
        raise preflight.Refused(f"{folder}: no .ipynb files to grade")
    listed = subs
    preflight.check_only(listed, selection.only, folder)
    previous = read_json(out / "grading.json") or {}  # what the last run in ``out`` recorded
    roster, said = preflight.roster_for(roster, previous.get("roster"), selection, out)
    absent = preflight.check_roster(listed, roster)
    groups, unplaced_subs = _group(listed)  # the whole folder's grouping, shard or not
    graded_assignments = sorted(groups)
    if shard is not None:  # may leave none: an empty shard still writes its manifest
        subs = [s for s in subs if shard.holds(s.name)]
        groups = {a: [s for s in g if shard.holds(s.name)] for a, g in groups.items()}
        groups = {a: g for a, g in groups.items() if g}
        unplaced_subs = [s for s in unplaced_subs if shard.holds(s.name)]
    try:  # every document a partial run keeps or merges into is read before any work starts
        picks = {name: pick(group, out / name / "results", selection)
                 for name, group in groups.items()}
    except DocumentError as exc:
        raise preflight.Refused(str(exc)) from None
    if selection.question is not None:
        preflight.check_question(selection.question, {
            a: sorted(zip_points(ensure_zip(a, layout))) for a in groups})
    preflight.writable(out)
    kind, why = registry.resolve(runner, selection.question)
    if kind is None:
        print(why, file=sys.stderr)
        return 2
    if why:
        display.say(why)
    problem = kind.problem(selection.question)
    if problem:
        raise preflight.Refused(problem)
    if said:
        display.say(said)
    limits = kind.limits(limits or Limits())  # e.g. CUDA cannot start under an address cap
    runner = kind.name
    if seed is None and selection.partial:
        seed = _recorded_seed(previous)  # a partial run must draw the same hidden inputs
    seed = secrets.randbelow(2**31) if seed is None else seed
    feedback = feedback or previous.get("feedback") or "full"
    jobs = jobs or kind.default_jobs()
    now, placed = sum(len(picks[a][0]) for a in groups), sum(map(len, groups.values()))
    display.say(f"grading {now}{f' of {placed}' if now != placed else ''} submission(s) from "
                f"{folder} with seed {seed} ({runner} runner, {jobs} job(s))")
    # Written first: a run stopped midway can be resumed with the same seed and roster.
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "grading.json", json.dumps(
        {"seed": seed, "folder": str(folder), "runner": runner, "feedback": feedback,
         "roster": roster or {},
         "seeds": "per submission: sha256(run seed, roster id or path)"},
        indent=2) + "\n")
    left = sorted([(s.name, s.problem.removeprefix(f"{s.name}: ")) for s in unplaced_subs]
                  + [(name, why) for name, why in unplaced.ignored(folder)
                     if shard is None or shard.holds(name)])
    summary = {"seed": seed, "runner": runner, "out": str(out), "assignments": {},
               "unplaced": [f"{name}: {reason}" for name, reason in left],
               "not_submitted": [] if shard is not None else
               [{"file": key, "student_id": roster[key]} for key in absent]}
    placed_at = unplaced.write(out, left)
    if shard is None:
        write_absent(out, summary["not_submitted"])
    plans = _grade_groups(groups, picks, layout, out, kind, jobs, limits, seed, selection,
                          display, roster, stop)
    for plan in plans:
        summary["assignments"][plan.assignment] = plan.summary
    if stop.stopping:
        return interrupt.interrupted(summary, plans, display)
    if shard is not None:  # last: a shard without its manifest did not finish
        from . import shards

        zips = {a: ensure_zip(a, layout) for a in graded_assignments}
        shards.write_manifest(out, shards.manifest(
            shard, seed, runner, [s.name for s in listed], [s.name for s in subs], zips,
            [identity(s.name, roster) for s in listed],
            shards.documents(out, {a: [s.name for s in g] for a, g in groups.items()})))
    failed = any(a["grader_errors"] for a in summary["assignments"].values())
    summary["exit_status"] = 3 if failed else 0
    display.finish(summary)
    for line in unplaced.lines(left, placed_at) + absent_lines(summary["not_submitted"], out):
        display.say(line)
    return summary["exit_status"]


def _grade_groups(groups, picks, layout, out, kind, jobs, limits, seed, selection, display,
                  roster, stop) -> list["_Group"]:
    """Grade every group's picked submissions in one pool; each plan's ``summary`` is set for
    the groups that got as far (all of them, unless a SIGINT stopped the run first)."""
    # One pool for every assignment: a slow or timed-out notebook of the first assignment
    # never leaves a core idle while the second one waits.
    plans: list[_Group] = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for name, group in sorted(groups.items()):
            if stop.stopping:
                break
            now, docs = picks[name]
            group = [_seeded(sub, seed, roster) for sub in group]
            now = [_seeded(sub, seed, roster) for sub in now]
            plans.append(_Group(name, group, layout, out / name,
                                kind, jobs, limits, seed, selection, display, now, docs, stop))
            plans[-1].submit(pool)
        for plan in plans:
            plan.summary = plan.finish(lambda: interrupt.react(stop, plans, display.say))
    finally:
        if stop.abandoned:  # their workers and containers go now; the threads end unwritten
            for plan in plans:
                plan.close()
            pool.shutdown(wait=False, cancel_futures=True)
        else:
            pool.shutdown(wait=True, cancel_futures=True)
            for plan in plans:
                plan.close()
    return plans


def _seeded(sub: Submission, run_seed: int, roster: dict[str, str] | None) -> Submission:
    """``sub`` with the seed of its own hidden inputs (a pure function of the run's seed and
    its identity, so ``--only`` on one file draws what the whole run drew for it)."""
    return dataclasses.replace(sub, seed=submission_seed(run_seed, identity(sub.name, roster)))


def _recorded_seed(run: dict) -> int | None:
    """The seed a ``grading.json`` recorded, if any."""
    try:
        return int(run["seed"])
    except (ValueError, KeyError, TypeError):
        return None


def _group(subs: list[Submission]) -> tuple[dict[str, list[Submission]], list[Submission]]:
    """Submissions by assignment, and those no group holds (``unplaced``). A file whose
    assignment cannot be told joins the only group when there is one (it gets an error row
    there); otherwise it is listed on its own, as is a notebook for another assignment than
    ``-a``'s (no row and no 0 in that one's gradebook)."""
    groups: dict[str, list[Submission]] = {}
    for sub in subs:
        if sub.assignment is not None and sub.other is None:
            groups.setdefault(sub.assignment, []).append(sub)
    unknown = [sub for sub in subs if sub.assignment is None]
    elsewhere = [sub for sub in subs if sub.other is not None]
    if len(groups) == 1 and unknown:
        next(iter(groups.values())).extend(unknown)
        return groups, elsewhere
    return groups, sorted(unknown + elsewhere, key=lambda s: s.name)


class _Group:
    """One assignment's part of the batch: its runner, the submissions to grade now (those
    ``selection`` picks), their results as they finish, then its CSV and summary. After a
    SIGINT (``stop``) it starts nothing new, and after a second writes nothing in flight."""

    def __init__(self, assignment: str, subs: list[Submission], layout: Layout, out: Path,
                 kind: registry.RunnerKind, jobs: int, limits: Limits, seed: int,
                 selection: Selection, display: Display, now: list[Submission],
                 docs: dict[str, ResultDoc], stop: interrupt.Stop):
        self.assignment, self.out, self.display, self.seed = assignment, out, display, seed
        self.stop = stop
        for base, names in duplicate_names(subs).items():
            display.say(f"  note: {len(names)} {assignment} submissions are named {base} "
                        f"({', '.join(names)}); each is graded under its folder path")
        for same in look_alike([sub.name for sub in subs]):
            display.say(f"  note: {len(same)} {assignment} submissions have names that print "
                        f"alike but differ in Unicode form ({', '.join(map(ascii, same))}); "
                        f"each is graded under its own name")
        zip_path = ensure_zip(assignment, layout)
        self.written = written_questions.snapshot(layout.master(assignment), out)
        try:
            self.runner = kind.make(Setup(zip_path, assignment, seed, limits, jobs))
        except Exception as exc:  # noqa: BLE001 - the engine, a container: never a traceback
            raise RunnerStartError(f"{assignment}: the {kind.name} runner could not start "
                                   f"({type(exc).__name__}: {exc}); nothing was graded for "
                                   f"it") from exc
        self.questions = self.runner.points()
        self.question, self.docs, self.now = selection.question, docs, now
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
        return doc.written(self.out / "results"), 0.0 if sub.problem else time.monotonic() - start

    def _grade(self, sub: Submission) -> ResultDoc:
        """``sub``'s new document; with ``--question``, that question graded alone and merged
        into the document on disk (everything graded where there is none to merge into)."""
        old = self.docs.get(sub.name)
        try:
            if (self.question is not None and old is not None and old.questions
                    and old.status.startswith(GRADED)):
                new = self.runner.grade(sub, frozenset({self.question}))
                return old.with_question(new, self.question)
            return self.runner.grade(sub)
        except Exception as exc:  # noqa: BLE001 - one broken submission never stops the batch
            return ResultDoc.grader_error(sub.name, f"{type(exc).__name__}: {exc}",
                                          assignment=self.assignment,
                                          seed=seed_of(sub, self.seed))

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
        write_timings(self.out / "timings.json", {k: v for k, v in seconds.items() if v})
        graded = {g.name for g in self.fresh}
        rows = self.fresh + on_disk(self.docs, [s for s in self.kept + self.now
                                                if s.name not in graded])
        if self.fresh or not self.stop.stopping:  # a SIGINT before any: the old CSV stays
            grades_csv.write(self.out / "final_grades.csv", rows, self.questions)
            self.display.say(f"{self.assignment}: wrote {self.out / 'final_grades.csv'}")
            moved, where = stale.move_aside(self.out, {result_path(self.out / "results", s.name)
                                                       for s in self.listed})
            if moved:
                self.display.say(f"  note: {moved} file(s) under {self.out / 'results'} belong "
                                 f"to no submission of this run (renamed or removed since an "
                                 f"earlier run); moved to {where}, not reported")
        return _group_summary(rows, self.fresh, len(self.kept), possible)

    def close(self) -> None:
        self.cancel()
        self.runner.close()  # e.g. containers started ahead of need


def _group_summary(rows: list[Graded], fresh: list[Graded], skipped: int,
                   possible: float) -> dict:
    """What ``--json`` and the final table say about one assignment."""
    totals = [sum(s for s, _ in g.scores.values()) for g in rows]
    return {
        "submissions": len(rows), "graded_now": len(fresh), "skipped": skipped,
        "possible": possible, "mean": round(sum(totals) / len(totals), 4) if totals else 0.0,
        "grader_errors": sorted(g.name for g in rows if g.status.startswith("grader-error")),
        "student_problems": sorted(g.name for g in rows if g.status != "Completed"
                                   and not g.status.startswith("grader-error")),
        "timed_out": sorted(g.name for g in rows if g.status.startswith(TIMED_OUT_ROW)),
    }
