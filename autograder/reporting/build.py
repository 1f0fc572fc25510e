"""Everything reporting writes for a finished grading run, in one call."""

from __future__ import annotations

import json
from pathlib import Path

from . import class_report, exports, feedback, written as by_hand
from .documents import assignment_dirs, load_grades


class ReportsIncomplete(ValueError):
    """Some report was refused or not written; everything else was (one line each)."""


def write_reports(out: Path, roster: Path | None = None, *, detail: str | None = None,
                  say=None, written_names: bool = False) -> list[Path]:
    """Feedback, class report and exports for every ``OUT/<assignment>``.

    Args:
        out: the grading run's output folder.
        roster: optional CSV (``file,student_id``) for the Canvas gradebook's identifiers;
            ``None``: the roster the grading run recorded in ``out/grading.json``, if any.
        detail: how much feedback shows (``feedback.DETAIL``); ``None``: what the grading run
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
    ids = exports.read_roster(roster) if roster else _recorded_roster(out)
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
            feedback.write_all(folder, detail, by_hand.for_feedback(folder))
        except feedback.FeedbackError as exc:
            refused.append(str(exc))
        written.append(class_report.write(folder))
        try:
            path, said = exports.write_canvas(folder, load_grades(folder), ids)
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


def _recorded(out: Path) -> dict:
    """What the grading run recorded in ``out/grading.json`` (``{}`` without one)."""
    try:
        run = json.loads((out / "grading.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return run if isinstance(run, dict) else {}


def _recorded_detail(out: Path) -> str:
    """The feedback detail the grading run recorded, else ``full``."""
    detail = _recorded(out).get("feedback")
    return detail if detail in feedback.DETAIL else "full"


def _recorded_roster(out: Path) -> dict[str, str] | None:
    """The roster the grading run recorded (file -> id), or ``None``."""
    roster = _recorded(out).get("roster")
    if not isinstance(roster, dict) or not roster:
        return None
    return {str(k): str(v) for k, v in roster.items()}
