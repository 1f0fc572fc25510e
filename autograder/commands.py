"""What each ``autograder`` command does, given its parsed arguments (``cli`` parses them):
``run_assign``, ``run_grade``, ``run_report``, ``run_merge``. Every argument is checked before
any work starts; a bad one raises ``UsageError``. Everything past the arguments is imported
where it is used: ``autograder --help`` imports no batch code (and no torch)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .authoring.layout import ASSIGNMENTS, Layout, find_project

if TYPE_CHECKING:
    from .running.batch.options import Options


class UsageError(Exception):
    """A bad argument, found before any work starts: one line, exit status 2."""


def _layout(args: argparse.Namespace) -> Layout:
    try:
        return Layout.at(find_project(args.project), args.build)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _no_such(option: str, name: str) -> str:
    return f"{option} {name}: no such assignment ({', '.join(ASSIGNMENTS)})"


def _known(option: str, name: str) -> str:
    if name not in ASSIGNMENTS:
        raise UsageError(_no_such(option, name))
    return name


def grade_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``autograder grade``'s arguments, or ``None``: checked before any
    zip is built and any container or zygote started (pure: it only looks at the disk)."""
    path = Path(args.path)
    if args.assignment is not None and args.assignment not in ASSIGNMENTS:
        return _no_such("-a", args.assignment)
    if not path.exists():
        return f"-p {path}: no such file or folder"
    if path.is_file() and path.suffix != ".ipynb":
        return f"-p {path}: not a folder of submissions or a .ipynb notebook"
    if Path(args.output).exists() and not Path(args.output).is_dir():
        return f"-o {args.output}: exists and is not a folder"
    overlap = overlapping("-o", Path(args.output), "-p", path)
    if overlap:
        return overlap
    if args.roster and not Path(args.roster).is_file():
        return f"--roster {args.roster}: no such file"
    if args.jobs is not None and args.jobs < 1:
        return f"--jobs {args.jobs}: must be at least 1"
    for option, value in (("--timeout", args.timeout),
                          ("--submission-timeout", args.submission_timeout)):
        if not value > 0:
            return f"{option} {value:g}: must be a positive number of seconds"
    if getattr(args, "shard", None):
        from .running.batch.shards import parse

        try:
            parse(args.shard)
        except ValueError as exc:
            return str(exc)
        if args.seed is None:
            return "--shard needs --seed: every shard must grade with the same seed"
    from .running.runners.registry import option_problem

    return option_problem(args.runner, args.question)


def overlapping(out_option: str, out: Path, in_option: str, given: Path) -> str | None:
    """Why output folder ``out`` may not be used beside ``given`` (the submissions, a shard),
    or ``None``: the same folder, one inside the other (symbolic links resolved). The outputs'
    own housekeeping (old feedback removed, old documents moved aside) would touch what a
    student submitted, and the next run would grade our own files."""
    try:
        o, g = out.resolve(), given.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        return f"{out_option} {out}: cannot be resolved ({exc})"
    if o == g:
        how = "is"
    elif g.is_relative_to(o):
        how = "holds"
    elif o.is_relative_to(g):
        how = "is inside"
    else:
        return None
    from .running.names import printable

    return printable(f"{out_option} {out} {how} {in_option} {given} ({o} and {g}): write "
                     f"the output to a folder of its own, outside it", lines=False)


#: Exit statuses: the grader failed (a submission's grader error, or a runner that could not
#: start); grading finished (``final_grades.csv`` written) but the reports failed.
GRADER_FAILED, REPORTS_FAILED = 3, 4


def run_assign(args: argparse.Namespace) -> int:
    """``autograder assign``: build each assignment's zip, or (``--check``) compare."""
    from .authoring.assign import AssignError, assign, differences

    names = [_known("assign", a) for a in (args.assignments or ASSIGNMENTS)]
    layout = _layout(args)
    status, built = 0, []
    for name in names:
        try:
            if args.check:
                diffs = differences(name, layout)
                for d in diffs:
                    print(f"out of date: {d}")
                status |= bool(diffs)
                print(f"{name}: {'out of date, run `make assign`' if diffs else 'in sync'}")
            else:
                print(f"{name}: autograder zip {assign(name, layout)} (build output: never "
                      "commit it, it holds every hidden test)")
                built.append(name)
        except AssignError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
    if built:
        print("commit these (git add):")
        for name in built:
            for path in (layout.templates(name), layout.solution(name)):
                shown = path.relative_to(layout.root) if path.is_relative_to(layout.root) \
                    else path
                print(f"  {shown}{'/' if path.is_dir() else ''}")
    return status


def grade_options(args: argparse.Namespace) -> Options:
    """``autograder grade``'s arguments as the batch's options (checked: ``grade_problem``)."""
    from .running.batch.options import Options
    from .running.batch.selection import Selection, as_listed
    from .running.batch.shards import parse
    from .running.limits import Limits

    return Options(
        folder=Path(args.path), layout=_layout(args), out=Path(args.output),
        assignment=args.assignment, seed=args.seed, runner=args.runner, jobs=args.jobs,
        limits=Limits.timed(args.timeout, args.submission_timeout),
        selection=Selection(resume=args.resume,
                            only=as_listed(tuple(args.only or ()), Path(args.path)),
                            question=args.question),
        roster=_roster(args.roster), feedback=args.feedback,
        shard=parse(args.shard) if args.shard else None, replace=args.replace)


def run_grade(args: argparse.Namespace) -> int:
    """``autograder grade``: grade the folder, then write the reports (unless a shard)."""
    from .running.batch.folder import grade_folder
    from .running.batch.group import RunnerStartError
    from .running.batch.progress import choose

    problem = grade_problem(args)
    if problem:
        raise UsageError(problem)
    options = grade_options(args)
    display = choose(machine=args.json)
    try:
        status = grade_folder(options, display)
    except RunnerStartError as exc:
        from .running.names import printable

        print(printable(f"error: {exc}", lines=False)[:2000], file=sys.stderr)
        return GRADER_FAILED
    # 3: some grader errors, still results; a shard's reports are written once, by
    # `autograder merge`, from every shard's results
    if status in (0, 3) and not args.no_reports and options.shard is None:
        # the grades CSVs are written by now; a reports step that fails says so (one line)
        # and the run is not reported as a success
        reports = _write_reports(Path(args.output), args.roster, display.say, args.feedback,
                                 args.written_names)
        status = status or reports
    return status


def _roster(path: str | None) -> dict[str, str] | None:
    """The roster's file -> student id map (``None`` without one); a bad roster is a usage
    error, found before anything is graded."""
    if not path:
        return None
    from .running.outputs.roster import read_roster

    try:
        return read_roster(Path(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"--roster {path}: {exc}") from None


def _same_roster(path: str | None, out: Path) -> None:
    """A roster given to ``report`` must be the one the grading run recorded, as for a
    partial ``grade`` (``preflight.roster_for``): each student's hidden inputs were drawn for
    the recorded ids, and another roster would export those grades under other ids (red-team
    rt-2). Without a recorded roster one may be given (the ids were files' paths)."""
    given = _roster(path)  # a bad roster: one line
    if given is None:
        return
    from .running.outputs import grading_json

    recorded = grading_json.roster(grading_json.read(out))
    if recorded is not None and given != recorded:
        raise UsageError(f"--roster {path}: the run in {out} was graded with another roster "
                         f"({len(recorded)} row(s)): its grades would be exported under other "
                         f"ids than its hidden inputs were drawn for; pass that roster, or "
                         f"none to use what {out / 'grading.json'} recorded")


def run_report(args: argparse.Namespace) -> int:
    """``autograder report``: merge written scores, then write the reports from OUT."""
    from .reporting.build import assignment_outputs

    out = Path(args.output)
    if not assignment_outputs(out):  # a typo'd -o: nothing to report, and nothing is written
        raise UsageError(f"-o {out}: no grading output there (no <assignment>/final_grades.csv)"
                         f"; grade first: autograder grade -p FOLDER -o {out}")
    _same_roster(args.roster, out)  # one line, before any report is rewritten
    if args.written:  # every scores file checked before anything is written
        from .reporting import written

        try:
            merged = written.check(out, [Path(p) for p in args.written])
        except (written.scores.ScoresError, OSError, ValueError) as exc:
            raise UsageError(f"--written {exc}") from None
        for line in written.keep(out, merged):
            print(line)
    if args.feedback:  # recorded: the next run's and report's pages keep it (red-team rt-s3)
        from .running.outputs import grading_json

        if grading_json.read(out):
            grading_json.update(out, feedback=args.feedback)
    return _write_reports(out, args.roster, print, args.feedback, args.written_names)


def run_merge(args: argparse.Namespace) -> int:
    """``autograder merge``: join the shards' outputs into one, then write the reports."""
    from .running.batch.merge import MergeError, merge

    for shard in args.shards:  # checked before anything is written
        overlap = overlapping("-o", Path(args.output), "shard", Path(shard))
        if overlap:
            raise UsageError(overlap)
        # the shards drew each student's inputs for the roster they recorded (they agree on
        # it: merge's "identities"); exported under another one, the ids would not match
        _same_roster(args.roster, Path(shard))
    try:
        merge([Path(p) for p in args.shards], Path(args.output), say=print)
    except MergeError as exc:
        raise UsageError(str(exc)) from None
    return 0 if args.no_reports else _write_reports(Path(args.output), args.roster, print)


def _write_reports(out: Path, roster: str | None, say, detail: str | None = None,
                   written_names: bool = False) -> int:
    """Feedback, class reports and exports from the results in ``out``."""
    from .reporting.build import write_reports
    from .running.names import printable

    try:
        for path in write_reports(out, Path(roster) if roster else None, detail=detail,
                                  say=say, written_names=written_names):
            say(f"wrote {path}")
    except Exception as exc:  # noqa: BLE001 - any failure: one line, and a nonzero status
        print(printable(f"error: reports: {type(exc).__name__}: {exc}", lines=False)[:2000],
              file=sys.stderr)
        return REPORTS_FAILED
    return 0
