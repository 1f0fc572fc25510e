"""Who a submission belongs to: the roster (``file,student_id``) and a submission's identity,
and ``OUT/not_submitted.csv``, the roster's rows no notebook matched.

Grading uses the identity to derive each submission's seed (``checks.seeding``) and records the
roster in ``grading.json``; the Canvas export uses the same roster for its ids, so both agree
on who is who.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..files import write_atomic
from .cells import csv_text, from_spreadsheet
from .unplaced import SHOWN

COLUMNS = ("file", "student_id")


def read_roster(path: Path) -> dict[str, str]:
    """A roster CSV with columns ``file`` and ``student_id``: file (path, name or stem) -> id.

    Raises:
        ValueError: one line naming the file and its first problem: a missing or unknown
            column, a row with no file or no id, a file or an id on two rows.
    """
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        rows = [(reader.line_num, row) for row in reader]
        columns = list(reader.fieldnames or ())
    unknown = [c for c in columns if c.strip() not in COLUMNS]
    if set(COLUMNS) - {c.strip() for c in columns} or unknown:
        found = f"; unknown: {', '.join(map(repr, unknown))}" if unknown else ""
        raise ValueError(f"{path}: a roster has exactly the columns file,student_id (found "
                         f"{', '.join(map(repr, columns)) or 'none'}{found})")
    roster: dict[str, str] = {}
    owners: dict[str, int] = {}
    for line, raw in rows:
        if raw.get(None):  # csv's key for the cells past the header's
            raise ValueError(f"{path}: line {line} has more cells than the header")
        row = {k.strip(): (v or "").strip() for k, v in raw.items()}
        if not (row["file"] or row["student_id"]):
            continue  # a line of empty cells
        if not row["file"] or not row["student_id"]:
            missing = "file" if not row["file"] else "student_id"
            raise ValueError(f"{path}: line {line} has no {missing}")
        if row["file"] in roster:
            raise ValueError(f"{path}: line {line}: {row['file']!r} is on two rows")
        if row["student_id"] in owners:
            raise ValueError(f"{path}: line {line}: the id {row['student_id']!r} is also on "
                             f"line {owners[row['student_id']]}")
        roster[row["file"]] = row["student_id"]
        owners[row["student_id"]] = line
    return roster


def match(names: list[str], roster: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Which roster row each submission (its name under the folder) is, and the rows no
    submission matched (who did not submit, by ``file`` key).

    Raises:
        ValueError: two submissions match one roster row by what it names (``a/hw.ipynb``,
            ``b/hw.ipynb`` and the row ``hw``): genuinely ambiguous, so refused before any
            work rather than guessed. Either guess gives one student the other's id and hidden
            inputs (and a grade under their name); leaving the row unmatched would list a
            student who did submit as absent. A row that names a file (``alice.ipynb``) is never
            matched by a stem (``alice.ipynb.ipynb``), so another student cannot make the run
            refused, or take a row, by choosing a file name.
    """
    owner: dict[str, str] = {}
    shadowed: dict[str, tuple[str, str]] = {}  # a row another row won over: whose, and which
    for name in names:
        keys = roster_keys(name, roster)
        if not keys:
            continue
        key = keys[0]
        if key in owner:
            raise ValueError(f"the roster row {key!r} (id {roster[key]!r}) matches two "
                             f"submissions, {owner[key]} and {name}: name each by its path")
        owner[key] = name
        for other in keys[1:]:
            shadowed.setdefault(other, (name, key))
    absent = [key for key in roster if key not in owner]
    for key in absent:  # red-team rt-s3: rows alice and alice.ipynb, and 1001 "did not submit"
        if key not in shadowed:
            continue
        name, won = shadowed[key]
        # a path row winning over a name row is the roster's way to tell two folders' hw.ipynb
        # apart (the name row's student may not have submitted); a name and a stem row of one
        # file are one student written twice
        if "/" not in won + key:
            raise ValueError(f"the roster rows {won!r} (id {roster[won]!r}) and {key!r} (id "
                             f"{roster[key]!r}) both name {name}, and {key!r} names no other "
                             "submission: keep one of the two rows")
    return owner, absent


def roster_key(file: str, roster: dict[str, str] | None) -> str | None:
    keys = roster_keys(file, roster)
    return keys[0] if keys else None


def roster_keys(file: str, roster: dict[str, str] | None) -> list[str]:
    """The roster row (its ``file``) that ``file`` is, by what the row names: a row ending in
    ``.ipynb`` names a file, by its path (``sec1/alice.ipynb``) or its name (``alice.ipynb``);
    any other row names a stem, by its path or its name without ``.ipynb`` (``alice``).
    ``None`` when the roster does not list it.

    So ``alice.ipynb.ipynb`` (stem ``alice.ipynb``) is never the row ``alice.ipynb``: a row
    that names a file is matched by a file's name only, never by a stem that looks like one.
    ``roster_keys``: every row that names ``file``, the one that wins first (a path row before
    a name row before a stem row: ``sec1/hw.ipynb`` wins ``sec1/hw.ipynb`` over ``hw.ipynb``,
    which then names ``sec2/hw.ipynb``).
    """
    if not roster:
        return []
    name = file.rsplit("/", 1)[-1]
    keys = [file, name]  # the whole path or name: any row that says it
    stems = [k[: -len(".ipynb")] for k in keys] if file.endswith(".ipynb") else []
    keys += [k for k in stems if not k.endswith(".ipynb")]  # a stem: only a row of a stem
    return list(dict.fromkeys(k for k in keys if k in roster))


def roster_id(file: str, roster: dict[str, str] | None) -> str | None:
    """The roster's id for ``file`` (``roster_key``: its path, then its name, then their
    stems), or ``None`` when the roster does not list it."""
    key = roster_key(file, roster)
    return None if key is None else roster[key]


def identity(file: str, roster: dict[str, str] | None) -> str:
    """What a submission's seed is derived from: ``id:<roster id>`` when the roster lists it,
    else ``path:<its path under the submissions folder>`` (unique within a run)."""
    sid = roster_id(file, roster)
    return f"id:{sid}" if sid is not None else f"path:{file}"


#: ``OUT/not_submitted.csv``: the roster's rows that no notebook of the folder matched.
ABSENT = "not_submitted.csv"


def write_absent(out: Path, absent: list[dict]) -> None:
    """``OUT/not_submitted.csv`` (``student_id,file``); an older one removed when none."""
    path = out / ABSENT
    if not absent:
        path.unlink(missing_ok=True)
        return
    write_atomic(path, csv_text(["student_id", "file"],
                                [[a["student_id"], a["file"]] for a in absent]))


def read_absent(out: Path) -> list[dict]:
    """The rows of ``OUT/not_submitted.csv`` (none when it is missing)."""
    try:
        with open(out / ABSENT, newline="", encoding="utf-8") as f:
            return [{"student_id": from_spreadsheet(r.get("student_id") or ""),
                     "file": from_spreadsheet(r.get("file") or "")} for r in csv.DictReader(f)]
    except OSError:
        return []


def absent_lines(absent: list[dict], out: Path) -> list[str]:
    """What the summary says about who did not submit."""
    if not absent:
        return []
    shown = ", ".join(a["student_id"] for a in absent[:SHOWN])
    more = f" and {len(absent) - SHOWN} more" if len(absent) > SHOWN else ""
    return [f"did not submit ({len(absent)} roster row(s) match no notebook; "
            f"{out / ABSENT}): {shown}{more}"]
