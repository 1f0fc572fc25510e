"""``autograder``: the command staff run.

    autograder assign [ASSIGNMENT ...] [--check]
    autograder grade -p FOLDER|NOTEBOOK [-a ASSIGNMENT] [-o OUT] [--resume] [--only NAME]
                     [--question Q] [--json] [--roster FILE] [--feedback full|mistake|score]
    autograder report [-o OUT] [--roster FILE] [--feedback full|mistake|score]
                      [--written SCORES.csv ...] [--written-names]
    autograder grade ... --shard I/N --seed S;  autograder merge OUT1 OUT2 ... -o OUT

It works from any folder. The project (the folder holding assignments/) is --project, else
$AUTOGRADER_PROJECT, else the checkout the package was installed from (`pip install -e .`),
else the current folder; build outputs go to PROJECT/build unless --build says otherwise.
Relative -p, -o and --roster paths are taken from the current folder. Every argument is
checked before any work starts; a bad one is a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .authoring.layout import ASSIGNMENTS, Layout, find_project
from .reporting.redaction import DETAIL

if TYPE_CHECKING:  # imported where used: `autograder --help` imports no batch code
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

FEEDBACK_HELP = ("what feedback shows: full (the named mistake with the hidden inputs, expected "
                 "values and seed), mistake (the named mistake without hidden values), score "
                 "(points only)")

WRITTEN_NAMES_HELP = ("the written answers' grading pages (OUT/<a>/written/) show file names "
                      "instead of pseudonyms")

#: Exit statuses: the grader failed (a submission's grader error, or a runner that could not
#: start); grading finished (``final_grades.csv`` written) but the reports failed.
GRADER_FAILED, REPORTS_FAILED = 3, 4


def _assign(args: argparse.Namespace) -> int:
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
    from .running.batch.selection import Selection
    from .running.batch.shards import parse
    from .running.limits import Limits

    return Options(
        folder=Path(args.path), layout=_layout(args), out=Path(args.output),
        assignment=args.assignment, seed=args.seed, runner=args.runner, jobs=args.jobs,
        limits=Limits.timed(args.timeout, args.submission_timeout),
        selection=Selection(resume=args.resume, only=tuple(args.only or ()),
                            question=args.question),
        roster=_roster(args.roster), feedback=args.feedback,
        shard=parse(args.shard) if args.shard else None)


def _grade(args: argparse.Namespace) -> int:
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


def _report(args: argparse.Namespace) -> int:
    from .running.outputs.final_grades import assignment_dirs

    out = Path(args.output)
    if not assignment_dirs(out):  # a typo'd -o: nothing to report, and nothing is written
        raise UsageError(f"-o {out}: no grading output there (no <assignment>/final_grades.csv)"
                         f"; grade first: autograder grade -p FOLDER -o {out}")
    _roster(args.roster)  # a bad roster: one line, before any report is rewritten
    if args.written:  # every scores file checked before anything is written
        from .reporting import written

        try:
            merged = written.check(out, [Path(p) for p in args.written])
        except (written.scores.ScoresError, OSError, ValueError) as exc:
            raise UsageError(f"--written {exc}") from None
        written.keep(out, merged)
    return _write_reports(out, args.roster, print, args.feedback, args.written_names)


def _merge(args: argparse.Namespace) -> int:
    from .running.batch.merge import MergeError, merge

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", "--root", dest="project", default=None, metavar="FOLDER",
                        help="the project (the folder holding assignments/); default: "
                             "$AUTOGRADER_PROJECT, else the checkout the package was installed "
                             "from, else the current folder")
    parser.add_argument("--build", default=None, help="build folder (default: PROJECT/build)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("assign", help="run otter assign on the masters")
    p.add_argument("assignments", nargs="*", help=f"default: all ({', '.join(ASSIGNMENTS)})")
    p.add_argument("--check", action="store_true",
                   help="compare committed templates and solutions with a fresh build")
    p.set_defaults(func=_assign)

    p = sub.add_parser("grade", help="grade a folder of submitted notebooks, or one notebook")
    p.add_argument("-p", "--path", required=True,
                   help="a folder of submissions (searched recursively; otter 4's -p) or one "
                        "notebook")
    p.add_argument("-a", "--assignment", default=None,
                   help="assignment name (default: read from each notebook's otter metadata)")
    p.add_argument("-o", "--output", default="out", help="results folder (default: out)")
    p.add_argument("--seed", type=int, default=None,
                   help="grading seed (default: a fresh one, recorded in the results)")
    p.add_argument("--jobs", type=int, default=None,
                   help="submissions graded at once (default: the number of cores)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds one call of student code may take; a notebook cell may "
                        "take four times as long (default: 30)")
    p.add_argument("--submission-timeout", type=float, default=300.0,
                   help="seconds one submission may take in all (default: 300)")
    from .running.runners.registry import AUTO, CHOICES, help_text

    p.add_argument("--runner", choices=CHOICES, default=AUTO, help=help_text())
    p.add_argument("--resume", action="store_true",
                   help="skip submissions that already have a result in OUT (same seed); "
                        "a grader error is graded again")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="grade only this submission (path, file name or stem; repeatable); "
                        "the others' results are kept")
    p.add_argument("--question", metavar="Q",
                   help="regrade only question Q, merging into the existing results (the "
                        "sealed runner only: --runner sealed, as root)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON summary on stdout and nothing else (progress on stderr)")
    p.add_argument("--roster", metavar="FILE",
                   help="CSV with exactly the columns file,student_id: the Canvas gradebook's "
                        "ids, and what each submission's hidden inputs are derived from "
                        "(checked before any work; recorded in OUT/grading.json, which "
                        "--resume, --only and --question reuse when none is given)")
    p.add_argument("--feedback", choices=DETAIL, default=None,
                   help=FEEDBACK_HELP + " (default: the run's recorded choice, else full)")
    p.add_argument("--no-reports", action="store_true",
                   help="skip feedback, class reports and exports after grading")
    p.add_argument("--written-names", action="store_true", help=WRITTEN_NAMES_HELP)
    p.add_argument("--shard", metavar="I/N",
                   help="grade only part I of N of the folder (needs --seed; join the parts "
                        "with `autograder merge`; no reports until then)")
    p.set_defaults(func=_grade)

    p = sub.add_parser("merge", help="join the outputs of `grade --shard` into one output")
    p.add_argument("shards", nargs="+", metavar="OUT_I", help="every shard's output folder")
    p.add_argument("-o", "--output", required=True,
                   help="the merged output (a new or empty folder)")
    p.add_argument("--roster", metavar="FILE",
                   help="CSV with columns file,student_id for the Canvas gradebook")
    p.add_argument("--no-reports", action="store_true",
                   help="skip feedback, class reports and exports after merging")
    p.set_defaults(func=_merge)

    p = sub.add_parser("report", help="write feedback, class reports and exports from OUT")
    p.add_argument("-o", "--output", default="out", help="results folder (default: out)")
    p.add_argument("--roster", metavar="FILE",
                   help="CSV with columns file,student_id for the Canvas gradebook (default: "
                        "the roster the grading run recorded in OUT/grading.json)")
    p.add_argument("--feedback", choices=DETAIL, default=None,
                   help=FEEDBACK_HELP + " (default: what the grading run recorded)")
    p.add_argument("--written", nargs="+", metavar="SCORES", default=None,
                   help="scores files of the written answers (CSV: file,question,points,"
                        "comment; one per grader or question), checked, merged into the "
                        "grades, feedback and reports; they replace the scores merged before for the "
                        "assignments they score")
    p.add_argument("--written-names", action="store_true", help=WRITTEN_NAMES_HELP)
    p.set_defaults(func=_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # outside grading (which stops cleanly itself): files are
        # written atomically, so what was written is whole; one line, no traceback
        print("interrupted (Ctrl-C)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
