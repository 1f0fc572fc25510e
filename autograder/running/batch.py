"""Grade a folder of submissions and write ``final_grades.csv`` plus one JSON per submission.

Runners: ``sealed`` (the judge in this process, each notebook's code in a confined worker);
``docker-fork`` (one judge container; each submission's workers forked into a fresh container
of their own); ``docker`` (the sealed judge inside one container of the grading image per
submission); ``docker-gpu`` (``docker`` on the CUDA image); ``otter`` (stock ``otter run``: the
notebook and the tests share one kernel, for trusted work and for comparison). ``auto``, the
default, picks ``docker-fork`` when an engine is reachable and runs it, ``docker`` when it
refuses, ``sealed`` without an engine or image (``docker_runner.resolve_runner``).
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..authoring.layout import Layout
from . import grades_csv, otter_run
from .files import write_atomic
from .otter_run import Graded
from .progress import Display
from .sandbox import gpu_devices, with_gpu
from .selection import Selection, on_disk, pick, regrade_question, write_timings
from .submissions import Submission, duplicate_names, find



def ensure_zip(assignment: str, layout: Layout) -> Path:
    """The assignment's autograder zip, built (without touching committed files) if missing
    or older than its master."""
    zip_path, master = layout.zip(assignment), layout.master(assignment)

    def stale() -> bool:  # without the master (a pod given the zips) the zip is what there is
        return not zip_path.exists() or (master.exists() and
                                          zip_path.stat().st_mtime < master.stat().st_mtime)

    if stale():
        from ..authoring.assign import assign

        zip_path.parent.mkdir(parents=True, exist_ok=True)
        # two graders (or test workers) starting at once on a fresh checkout would run otter
        # assign into the same folder: one builds, the other waits and finds it built
        with open(zip_path.parent / ".assign.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if stale():
                print(f"{assignment}: building the autograder zip (otter assign) ...",
                      flush=True)
                with tempfile.TemporaryDirectory() as tmp:
                    assign(assignment, layout, templates=Path(tmp) / "templates",
                           solution=Path(tmp) / "solution.ipynb")
    return layout.zip(assignment)


def grade_folder(folder: Path, layout: Layout, *, assignment: str | None, out: Path,
                 seed: int | None = None, runner: str = "sealed", jobs: int | None = None,
                 limits=None, selection: Selection | None = None,
                 display: Display | None = None, shard=None) -> int:
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
    if shard is not None:  # may leave none: an empty shard still writes its manifest
        subs = [s for s in subs if shard.holds(s.name)]
    if runner in ("auto", "docker", "docker-gpu", "docker-fork"):
        from .docker_runner import resolve_runner

        runner, why = resolve_runner(runner)
        if runner is None:
            print(why, file=sys.stderr)
            return 2
        display.say(why)
    if runner == "docker-gpu" or (runner in ("sealed", "pod") and gpu_devices()):
        from .sandbox import Limits

        limits = with_gpu(limits or Limits())  # CUDA cannot start under an address-space cap
    if selection.question and runner in ("otter", "docker", "docker-gpu", "docker-fork"):
        print(f"error: --question needs the sealed runner ({runner} runs whole notebooks)",
              file=sys.stderr)
        return 2
    if runner in ("sealed", "pod") and os.geteuid() != 0:
        print("error: the sealed runner confines each notebook with Linux namespaces and an "
              "unprivileged uid, which needs root: run `sudo make grade`, or grade trusted "
              "work with --runner otter", file=sys.stderr)
        return 2
    if seed is None and selection.partial:
        seed = _previous_seed(out)  # a partial run must draw the same hidden inputs
    seed = secrets.randbelow(2**31) if seed is None else seed
    jobs = jobs or os.cpu_count() or 1
    display.say(f"grading {len(subs)} submission(s) from {folder} with seed {seed} "
                f"({runner} runner, {jobs} job(s))")
    out.mkdir(parents=True, exist_ok=True)
    # Written first: a run stopped midway can be resumed with the same seed.
    write_atomic(out / "grading.json", json.dumps(
        {"seed": seed, "folder": str(folder), "runner": runner}, indent=2) + "\n")
    groups, unidentified = _group(listed)  # the whole folder's grouping, shard or not
    graded_assignments = sorted(groups)
    if shard is not None:
        groups = {a: [s for s in g if shard.holds(s.name)] for a, g in groups.items()}
        groups = {a: g for a, g in groups.items() if g}
        unidentified = [s for s in unidentified if shard.holds(s.name)]
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
                plans.append(_Group(name, group, layout, out / name, seed, runner, jobs, limits,
                                    selection, display))
                plans[-1].submit(pool)
            for plan in plans:
                summary["assignments"][plan.assignment] = plan.finish()
    finally:
        for plan in plans:
            plan.close()
    if shard is not None:  # last: a shard without its manifest did not finish
        from . import shards

        zips = {a: ensure_zip(a, layout) for a in graded_assignments}
        shards.write_manifest(out, shards.manifest(shard, seed, runner, [s.name for s in listed],
                                                   [s.name for s in subs], zips))
    failed = any(a["grader_errors"] for a in summary["assignments"].values())
    summary["exit_status"] = 3 if failed else 0
    display.finish(summary)
    return summary["exit_status"]


def _previous_seed(out: Path) -> int | None:
    """The seed ``out/grading.json`` recorded, if any."""
    try:
        return int(json.loads((out / "grading.json").read_text(encoding="utf-8"))["seed"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_rejection(results: Path, sub: Submission) -> None:
    """The result document of a file that was not run at all, and why."""
    from .. import RESULT_SCHEMA_VERSION

    doc = {"schema_version": RESULT_SCHEMA_VERSION, "file": sub.name,
           "assignment": sub.assignment, "status": "rejected", "error": sub.problem,
           "questions": {}}
    write_atomic(results / f"{sub.name}.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")


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
                 seed: int, runner: str, jobs: int, limits, selection: Selection,
                 display: Display):
        self.assignment, self.out, self.display = assignment, out, display
        for base, names in duplicate_names(subs).items():
            display.say(f"  note: {len(names)} {assignment} submissions are named {base} "
                        f"({', '.join(names)}); each is graded under its folder path")
        zip_path = ensure_zip(assignment, layout)
        if runner == "sealed":
            from .sealed import SealedRunner

            self.runner = SealedRunner(zip_path, assignment, seed, out / "results", limits)
        elif runner == "pod":  # inside the grading image's container (pod_entry)
            from .pod_runner import PodRunner

            self.runner = PodRunner(zip_path, assignment, seed, out / "results", limits)
        elif runner == "docker-fork":
            from .docker_runner import ForkRunner

            # a submission's container is cheap to start (no torch in it): start the next
            # one while this one is graded
            self.runner = ForkRunner(zip_path, assignment, seed, out / "results", limits,
                                     spares=jobs)
        elif runner in ("docker", "docker-gpu"):
            from .docker_runner import IMAGES, ContainerLimits, DockerRunner, cuda_on_cpu

            gpu = runner == "docker-gpu"
            # containers started ahead of need use cores the running ones do not: with a job
            # per core (the default) they only compete (measured: 28.6 s without, 30.8 s with,
            # for 20 notebooks on 2 cores)
            spares = min(jobs, max(0, (os.cpu_count() or 1) - jobs))
            self.runner = DockerRunner(zip_path, assignment, seed, out / "results", limits,
                                       image=IMAGES["cuda" if gpu else "cpu"],
                                       box=ContainerLimits(gpus=gpu and not cuda_on_cpu()),
                                       spares=spares)
        else:
            self.runner = otter_run.OtterRunner(zip_path, seed, out / "results")
        self.questions = self.runner.points()
        self.now, self.kept = pick(subs, out / "results", selection)
        self.grade = _grader(self.runner, out, selection)
        if self.grade is None:  # --question names a question of another assignment
            self.now, self.kept = [], subs
        self.futures: list = []

    def _task(self, sub: Submission) -> tuple[Graded, float]:
        start = time.monotonic()
        if sub.problem:
            _write_rejection(self.out / "results", sub)
            return Graded(sub.name, {}, sub.problem), 0.0
        return self.grade(sub), time.monotonic() - start

    def submit(self, pool: ThreadPoolExecutor) -> None:
        if hasattr(self.runner, "expect"):
            self.runner.expect(len(self.now))  # e.g. start containers ahead of need
        self.futures = [pool.submit(self._task, sub) for sub in self.now]

    def finish(self) -> dict:
        """Wait for this group's submissions (progress as they finish, not in order); write
        its timings and CSV; return its summary."""
        possible = sum(self.questions.values())
        fresh: list[Graded] = []
        seconds: dict[str, float] = {}
        with self.display.group(self.assignment, len(self.now)) as advance:
            for future in as_completed(self.futures):
                result, took = future.result()
                fresh.append(result)
                seconds[result.name] = took
                total = sum(s for s, _ in result.scores.values())
                advance(f"{result.name}: {total:g}/{possible:g} ({result.status}, {took:.1f} s)")
        shutil.rmtree(self.out / ".regrade", ignore_errors=True)
        write_timings(self.out / "timings.json", {k: v for k, v in seconds.items() if v})
        rows = fresh + on_disk(self.out / "results", self.kept)
        grades_csv.write(self.out / "final_grades.csv", rows, self.questions)
        self.display.say(f"{self.assignment}: wrote {self.out / 'final_grades.csv'}")
        return _group_summary(rows, fresh, len(self.kept), possible)

    def close(self) -> None:
        for future in self.futures:
            future.cancel()
        if hasattr(self.runner, "close"):
            self.runner.close()  # e.g. containers started ahead of need


def _grader(grade_one, out: Path, selection: Selection):
    """``grade_one``, or with ``--question`` a function that grades that question alone and
    merges it into the document on disk (grading everything where there is none); ``None``
    when this assignment has no such question."""
    if selection.question is None:
        return grade_one
    scratch = out / ".regrade"
    partial = copy.copy(grade_one)
    partial.tests = [t for t in grade_one.tests if t.question == selection.question]
    partial.results = scratch
    if not partial.tests:
        return None

    def grade(sub: Submission) -> Graded:
        merged = regrade_question(partial, scratch, out / "results", sub, selection.question)
        return merged if merged is not None else grade_one(sub)

    return grade


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
    }
