"""Finding and vetting submitted notebooks before anything runs them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..authoring.layout import ASSIGNMENTS

MAX_BYTES = 20 * 1024 * 1024  # a real submission is well under 1 MB; refuse before parsing


@dataclass(frozen=True)
class Submission:
    """One file found in the submissions folder.

    Attributes:
        path: where it is.
        name: its path relative to the folder, used as the ``file`` column.
        assignment: the assignment it belongs to, or ``None`` when it could not be told.
        problem: why it cannot be graded, or ``None``.
    """

    path: Path
    name: str
    assignment: str | None
    problem: str | None = None


def find(folder: Path, assignment: str | None = None) -> list[Submission]:
    """Every ``.ipynb`` under ``folder`` (or ``folder`` itself when it is one notebook), vetted;
    problems become ``Submission.problem``."""
    if folder.is_file():
        return [vet(folder, folder.name, assignment)]
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such file or folder of submissions")
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return [vet(p, p.relative_to(folder).as_posix(), assignment) for p in paths]


def duplicate_names(subs: list[Submission]) -> dict[str, list[str]]:
    """Base name -> the submissions sharing it, where more than one does (``a/x.ipynb`` and
    ``b/x.ipynb``): both are graded under their full paths, and staff are told."""
    by_base: dict[str, list[str]] = {}
    for sub in subs:
        by_base.setdefault(sub.path.name, []).append(sub.name)
    return {base: names for base, names in by_base.items() if len(names) > 1}


def vet(path: Path, name: str, assignment: str | None) -> Submission:
    """Check that ``path`` is a readable nbformat-4 notebook for a known assignment."""
    def bad(problem: str, found: str | None = None) -> Submission:
        return Submission(path, name, assignment or found, f"{name}: {problem}")

    if path.stat().st_size > MAX_BYTES:
        return bad(f"file is {path.stat().st_size // 2**20} MB; a notebook over "
                   f"{MAX_BYTES // 2**20} MB is refused (clear its outputs and resubmit)")
    try:
        nb = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        return bad(f"not UTF-8 text (byte {exc.start}); a notebook is a UTF-8 JSON file")
    except json.JSONDecodeError as exc:
        return bad(f"not a notebook: invalid JSON at line {exc.lineno} column {exc.colno}")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return bad("not a notebook: no list of cells")
    if nb.get("nbformat") != 4:
        return bad(f"nbformat {nb.get('nbformat')!r} is not supported; save it as nbformat 4")
    meta = nb.get("metadata", {}).get("otter", {})
    found = meta.get("assignment_name") if isinstance(meta, dict) else None
    if assignment and found and found != assignment:
        return bad(f"this notebook is for {found!r}, not {assignment!r}", found)
    chosen = assignment or found
    if chosen not in ASSIGNMENTS:
        return bad("cannot tell the assignment: no otter assignment_name in the notebook's "
                   "metadata; pass -a ASSIGNMENT", found)
    return Submission(path, name, chosen)
