"""Gradebook exports beside otter's ``final_grades.csv``: a Canvas-friendly CSV and JSON lines."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..running.files import write_atomic
from ..running.grades_csv import safe_row
from .documents import Grades, iter_results

#: Canvas's gradebook import matches students on these columns; we fill SIS User ID.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def read_roster(path: Path) -> dict[str, str]:
    """A roster CSV with columns ``file`` and ``student_id``: file (path, name or stem) -> id.

    Raises:
        ValueError: when a column is missing.
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"file", "student_id"} <= set(rows[0]):
        raise ValueError(f"{path}: a roster needs the columns file,student_id")
    return {r["file"].strip(): r["student_id"].strip() for r in rows}


def student_id(file: str, roster: dict[str, str] | None) -> str:
    """The roster's id for ``file`` (matched on its path, name or stem), else the file's stem."""
    name = file.rsplit("/", 1)[-1]
    stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    for key in (file, name, stem):
        if roster and key in roster:
            return roster[key]
    return stem


def canvas_csv(grades: Grades, assignment: str, roster: dict[str, str] | None) -> str:
    """Canvas's import layout: identity columns, one column of total points, and the
    ``Points Possible`` row Canvas's own exports carry."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(safe_row([*CANVAS_COLUMNS, assignment]))
    out.writerow(safe_row(["Points Possible", "", "", "", "",
                           f"{sum(grades.possible.values()):g}"]))
    for row in sorted(grades.rows, key=lambda r: student_id(r["file"], roster)):
        sid = student_id(row["file"], roster)
        out.writerow(safe_row([sid, "", sid, "", "", row["total_points_earned"]]))
    return buf.getvalue()


def write_canvas(folder: Path, grades: Grades, roster: dict[str, str] | None) -> Path:
    path = folder / "canvas_gradebook.csv"
    write_atomic(path, canvas_csv(grades, folder.name, roster))
    return path


def write_jsonl(folder: Path) -> Path:
    """``folder/results.jsonl``: every result document, one compact line each, by file
    (streamed: one document in memory at a time)."""
    path = folder / "results.jsonl"
    write_atomic(path, (json.dumps(d, sort_keys=True, ensure_ascii=False) + "\n"
                        for d in iter_results(folder)))
    return path
