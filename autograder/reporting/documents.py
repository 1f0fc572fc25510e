"""Reading what a grading run left in ``OUT/<assignment>/``: result documents, grades, timings."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..running.batch.grades_csv import POINTS_ROW, UNGRADED, from_spreadsheet
from ..running.resultdoc import ResultDoc


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


def assignment_dirs(out: Path) -> list[Path]:
    """Every ``OUT/<assignment>`` folder that holds a ``final_grades.csv``."""
    return sorted(p.parent for p in out.glob("*/final_grades.csv"))


def load_results(folder: Path) -> list[dict]:
    """The result documents under ``folder/results``, sorted by file name (``iter_results``
    in a list: only for callers that need them all at once)."""
    return list(iter_results(folder))


def iter_results(folder: Path) -> Iterator[dict]:
    """The result documents under ``folder/results``, sorted by file name, read one at a time
    (a class's documents are never all in memory).

    A file that is not a result document of this grader is an error naming it
    (``ResultDoc.read``).
    """
    results = folder / "results"
    # a document's path is results/<file>.json: sorting paths by <file> sorts by file name
    paths = sorted(results.rglob("*.json"), key=lambda p: p.relative_to(results).as_posix())
    for path in paths:
        yield ResultDoc.read(path).to_dict()


def load_grades(folder: Path) -> Grades:
    """``folder/final_grades.csv``, with its points-per-question row taken apart."""
    with open(folder / "final_grades.csv", newline="", encoding="utf-8") as f:
        # as written, before spreadsheet_safe quoted the cells that look like formulas
        rows = [{from_spreadsheet(k): from_spreadsheet(v) for k, v in r.items()}
                for r in csv.DictReader(f)]
    header = list(rows[0].keys()) if rows else []
    points = next((r for r in rows if r["file"] == POINTS_ROW), {})
    skip = {"file", "total_points_earned", "percent_correct", "grading_status", UNGRADED}
    possible = {k: float(v) for k, v in points.items() if k not in skip}
    return Grades(header, possible, [r for r in rows if r["file"] != POINTS_ROW])


def load_timings(folder: Path) -> dict[str, float]:
    """Seconds per submission from ``folder/timings.json`` ({} when there is none)."""
    path = folder / "timings.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def stem(file: str) -> str:
    """``"autograd-exercises/alan-turing.ipynb"`` -> ``"autograd-exercises/alan-turing"``."""
    return file[: -len(".ipynb")] if file.endswith(".ipynb") else file
