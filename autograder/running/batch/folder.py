"""Grade a folder of submissions and write ``final_grades.csv`` plus one JSON per submission.

The runners, and ``auto`` which picks one, are in ``registry``; each grades one submission and
returns its ``ResultDoc``, which the batch writes (a rejected file's too, without running it).
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import secrets
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ...authoring.layout import Layout
from ...checks.seeding import submission_seed
from ...reporting.written import answers as written_answers, questions as written_questions
from . import grades_csv, stale
from ..runners import registry
from ..files import write_atomic
from .progress import Display
from ..results import Graded, result_path
from ..resultdoc import GRADED, TIMED_OUT_ROW, DocumentError, ResultDoc
from .roster import identity
from ..runners.base import Setup
from ..judge.sandbox import Limits
from .selection import Selection, on_disk, pick, read_json, write_timings
from ..names import look_alike
from ..submissions import Submission, duplicate_names, find, seed_of


def ensure_zip(assignment: str, layout: Layout) -> Path:
    """The assignment's autograder zip, built (without touching committed files) if missing
    or older than its master."""
    zip_path, master = layout.zip(assignment), layout.master(assignment)

    def stale() -> bool:  # without the master (a pod given the zips) the zip is what there is
        return not zip_path.exists() or (master.exists() and
                                          zip_path.stat().st_mtime < master.stat().st_mtime)

    if stale():
        from ...authoring.assign import assign

        zip_path.parent.mkdir(parents=True, exist_ok=True)
        # two graders (or test workers) starting at once on a fresh checkout would run otter
        # assign into the same folder: one builds, the other waits and finds it built
        with open(zip_path.parent / ".assign.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if stale():
                # stderr: with --json, stdout holds the summary and nothing else
                print(f"{assignment}: building the autograder zip (otter assign) ...",
                      file=sys.stderr, flush=True)
                with tempfile.TemporaryDirectory() as tmp:
                    assign(assignment, layout, templates=Path(tmp) / "templates",
                           solution=Path(tmp) / "solution.ipynb")
    return layout.zip(assignment)


def grade_folder(folder: Path, layout: Layout, *, assignment: str | None, out: Path,
                 seed: int | None = None, runner: str = "sealed", jobs: int | None = None,
                 limits=None, selection: Selection | None = None,
                 display: Display | None = None, roster: dict[str, str] | None = None,
                 feedback: str | None = None, shard=None) -> int:
    """Grade every notebook under ``folder``; return the process exit status.

    Student problems (bad files, crashes, timeouts) are rows in the CSV, not failures: the exit
    status is nonzero only when there is nothing to grade or the grader itself failed.
    ``selection`` grades part of the batch and merges into ``out`` (``--resume``, ``--only``,
    ``--question``); ``display`` shows progress and prints the final summary. ``shard``
    (``shards.Shard``) grades only its part of the folder and writes ``shard.json`` last.
    """
    selection = selection or Selection()
    display = display or Display(sys.stdout)
    try:  # before any runner starts: a wrong -p costs no judge container
        subs = find(folder, assignment)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not subs:
        print(f"error: {folder}: no .ipynb files to grade", file=sys.stderr)
        return 2
    listed = subs
    groups, unidentified = _group(listed)  # the whole folder's grouping, shard or not
    graded_assignments = sorted(groups)
    if shard is not None:  # may leave none: an empty shard still writes its manifest
        subs = [s for s in subs if shard.holds(s.name)]
        groups = {a: [s for s in g if shard.holds(s.name)] for a, g in groups.items()}
        groups = {a: g for a, g in groups.items() if g}
        unidentified = [s for s in unidentified if shard.holds(s.name)]
    try:  # every document a partial run keeps or merges into is read before any work starts
        picks = {name: pick(group, out / name / "results", selection)
                 for name, group in groups.items()}
    except DocumentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kind, why = registry.resolve(runner)
    if kind is None:
        print(why, file=sys.stderr)
        return 2
    if why:
        display.say(why)
    problem = kind.problem(selection.question)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    limits = kind.limits(limits or Limits())  # e.g. CUDA cannot start under an address cap
    runner = kind.name
    previous = read_json(out / "grading.json") or {}  # what the last run in ``out`` recorded
    if seed is None and selection.partial:
        seed = _recorded_seed(previous)  # a partial run must draw the same hidden inputs
    if selection.partial and previous.get("roster", bool(roster)) != bool(roster):
        # identities (hence seeds) differ with and without a roster: the regrade would draw
        # other inputs than the run it merges into
        display.say(f"note: the run in {out} was graded {'with' if not roster else 'without'} "
                    "a roster; pass the same --roster (or none) to draw the same inputs")
    seed = secrets.randbelow(2**31) if seed is None else seed
    feedback = feedback or previous.get("feedback") or "full"
    jobs = jobs or kind.default_jobs()
    display.say(f"grading {len(subs)} submission(s) from {folder} with seed {seed} "
                f"({runner} runner, {jobs} job(s))")
    out.mkdir(parents=True, exist_ok=True)
    # Written first: a run stopped midway can be resumed with the same seed.
    write_atomic(out / "grading.json", json.dumps(
        {"seed": seed, "folder": str(folder), "runner": runner, "feedback": feedback,
         "roster": bool(roster), "seeds": "per submission: sha256(run seed, roster id or path)"},
        indent=2) + "\n")
    for sub in unidentified:
        display.say(f"  cannot grade {sub.problem}")
    if unidentified:
        write_atomic(out / "unidentified.txt", "".join(f"{s.problem}\n" for s in unidentified))
    summary = {"seed": seed, "runner": runner, "out": str(out), "assignments": {},
               "unidentified": [s.problem for s in unidentified]}
    # One pool for every assignment: a slow or timed-out notebook of the first assignment
    # never leaves a core idle while the second one waits.
    plans: list[_Group] = []
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for name, group in sorted(groups.items()):
                now, docs = picks[name]
                group = [_seeded(sub, seed, roster) for sub in group]
                now = [_seeded(sub, seed, roster) for sub in now]
                plans.append(_Group(name, group, layout, out / name,
                                    kind, jobs, limits, seed, selection, display, now, docs))
                plans[-1].submit(pool)
            for plan in plans:
                summary["assignments"][plan.assignment] = plan.finish()
    finally:
        for plan in plans:
            plan.close()
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
    return summary["exit_status"]


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
    """Submissions by assignment. A file whose assignment cannot be told joins the only group
    when there is one (it gets an error row there); otherwise it is listed on its own."""
    groups: dict[str, list[Submission]] = {}
    for sub in subs:
        if sub.assignment is not None:
            groups.setdefault(sub.assignment, []).append(sub)
    unknown = [sub for sub in subs if sub.assignment is None]
    if len(groups) == 1 and unknown:
        next(iter(groups.values())).extend(unknown)
        return groups, []
    return groups, unknown


class _Group:
    """One assignment's part of the batch: its runner, the submissions to grade now (those
    ``selection`` picks), their results as they finish, then its CSV and summary."""

    def __init__(self, assignment: str, subs: list[Submission], layout: Layout, out: Path,
                 kind: registry.RunnerKind, jobs: int, limits: Limits, seed: int,
                 selection: Selection, display: Display, now: list[Submission],
                 docs: dict[str, ResultDoc]):
        self.assignment, self.out, self.display, self.seed = assignment, out, display, seed
        for base, names in duplicate_names(subs).items():
            display.say(f"  note: {len(names)} {assignment} submissions are named {base} "
                        f"({', '.join(names)}); each is graded under its folder path")
        for same in look_alike([sub.name for sub in subs]):
            display.say(f"  note: {len(same)} {assignment} submissions have names that print "
                        f"alike but differ in Unicode form ({', '.join(map(ascii, same))}); "
                        f"each is graded under its own name")
        zip_path = ensure_zip(assignment, layout)
        self.written = written_questions.snapshot(layout.master(assignment), out)
        self.runner = kind.make(Setup(zip_path, assignment, seed, limits, jobs))
        self.questions = self.runner.points()
        self.question, self.docs, self.now = selection.question, docs, now
        if self.question is not None and self.question not in self.questions:
            self.now = []  # --question names a question of another assignment
        self.listed = subs
        names = {sub.name for sub in self.now}
        self.kept = [sub for sub in subs if sub.name not in names]
        self.futures: list = []
        self.running, self.lock = 0, threading.Lock()  # submissions being graded right now

    def _task(self, sub: Submission) -> tuple[Graded, float]:
        start = time.monotonic()
        if sub.problem:  # never run: its document says why
            doc = ResultDoc.rejected(sub.name, sub.problem, assignment=sub.assignment)
        else:
            with self.lock:
                self.running += 1
            try:
                doc = self._grade(sub)
            finally:
                with self.lock:
                    self.running -= 1
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
        self.futures = [pool.submit(self._task, sub) for sub in self.now]

    def finish(self) -> dict:
        """Wait for this group's submissions (progress as they finish, not in order); write
        its timings and CSV; return its summary."""
        possible = sum(self.questions.values())
        fresh: list[Graded] = []
        seconds: dict[str, float] = {}
        with self.display.group(self.assignment, len(self.now),
                                in_flight=lambda: self.running) as advance:
            for future in as_completed(self.futures):
                result, took = future.result()
                fresh.append(result)
                seconds[result.name] = took
                total = sum(s for s, _ in result.scores.values())
                advance(f"{result.name}: {total:g}/{possible:g} ({result.status}, {took:.1f} s)")
        write_timings(self.out / "timings.json", {k: v for k, v in seconds.items() if v})
        rows = fresh + on_disk(self.docs, self.kept)
        grades_csv.write(self.out / "final_grades.csv", rows, self.questions)
        self.display.say(f"{self.assignment}: wrote {self.out / 'final_grades.csv'}")
        moved, where = stale.move_aside(self.out, {result_path(self.out / "results", s.name)
                                                   for s in self.listed})
        if moved:
            self.display.say(f"  note: {moved} file(s) under {self.out / 'results'} belong to "
                             f"no submission of this run (renamed or removed since an earlier "
                             f"run); moved to {where}, not reported")
        return _group_summary(rows, fresh, len(self.kept), possible)

    def close(self) -> None:
        for future in self.futures:
            future.cancel()
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
