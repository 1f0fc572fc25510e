"""``OUT/<assignment>/final_grades.csv``: otter's columns and points-per-question first row,
written here (``write``) and read back here (``read``) by the reports and ``autograder merge``."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from ..files import write_atomic
from ..resultdoc import Graded
from .cells import from_spreadsheet, safe_row

FILE = "final_grades.csv"
POINTS_ROW = "points-per-question"
#: The last column once written answers are merged: how many of the row's are not graded yet.
UNGRADED = "written_ungraded"


def write(path: Path, graded: list[Graded], questions: dict[str, float],
          written: tuple[dict[str, float], dict[tuple[str, str], float | None]] | None = None
          ) -> None:
    """Write ``file, <questions...>, total_points_earned, percent_correct, grading_status``.

    Args:
        path: the CSV to write.
        graded: one entry per submission; a failed one scores 0 on every question.
        questions: question -> points possible, from the autograder's tests.
        written: the written questions' points possible, and the graders' points per (file,
            question) (``None``: not graded yet, an empty cell, never 0); they join the
            questions and the totals, and a last column counts each row's ungraded answers.
    """
    by_hand, given = written or ({}, {})
    everything = {**questions, **by_hand}
    names = sorted(everything)
    possible = sum(everything.values())
    f = io.StringIO(newline="")
    out = csv.writer(f)
    extra = [UNGRADED] if written else []
    out.writerow(safe_row(["file", *names, "total_points_earned", "percent_correct",
                           "grading_status", *extra]))
    out.writerow(safe_row([POINTS_ROW, *(_num(everything[q]) for q in names), _num(possible),
                           1, "--", *(["--"] if written else [])]))
    for g in sorted(graded, key=lambda g: g.name):
        earned = [given.get((g.name, q)) if q in by_hand else g.scores.get(q, (0.0, 0.0))[0]
                  for q in names]
        total = sum(e for e in earned if e is not None)
        percent = round(total / possible, 4) if possible else 0
        ungraded = [sum(given.get((g.name, q)) is None for q in by_hand)] if written else []
        out.writerow(safe_row([g.name, *("" if e is None else _num(e) for e in earned),
                               _num(total), percent, g.status, *ungraded]))
    write_atomic(path, f.getvalue())  # a stopped run leaves the old CSV, never half of one


def _num(x: float) -> str:
    return f"{x + 0.0:g}"  # + 0.0: -0 is written 0


@dataclass(frozen=True)
class Grades:
    """``final_grades.csv`` as read back.

    Attributes:
        header: the column names.
        possible: question -> points possible (the points-per-question row).
        rows: one dict per submission, column -> text exactly as in the CSV.
    """

    header: list[str]
    possible: dict[str, float]
    rows: list[dict[str, str]]

    @property
    def questions(self) -> list[str]:
        return [c for c in self.header[1:] if c in self.possible]


def read(folder: Path) -> Grades:
    """``folder/final_grades.csv``, with its points-per-question row taken apart."""
    with open(folder / FILE, newline="", encoding="utf-8") as f:
        # as written, before spreadsheet_safe quoted the cells that look like formulas
        rows = [{from_spreadsheet(k): from_spreadsheet(v) for k, v in r.items()}
                for r in csv.DictReader(f)]
    header = list(rows[0].keys()) if rows else []
    points = next((r for r in rows if r["file"] == POINTS_ROW), {})
    skip = {"file", "total_points_earned", "percent_correct", "grading_status", UNGRADED}
    possible = {k: float(v) for k, v in points.items() if k not in skip}
    return Grades(header, possible, [r for r in rows if r["file"] != POINTS_ROW])


def assignment_dirs(out: Path) -> list[Path]:
    """Every ``OUT/<assignment>`` folder that holds a ``final_grades.csv``."""
    return sorted(p.parent for p in out.glob(f"*/{FILE}"))
