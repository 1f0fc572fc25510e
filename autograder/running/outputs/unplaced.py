"""Everything in the submissions folder that no assignment's ``final_grades.csv`` holds, and why:
a notebook whose assignment cannot be told (with two assignments in the folder, or none), a
notebook for another assignment than ``-a``'s, every file that is no ``.ipynb`` (a ``.py``,
a ``.txt``), Jupyter's checkpoints, macOS's zip metadata (``__MACOSX/``, ``._x.ipynb``) and
every link to a folder (never followed). Nothing in the folder is passed over without a word: the
run's summary lists them and ``OUT/unplaced.csv`` holds one row each (``file,reason``).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from ..files import write_atomic
from ..names import text
from .cells import csv_text, from_spreadsheet

#: ``OUT/unplaced.csv``: one row per file of the folder that was not graded, with the reason.
FILE = "unplaced.csv"
#: How many the summary names before it says "and N more" (the CSV holds them all).
SHOWN = 20


#: Folders never entered, each listed once: Jupyter's autosaved copies, and the metadata a zip
#: made by macOS's Finder carries (red-team rt-2: each ``__MACOSX/._x.ipynb`` was a student
#: with 0 points, in the Canvas gradebook and the class mean).
SKIPPED_FOLDERS = {".ipynb_checkpoints": "Jupyter's autosaved copies: the notebook beside it "
                                         "is what is graded; not entered",
                   "__MACOSX": "macOS's zip metadata (resource forks), no submission; not "
                               "entered"}
#: Why a link to a folder is listed: links are never followed (hostile-files.md).
LINKED_FOLDER = "a link to a folder: not followed; copy it in or grade it with -p"
APPLE_DOUBLE = ("macOS metadata (an AppleDouble file, the resource fork of the file named "
                "without '._'), no submission")


def apple_double(entry: str) -> bool:
    """Whether ``entry`` (a name in a folder) is a macOS AppleDouble file (``._ann.ipynb``: the
    resource fork of ``ann.ipynb``, which a Mac's zip or copy to another disk leaves beside
    it); never a submission, whatever its name ends with."""
    return entry.startswith("._")


def ignored(folder: Path) -> list[tuple[str, str]]:
    """``(name, reason)`` for every entry under ``folder`` that ``submissions.find`` does not
    vet (it vets every other ``*.ipynb``), found the same way: links to folders are listed, not
    followed, and ``SKIPPED_FOLDERS`` listed, not entered."""
    if not folder.is_dir():
        return []
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        here = Path(top)
        for entry in sorted(dirs):
            name = text((here / entry).relative_to(folder).as_posix())
            if entry in SKIPPED_FOLDERS:
                found.append((f"{name}/", SKIPPED_FOLDERS[entry]))
            elif (here / entry).is_symlink():  # os.walk lists it, never enters it
                if not entry.endswith(".ipynb") or apple_double(entry):  # else: find's row
                    found.append((f"{name}/", LINKED_FOLDER))
            elif apple_double(entry) and entry.endswith(".ipynb"):
                found.append((name, APPLE_DOUBLE))
        dirs[:] = [d for d in dirs if d not in SKIPPED_FOLDERS]
        for entry in files:
            name = text((here / entry).relative_to(folder).as_posix())
            if apple_double(entry):
                found.append((name, APPLE_DOUBLE))
            elif not entry.endswith(".ipynb"):
                kind = Path(entry).suffix or "no extension"
                found.append((name, f"not a notebook ({kind}): only .ipynb files are graded"
                              + ("; rename it to end in .ipynb, in lower case, to grade it"
                                 if kind.lower() == ".ipynb" else "")))
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
