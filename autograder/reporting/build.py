"""Everything reporting writes for a finished grading run, in one call."""

from __future__ import annotations

from pathlib import Path

from . import class_report, exports, feedback
from .documents import assignment_dirs, load_grades


def write_reports(out: Path, roster: Path | None = None) -> list[Path]:
    """Feedback, class report and exports for every ``OUT/<assignment>``.

    Args:
        out: the grading run's output folder.
        roster: optional CSV (``file,student_id``) for the Canvas gradebook's identifiers.

    Returns:
        The main files written: each class report, gradebook and JSON-lines file.
    """
    ids = exports.read_roster(roster) if roster else None
    written = []
    for folder in assignment_dirs(out):
        feedback.write_all(folder)
        written.append(class_report.write(folder))
        written.append(exports.write_canvas(folder, load_grades(folder), ids))
        written.append(exports.write_jsonl(folder))
    return written
