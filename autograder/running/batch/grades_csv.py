"""otter's ``final_grades.csv``: same columns, same points-per-question first row."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..files import write_atomic

from ..results import Graded

POINTS_ROW = "points-per-question"
#: What a spreadsheet takes for the start of a formula (OWASP's CSV injection list), and the
#: quote that neutralises it (also doubled before a leading quote, so that reading back is exact).
#: By hand, not a package (defusedcsv): a few lines, and our reports must read the CSV back to
#: the exact names, which needs the reversible rule below.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(cell) -> str:
    """``cell`` as CSV text no spreadsheet evaluates: text starting like a formula
    (``=cmd|...``, ``+``, ``-``, ``@``, tab, CR) or with a quote gets a leading ``'``;
    numbers (``-0.5``) stay numbers."""
    text = str(cell)
    if text.startswith((*FORMULA_START, QUOTE)) and not _NUMBER.fullmatch(text):
        return QUOTE + text
    return text


def from_spreadsheet(text: str) -> str:
    """The cell ``spreadsheet_safe`` was given (for reading our CSVs back)."""
    return text[1:] if text.startswith(QUOTE) else text


def safe_row(cells: list) -> list[str]:
    return [spreadsheet_safe(c) for c in cells]


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
    return f"{x:g}"
