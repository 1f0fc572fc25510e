"""Everything reporting writes for a finished grading run, in one call."""

from __future__ import annotations

from pathlib import Path

from ..running.outputs import final_grades, grading_json
from ..running.outputs.final_grades import assignment_dirs
from ..running.outputs.roster import read_roster
from . import class_report, exports, feedback_files
from . import written as by_hand
from .redaction import DETAIL


class ReportsIncomplete(ValueError):
    """Some report was refused or not written; everything else was (one line each)."""


def write_reports(out: Path, roster: Path | None = None, *, detail: str | None = None,
                  say=None, written_names: bool = False) -> list[Path]:
    """Feedback, class report and exports for every ``OUT/<assignment>``.

    Args:
        out: the grading run's output folder.
        roster: optional CSV (``file,student_id``) for the Canvas gradebook's identifiers;
            ``None``: the roster the grading run recorded in ``out/grading.json``, if any.
        detail: how much feedback shows (``redaction.DETAIL``); ``None``: what the grading run
            recorded in ``out/grading.json``, else ``full``.
        say: where to tell what the Canvas export used (``print`` by default).
        written_names: the written answers' grading pages show file names, not pseudonyms.

    Returns:
        The main files written: each class report, gradebook and JSON-lines file.

    Raises:
        ReportsIncomplete: after everything else is written, when a gradebook was refused
            (``exports.CanvasError``) or some feedback files could not be written.
    """
    say = say or print
    ids = read_roster(roster) if roster else grading_json.roster(grading_json.read(out))
    detail = detail or _recorded_detail(out)
    written, refused = [], []
    seed = by_hand.seed_of(out)
    for folder in assignment_dirs(out):
        # first: merged written scores join final_grades.csv, which everything below reads
        pages, said = by_hand.report(folder, seed, written_names)
        written += pages
        for line in said:
            say(f"{folder.name}: {line}")
        try:
            feedback_files.write_all(folder, detail, by_hand.for_feedback(folder))
        except feedback_files.FeedbackError as exc:
            refused.append(str(exc))
        written.append(class_report.write(folder))
        try:
            path, said = exports.write_canvas(folder, final_grades.read(folder), ids)
        except exports.CanvasError as exc:
            refused.append(f"{folder.name}: {exc}")
        else:
            written.append(path)
            for line in said:
                say(f"{folder.name}: canvas: {line}")
        written.append(exports.write_jsonl(folder))
    if refused:
        raise ReportsIncomplete("; ".join(refused))
    return written


def _recorded_detail(out: Path) -> str:
    """The feedback detail the grading run recorded, else ``full``."""
    detail = grading_json.read(out).get("feedback")
    return detail if detail in DETAIL else "full"
