"""Gradebook exports beside otter's ``final_grades.csv``: a Canvas-friendly CSV and JSON lines."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..running.files import write_atomic
from ..running.names import folded
from ..running.outputs.cells import safe_row
from ..running.outputs.final_grades import Grades
from ..running.outputs.results import iter_results, stem
from ..running.outputs.roster import roster_id
from ..running.resultdoc.status import GRADER_ERROR

#: Canvas's gradebook import matches students on these columns; we fill SIS User ID.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


class CanvasError(ValueError):
    """The gradebook would be wrong (two submissions under one id): it is not written."""


def student_id(file: str, roster: dict[str, str] | None) -> str:
    """The roster's id for ``file`` (matched on its path, name or stem), else the file's path
    without ``.ipynb`` (unique in a run, unlike its stem: ``a/hw`` and ``b/hw``)."""
    sid = roster_id(file, roster)
    return sid if sid is not None else stem(file)


def canvas_ids(grades: Grades, roster: dict[str, str] | None) -> tuple[dict[str, str], list[str]]:
    """File -> SIS User ID for every row, and what was used, one sentence each (never silent).

    Raises:
        CanvasError: when two files would get one id (it names them).
    """
    ids = {r["file"]: student_id(r["file"], roster) for r in grades.rows}
    # keyed on the id each row would land under, one entry per row (not per file name: two
    # rows of one file are two grades for one student), ids that print alike (NFC/NFD) as one
    owners: dict[str, list[str]] = {}
    for row in grades.rows:
        owners.setdefault(id_key(ids[row["file"]]), []).append(row["file"])
    clashes = {sid: files for sid, files in owners.items() if len(files) > 1}
    if clashes:
        sid, files = sorted(clashes.items())[0]
        raise CanvasError(f"canvas_gradebook.csv not written: {len(files)} rows would "
                          f"share the SIS User ID {sid!r} ({', '.join(files)})"
                          + (f" and {len(clashes) - 1} more id(s) collide" if len(clashes) > 1
                             else "") + "; fix the roster, or regrade (one row per file)")
    if roster is None:
        said = [f"no roster: SIS User ID is each file's path without .ipynb for all "
                f"{len(ids)} submission(s); pass --roster FILE (file,student_id)"]
    else:
        missing = sorted(f for f in ids if roster_id(f, roster) is None)
        said = [f"SIS User ID from the roster for {len(ids) - len(missing)} of {len(ids)} "
                f"submission(s)"]
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more"
                                               if len(missing) > 10 else "")
            said.append(f"not in the roster, so their file path is their id: {shown}")
    errors = [r["file"] for r in grades.rows if grader_error(r)]
    if errors:
        said.append(f"{len(errors)} grader error(s) left without a grade, not 0 (regrade "
                    f"them): {', '.join(errors[:10])}"
                    + (f" and {len(errors) - 10} more" if len(errors) > 10 else ""))
    return ids, said


def id_key(sid: str) -> str:
    """What an id is to a gradebook: as it prints (``folded``) and without the spaces around
    it, which a gradebook's import trims (red-team round rt-1: ``hw`` and ``hw `` would have
    landed on one student, the second row's 0 over the first's 21)."""
    return folded(sid).strip()


def grader_error(row: dict[str, str]) -> bool:
    """A row the grader failed on: its points are no grade (``ResultDoc.row``'s status)."""
    return row.get("grading_status", "").startswith(f"{GRADER_ERROR}:")


def canvas_csv(grades: Grades, assignment: str, ids: dict[str, str]) -> str:
    """Canvas's import layout: identity columns, one column of total points, and the
    ``Points Possible`` row Canvas's own exports carry."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(safe_row([*CANVAS_COLUMNS, assignment]))
    out.writerow(safe_row(["Points Possible", "", "", "", "",
                           f"{sum(grades.possible.values()):g}"]))
    for row in sorted(grades.rows, key=lambda r: ids[r["file"]]):
        sid = ids[row["file"]]
        # a grader error is left blank: an import leaves that student's grade as it was
        points = "" if grader_error(row) else row["total_points_earned"]
        out.writerow(safe_row([sid, "", sid, "", "", points]))
    return buf.getvalue()


def write_canvas(folder: Path, grades: Grades,
                 roster: dict[str, str] | None) -> tuple[Path, list[str]]:
    """Write ``folder/canvas_gradebook.csv``; return it and what ids it used, in words.

    Raises:
        CanvasError: colliding ids; an older gradebook there is removed, never left stale.
    """
    path = folder / "canvas_gradebook.csv"
    try:
        ids, said = canvas_ids(grades, roster)
    except CanvasError:
        path.unlink(missing_ok=True)
        raise
    write_atomic(path, canvas_csv(grades, folder.name, ids))
    return path, said


def write_jsonl(folder: Path) -> Path:
    """``folder/results.jsonl``: every result document, one compact line each, by file
    (streamed: one document in memory at a time)."""
    path = folder / "results.jsonl"
    write_atomic(path, (json.dumps(d.to_dict(), sort_keys=True, ensure_ascii=False) + "\n"
                        for d in iter_results(folder)))
    return path
