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
import os
import sys

from .authoring.layout import ASSIGNMENTS
from .commands import UsageError, run_assign, run_grade, run_merge, run_report
from .reporting.redaction import DETAIL
from .running.entry.startup import skip_inits

FEEDBACK_HELP = ("what feedback shows: full (the named mistake with the hidden inputs, expected "
                 "values and seed), mistake (the named mistake without hidden values), score "
                 "(points only)")

WRITTEN_NAMES_HELP = ("the written answers' grading pages (OUT/<a>/written/) show file names "
                      "instead of pseudonyms")


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
    p.set_defaults(func=run_assign)

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
    p.add_argument("--replace", action="store_true",
                   help="grade a folder other than the one whose run OUT holds (a new download "
                        "of the class's submissions) into OUT, replacing that run")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="grade only this submission (its path under -p, file name or stem, "
                        "or a path to it from here; repeatable); "
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
    p.set_defaults(func=run_grade)

    p = sub.add_parser("merge", help="join the outputs of `grade --shard` into one output")
    p.add_argument("shards", nargs="+", metavar="OUT_I", help="every shard's output folder")
    p.add_argument("-o", "--output", required=True,
                   help="the merged output (a new or empty folder)")
    p.add_argument("--roster", metavar="FILE",
                   help="CSV with columns file,student_id for the Canvas gradebook")
    p.add_argument("--no-reports", action="store_true",
                   help="skip feedback, class reports and exports after merging")
    p.set_defaults(func=run_merge)

    p = sub.add_parser("report", help="write feedback, class reports and exports from OUT")
    p.add_argument("-o", "--output", default="out", help="results folder (default: out)")
    p.add_argument("--roster", metavar="FILE",
                   help="CSV with columns file,student_id for the Canvas gradebook (default: "
                        "the roster the grading run recorded in OUT/grading.json; another one "
                        "is refused)")
    p.add_argument("--feedback", choices=DETAIL, default=None,
                   help=FEEDBACK_HELP + " (default: what the grading run recorded)")
    p.add_argument("--written", nargs="+", metavar="SCORES", default=None,
                   help="scores files of the written answers (CSV: file,question,points,"
                        "comment[,answer]; one per grader or question), checked, merged into the "
                        "grades, feedback and reports; they replace the scores merged before for the "
                        "assignments they score (kept as OUT/<a>/written/merged_scores-<time>"
                        ".csv); a score applies only to the answer it was given for")
    p.add_argument("--written-names", action="store_true", help=WRITTEN_NAMES_HELP)
    p.set_defaults(func=run_report)
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


class ReaderGone:
    """A standard stream whose reader may leave early (``grade ... | head -1``): a write or
    flush after the pipe closed points the stream's descriptor at ``/dev/null`` instead of
    raising ``BrokenPipeError`` into the grader (red-team rt-2: a traceback from a progress line,
    exit status 1, no ``final_grades.csv``). The work and every file go on; the lines stop."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data: str) -> int:
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            self._gone()
            return len(data)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        # the descriptor itself, so that what is still buffered (and the interpreter's own
        # flush at exit) goes nowhere, quietly
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def run() -> None:
    """The process entry (``autograder``, ``python -m autograder``): one command per process,
    and otter's own ``__init__`` (pandas, nbconvert: about 0.6 s) is skipped, since the process
    reads only ``otter.test_files`` (otter itself runs in processes of its own). Torch runs on
    one intra-op thread here unless ``OMP_NUM_THREADS`` says otherwise, as in every worker and
    container: the judge computes its references while a worker runs (each on a core of its
    own, or ``--jobs`` of each), and a thread per CPU in the judge only made their OpenMP threads
    spin against each other (15 % slower per submission with the sealed runner)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    skip_inits()
    sys.stdout, sys.stderr = ReaderGone(sys.stdout), ReaderGone(sys.stderr)
    sys.exit(main())


if __name__ == "__main__":
    run()
