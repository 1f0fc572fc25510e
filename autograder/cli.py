"""``autograder``: the command staff run.

    autograder assign [ASSIGNMENT ...] [--check]
    autograder grade -p submissions/ [-a ASSIGNMENT] [-o OUT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .authoring.layout import ASSIGNMENTS, Layout, check_assignment


def _assign(args: argparse.Namespace) -> int:
    from .authoring.assign import AssignError, assign, differences

    layout = Layout.at(args.root, args.build)
    names = [check_assignment(a) for a in (args.assignments or ASSIGNMENTS)]
    status = 0
    for name in names:
        try:
            if args.check:
                diffs = differences(name, layout)
                for d in diffs:
                    print(f"out of date: {d}")
                status |= bool(diffs)
                print(f"{name}: {'out of date, run `make assign`' if diffs else 'in sync'}")
            else:
                print(f"{name}: autograder zip {assign(name, layout)}")
        except AssignError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
    return status


def _grade(args: argparse.Namespace) -> int:
    from .running.batch import grade_folder

    from .running.sandbox import Limits

    limits = Limits(call_timeout=args.timeout, cell_timeout=4 * args.timeout,
                    submission_timeout=args.submission_timeout)
    return grade_folder(Path(args.path), Layout.at(args.root, args.build),
                        assignment=args.assignment, out=Path(args.output), seed=args.seed,
                        runner=args.runner, jobs=args.jobs, limits=limits)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=".", help="project root (default: .)")
    parser.add_argument("--build", default=None, help="build folder (default: ROOT/build)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("assign", help="run otter assign on the masters")
    p.add_argument("assignments", nargs="*", help=f"default: all ({', '.join(ASSIGNMENTS)})")
    p.add_argument("--check", action="store_true",
                   help="compare committed templates and solutions with a fresh build")
    p.set_defaults(func=_assign)

    p = sub.add_parser("grade", help="grade a folder of submitted notebooks")
    p.add_argument("-p", "--path", required=True, help="folder of submissions (otter 4's -p)")
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
    p.add_argument("--runner", choices=("sealed", "otter"), default="sealed",
                   help="sealed: the judge never runs student code in its own process "
                        "(default); otter: stock `otter run`, tests in the student's kernel")
    p.set_defaults(func=_grade)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
