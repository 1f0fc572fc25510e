"""Everything reporting writes for a finished grading run, in one call."""

from __future__ import annotations

from pathlib import Path

from ..running.batch.stale import strays
from ..running.outputs import final_grades, grading_json
from ..running.outputs.final_grades import assignment_dirs
from ..running.outputs.roster import read_roster
from ..running.resultdoc import GRADER_ERROR, DocumentError, ResultDoc
from ..running.results import result_path
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
            (``exports.CanvasError``), some feedback files could not be written, or an
            assignment's grading run did not finish (``unfinished``: said, one line each, and
            not reported).
    """
    say = say or print
    run = grading_json.read(out)
    ids = read_roster(roster) if roster else grading_json.roster(run)
    detail = detail or _recorded_detail(run)
    written, refused = [], []
    seed = run.get("seed")  # the pseudonyms' key
    for folder in assignment_outputs(out):
        # a run stopped midway leaves each document it graded beside the older rows and
        # documents it did not reach: exported, an old grade goes out beside a new feedback
        # page (red-team rt-s3: a regrade lost to a closed terminal)
        why = ("the last `autograder grade` into it stopped before it finished, or is still "
               "running" if grading_json.stopped(run) else unfinished(folder))
        if why:  # its reports would be of a class it does not hold: none, and no older ones
            removed = [p for p in (folder / n for n in SUMMARIES) if p.is_file()]
            for path in removed:
                path.unlink()
            say(f"{folder.name}: not reported: its grading run did not finish ({why}); "
                + (f"its older {', '.join(p.name for p in removed)} removed; " if removed
                   else "") + "finish it with the same `autograder grade` and --resume")
            refused.append(f"{folder.name}: its grading run did not finish (said above)")
            continue
        lost, edited = rows_apart(folder)
        if lost:  # red-team rt-s3: a deleted document's feedback page went with it, in silence
            shown = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
            say(f"{folder.name}: {len(lost)} row(s) of {final_grades.FILE} have no result "
                f"document in results/ ({shown}): they keep their grades in the CSV and the "
                "gradebook but get no feedback page and no written answers to grade; grade "
                "them again with `autograder grade -p FOLDER -o OUT --only NAME`")
            refused.append(f"{folder.name}: {len(lost)} result document(s) missing (said above)")
        if edited:  # red-team rt-s3: a hand edit was exported as it was, and --resume undid it
            say(f"{folder.name}: {len(edited)} row(s) of {final_grades.FILE} differ from their "
                f"result documents (edited by hand?): {'; '.join(edited[:3])}"
                + (f"; and {len(edited) - 3} more" if len(edited) > 3 else "")
                + ". The gradebook exports each row's total_points_earned as it stands; the "
                "next `autograder grade` into this folder rewrites those rows from the documents")
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


#: What ``write_reports`` writes about a whole class, removed when its run did not finish.
SUMMARIES = ("report/class_report.html", "canvas_gradebook.csv", "results.jsonl")


def assignment_outputs(out: Path) -> list[Path]:
    """Every ``OUT/<assignment>`` with a ``final_grades.csv`` or a ``results/`` folder (a run
    killed before its first CSV leaves only the latter)."""
    return sorted(set(assignment_dirs(out)) | {p.parent for p in out.glob("*/results")
                                               if p.is_dir()})


def unfinished(folder: Path) -> str | None:
    """Why the grading run of ``folder`` (``OUT/<assignment>``) did not finish, or ``None``:
    result documents that its ``final_grades.csv`` has no row for, or no CSV at all (red-team
    rt-2: a run stopped by SIGTERM or a kill writes each document as it is graded, and the CSV
    last; ``report`` skipped it in silence, older reports left looking current). A row without
    a document is no sign: a document that could not be written is a grader error's row."""
    results = folder / "results"
    docs = [p for p in strays(results, set()) if p.suffix == ".json"] if results.is_dir() else []
    if not (folder / final_grades.FILE).is_file():
        return (f"{len(docs)} result document(s) and no {final_grades.FILE}" if docs
                else None)
    listed = set()
    for row in final_grades.read(folder).rows:
        try:
            listed.add(result_path(results, row["file"]))
        except (OSError, ValueError):  # a name none of ours: it has no document either
            pass
    missing = [p for p in docs if p not in listed]
    return (f"{len(missing)} of {len(docs)} result document(s) have no row in "
            f"{final_grades.FILE}" if missing else None)


def rows_apart(folder: Path) -> tuple[list[str], list[str]]:
    """The rows of ``folder``'s ``final_grades.csv`` that are not what the batch wrote, in one
    pass: those whose result document is gone though their run wrote one (every row but a
    grader error's, whose document may be the one that could not be written:
    ``ResultDoc.written``), and those edited by hand (a question's points other than its
    document's, or a total other than the sum of the row's points), each as ``name (what
    differs)``."""
    if not (folder / final_grades.FILE).is_file():
        return [], []
    results, grades = folder / "results", final_grades.read(folder)
    lost, edited = [], []
    for row in grades.rows:
        differs = []
        try:
            path = result_path(results, row["file"])
        except (OSError, ValueError):  # a name none of ours: it has no document either
            path = None
        if path is not None and not path.is_file():
            if not str(row.get("grading_status", "")).startswith(GRADER_ERROR):
                lost.append(row["file"])
        elif path is not None:
            try:
                points = ResultDoc.read(path).row().scores
            except (DocumentError, OSError, ValueError):  # one report cannot read: no comparing
                points = {}
            differs = [f"{q} {row[q] or 'empty'}, its document {got:g}"
                       for q, (got, _) in points.items() if q in row and not _same(row[q], got)]
        cells = [row.get(q) or "" for q in grades.possible]
        total = sum(_number(c) or 0.0 for c in cells)
        if all(_number(c) is not None or c == "" for c in cells) and not _same(
                row.get("total_points_earned", ""), total):
            differs.append(f"total {row.get('total_points_earned') or 'empty'}, its points "
                           f"{total:g}")
        if differs:
            edited.append(f"{row['file']} ({', '.join(differs[:2])})")
    return lost, edited


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _same(text: str, value: float) -> bool:
    number = _number(text)
    return number is not None and abs(number - value) <= 1e-6 * max(1.0, abs(value))


def _recorded_detail(run: dict) -> str:
    """The feedback detail the grading run recorded (``run``: its ``grading.json``), else
    ``full``."""
    detail = run.get("feedback")
    return detail if detail in DETAIL else "full"
