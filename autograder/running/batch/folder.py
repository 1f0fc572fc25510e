"""Grade a folder of submissions and write ``final_grades.csv`` plus one JSON per submission.

The runners, and ``auto`` which picks one, are in ``registry``; each grades one submission and
returns its ``ResultDoc``, which the batch writes (a rejected file's too, without running it).
Each assignment's part of the batch is a ``group.Group``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import sys
from concurrent.futures import ThreadPoolExecutor

from ...authoring.assign import ensure_zip
from ...checks.seeding import submission_seed
from ..outputs import grading_json, unplaced
from ..outputs.roster import absent_lines, identity, write_absent
from ..resultdoc import DocumentError
from ..runners import registry
from ..runners.container import zip_points
from ..submissions import Submission, find
from . import interrupt, preflight
from .group import Group
from .options import Options
from .progress import Display
from .selection import Picked, pick


def grade_folder(options: Options, display: Display | None = None) -> int:
    """Grade every notebook under ``options.folder``; return the process exit status.

    Student problems (bad files, crashes, timeouts) are rows in the CSV, not failures: the exit
    status is nonzero only when there is nothing to grade, an argument is wrong (2, before any
    work: ``preflight``), the grader itself failed (3) or a SIGINT stopped the run (130,
    ``interrupt``). ``options.selection`` grades part of the batch and merges into
    ``options.out`` (``--resume``, ``--only``, ``--question``); ``display`` shows progress and
    prints the final summary. ``options.shard`` grades only its part of the folder and writes
    ``shard.json`` last. Every file of the folder that no CSV holds is listed with the reason
    (``unplaced``); so is every roster row that no notebook matched (``not_submitted.csv``).
    """
    display = display or Display(sys.stdout)
    stop = interrupt.Stop()
    with interrupt.catching(stop), contextlib.ExitStack() as hold:
        try:
            return _grade_folder(options, display, stop, hold)
        except preflight.Refused as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2


def _grade_folder(options: Options, display: Display, stop: interrupt.Stop,
                  hold: contextlib.ExitStack) -> int:
    folder, out, selection, shard = options.folder, options.out, options.selection, options.shard
    previous = grading_json.read(out)  # what the last run in ``out`` recorded
    assignment, recorded_as = preflight.assignment_for(options.assignment, previous, selection,
                                                       out)
    try:  # before any runner starts: a wrong -p costs no judge container
        found = find(folder, assignment)
    except FileNotFoundError as exc:
        raise preflight.Refused(str(exc)) from None
    if not found:
        raise preflight.Refused(f"{folder}: no .ipynb files to grade")
    preflight.check_only(found, selection.only, folder)
    roster, said = preflight.roster_for(options.roster, previous.get("roster"), selection, out)
    absent = preflight.check_roster(found, roster)
    preflight.same_run(previous, folder, options.seed, selection, out, options.replace)
    preflight.same_shard(previous, shard, selection, out)
    preflight.known_seed(previous, options.seed, selection, out)
    seed = options.seed
    if seed is None and selection.partial:
        seed = grading_json.seed(previous)  # a partial run must draw the same hidden inputs
    seed = secrets.randbelow(2**31) if seed is None else seed
    # each submission's own seed, set here once: every part of the batch after this reads it
    listed = [_seeded(sub, seed, roster) for sub in found]
    subs = listed
    groups, unplaced_subs = _group(listed)  # the whole folder's grouping, shard or not
    preflight.check_assignment(assignment, groups, listed, folder)
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
            a: sorted(zip_points(ensure_zip(a, options.layout))) for a in groups},
            preflight.written_names(options.layout, groups))
    preflight.writable(out)
    kind, why = registry.resolve(options.runner, selection.question)
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
    if assignment != options.assignment:
        display.say(f"using -a {assignment}, recorded in {out / grading_json.FILE} by the run "
                    "this one continues")
    run = dataclasses.replace(  # every default decided
        options, seed=seed, roster=roster, runner=kind.name,
        limits=kind.limits(options.limits),  # e.g. CUDA cannot start under an address cap
        jobs=options.jobs or kind.default_jobs(),
        feedback=options.feedback or previous.get("feedback") or "full")
    # The output folder is this run's alone until it ends: two runs into it at once each
    # moved the other's documents aside as stale (red-team round rt-2).
    hold.enter_context(preflight.locked(out))
    now, placed = sum(len(picks[a].now) for a in groups), sum(map(len, groups.values()))
    display.say(f"grading {now}{f' of {placed}' if now != placed else ''} submission(s) from "
                f"{folder} with seed {seed} ({run.runner} runner, {run.jobs} job(s))")
    # Written first: a run stopped midway can be resumed with the same seed and roster.
    out.mkdir(parents=True, exist_ok=True)
    grading_json.write(out, seed=seed, folder=str(folder), runner=run.runner,
                       feedback=run.feedback, roster=roster or {}, seeds=grading_json.SEEDS,
                       folder_resolved=str(folder.resolve()),
                       shard=None if shard is None else str(shard), assignment=recorded_as,
                       finished=False)
    if selection.resume and not previous and not preflight.holds_documents(out):
        display.say(f"  note: nothing to resume in {out} (no earlier run there): every "
                    "submission is graded")
    was = previous.get("folder_resolved")
    if options.replace and isinstance(was, str) and was != str(folder.resolve()):
        display.say(f"  note: this run replaces the run of {was} in {out}: its results of "
                    "files this folder lacks are moved to stale/ once the grades are written")
    for name, pk in sorted(picks.items()):
        for sub in sorted(pk.redrawn):
            display.say(f"  note: {sub} was graded in {out / name / 'results'} with another "
                        "seed than this run's (an earlier run stopped midway, or its record "
                        "lost): graded again")
        for sub in sorted(pk.changed):
            display.say(f"  note: {sub} has changed since {out / name / 'results'} graded it "
                        + ("(a resubmission?): graded again in full" if any(
                            s.name == sub for s in pk.now) else
                           "(a resubmission?): kept as graded; --resume grades it again"))
    for sub in subs:
        if sub.note and not sub.problem:
            display.say(f"  note: {sub.note}")
    left = sorted([(s.name, s.problem.removeprefix(f"{s.name}: ")) for s in unplaced_subs]
                  + [(name, why) for name, why in unplaced.ignored(folder)
                     if shard is None or shard.holds(name)])
    summary = {"seed": seed, "runner": run.runner, "out": str(out), "assignments": {},
               "unplaced": [f"{name}: {reason}" for name, reason in left],
               "not_submitted": [] if shard is not None else
               [{"file": key, "student_id": roster[key]} for key in absent]}
    placed_at = unplaced.write(out, left)
    if shard is None:
        write_absent(out, summary["not_submitted"])
    plans = _grade_groups(groups, picks, run, kind, display, stop)
    for plan in plans:
        summary["assignments"][plan.assignment] = plan.summary
    if stop.stopping:
        return interrupt.interrupted(summary, plans, display)
    if shard is not None:  # last: a shard without its manifest did not finish
        from . import shards

        zips = {a: ensure_zip(a, run.layout) for a in graded_assignments}
        shards.write_manifest(out, shards.manifest(
            shard, seed, run.runner, [s.name for s in listed], [s.name for s in subs], zips,
            [identity(s.name, roster) for s in listed],
            shards.documents(out, {a: [s.name for s in g] for a, g in groups.items()})))
    # last: the CSVs and documents agree now (a run stopped before this line leaves the
    # record unfinished, and ``report`` refuses its mix of old and new grades: red-team rt-s3)
    grading_json.update(out, finished=True)
    failed = any(a["grader_errors"] for a in summary["assignments"].values())
    summary["exit_status"] = 3 if failed else 0
    display.finish(summary)
    for line in unplaced.lines(left, placed_at) + absent_lines(summary["not_submitted"], out):
        display.say(line)
    return summary["exit_status"]


def _grade_groups(groups: dict[str, list[Submission]], picks: dict[str, Picked], run: Options,
                  kind: registry.RunnerKind, display: Display,
                  stop: interrupt.Stop) -> list[Group]:
    """Grade every group's picked submissions in one pool; each plan's ``summary`` is set for
    the groups that got as far (all of them, unless a SIGINT stopped the run first)."""
    # One pool for every assignment: a slow or timed-out notebook of the first assignment
    # never leaves a core idle while the second one waits.
    plans: list[Group] = []
    batch = sum(1 for p in picks.values() for sub in p.now if not sub.problem)
    pool = ThreadPoolExecutor(max_workers=run.jobs)
    try:
        for name, group in sorted(groups.items()):
            if stop.stopping:
                break
            plans.append(Group(name, group, picks[name], run, kind, display, stop, batch))
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
