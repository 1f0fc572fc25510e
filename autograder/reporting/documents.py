"""Reading what a grading run left in ``OUT/<assignment>/``: result documents, grades, timings."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ..running.grades_csv import POINTS_ROW


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
    """The result documents under ``folder/results``, sorted by file name.

    Documents without ``schema_version`` (stock otter's ``results.json``, from ``--runner
    otter``) are skipped: they carry no messages per check to render.
    """
    docs = []
    for path in sorted((folder / "results").rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "schema_version" in doc:
            docs.append(doc)
    return sorted(docs, key=lambda d: d["file"])


def load_grades(folder: Path) -> Grades:
    """``folder/final_grades.csv``, with its points-per-question row taken apart."""
    with open(folder / "final_grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0].keys()) if rows else []
    points = next((r for r in rows if r["file"] == POINTS_ROW), {})
    skip = {"file", "total_points_earned", "percent_correct", "grading_status"}
    possible = {k: float(v) for k, v in points.items() if k not in skip}
    return Grades(header, possible, [r for r in rows if r["file"] != POINTS_ROW])


def load_timings(folder: Path) -> dict[str, float]:
    """Seconds per submission from ``folder/timings.json`` ({} when there is none)."""
    path = folder / "timings.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def stem(file: str) -> str:
    """``"autograd-exercises/alan-turing.ipynb"`` -> ``"autograd-exercises/alan-turing"``."""
    return file[: -len(".ipynb")] if file.endswith(".ipynb") else file
