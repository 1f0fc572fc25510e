"""Everything in the submissions folder that no assignment's ``final_grades.csv`` holds, and why:
a notebook whose assignment cannot be told (with two assignments in the folder, or none), a
notebook for another assignment than ``-a``'s, and every file that is no ``.ipynb`` (a ``.py``,
a ``.txt``, Jupyter's checkpoints). Nothing in the folder is passed over without a word: the
run's summary lists them and ``OUT/unplaced.csv`` holds one row each (``file,reason``).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from ..files import write_atomic
from .cells import csv_text, from_spreadsheet

#: ``OUT/unplaced.csv``: one row per file of the folder that was not graded, with the reason.
FILE = "unplaced.csv"
#: How many the summary names before it says "and N more" (the CSV holds them all).
SHOWN = 20


def ignored(folder: Path) -> list[tuple[str, str]]:
    """``(name, reason)`` for every entry under ``folder`` that is not a ``*.ipynb`` (those are
    ``submissions.find``'s), found the same way: links to folders are not followed."""
    if not folder.is_dir():
        return []
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        if ".ipynb_checkpoints" in dirs:
            dirs.remove(".ipynb_checkpoints")
            name = (Path(top) / ".ipynb_checkpoints").relative_to(folder).as_posix()
            found.append((f"{name}/", "Jupyter's autosaved copies: the notebook beside it is "
                                      "what is graded"))
        for entry in files:
            if not entry.endswith(".ipynb"):
                name = (Path(top) / entry).relative_to(folder).as_posix()
                kind = Path(entry).suffix or "no extension"
                found.append((name, f"not a notebook ({kind}): only .ipynb files are graded"))
    return sorted(found)


def write(out: Path, entries: list[tuple[str, str]]) -> Path | None:
    """``OUT/unplaced.csv`` with ``entries`` (an older one removed when there are none)."""
    path = out / FILE
    if not entries:
        path.unlink(missing_ok=True)
        return None
    write_atomic(path, csv_text(["file", "reason"], [list(e) for e in entries]))
    return path


def read(path: Path) -> list[tuple[str, str]]:
    """The entries of an ``unplaced.csv`` (none when it is missing)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [(from_spreadsheet(r["file"]), from_spreadsheet(r["reason"]))
                    for r in csv.DictReader(f)]
    except OSError:
        return []


def lines(entries: list[tuple[str, str]], path: Path | None) -> list[str]:
    """What the summary says about them: a count, the first ``SHOWN``, and where the rest are."""
    if not entries:
        return []
    said = [f"not graded ({len(entries)} file(s) of the folder; all in {path}):"]
    said += [f"  {name}: {reason}" for name, reason in entries[:SHOWN]]
    if len(entries) > SHOWN:
        said.append(f"  ... and {len(entries) - SHOWN} more")
    return said
