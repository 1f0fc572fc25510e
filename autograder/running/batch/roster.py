"""Who a submission belongs to: the roster (``file,student_id``) and a submission's identity.

Grading uses the identity to derive each submission's seed (``checks.seeding``); the Canvas
export uses the same roster for its ids, so both agree on who is who.
"""

from __future__ import annotations

import csv
from pathlib import Path


def read_roster(path: Path) -> dict[str, str]:
    """A roster CSV with columns ``file`` and ``student_id``: file (path, name or stem) -> id.

    Raises:
        ValueError: when a column is missing (the message names the file).
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"file", "student_id"} <= set(rows[0]):
        raise ValueError(f"{path}: a roster needs the columns file,student_id")
    return {(r["file"] or "").strip(): (r["student_id"] or "").strip() for r in rows
            if (r["file"] or "").strip() and (r["student_id"] or "").strip()}


def roster_id(file: str, roster: dict[str, str] | None) -> str | None:
    """The roster's id for ``file`` (matched on its path, then its name, then its stem), or
    ``None`` when the roster does not list it."""
    if not roster:
        return None
    name = file.rsplit("/", 1)[-1]
    stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    for key in (file, name, stem):
        if key in roster:
            return roster[key]
    return None


def identity(file: str, roster: dict[str, str] | None) -> str:
    """What a submission's seed is derived from: ``id:<roster id>`` when the roster lists it,
    else ``path:<its path under the submissions folder>`` (unique within a run)."""
    sid = roster_id(file, roster)
    return f"id:{sid}" if sid is not None else f"path:{file}"
