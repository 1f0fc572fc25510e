"""Writing result files so that a batch stopped midway never leaves a half-written one, and
reading a JSON file of ours back."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (UTF-8; a string, or strings written one after another as they come)
    to ``path`` through a temporary file and a rename.

    A reader (or ``--resume``) sees either the old file or the whole new one: ``os.replace``
    is atomic within one file system, which is why the temporary file sits beside ``path``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # not named after ``path``: a name near NAME_MAX plus the temporary's own would pass it
    fd, tmp = tempfile.mkstemp(prefix=".write-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.writelines([text] if isinstance(text, str) else text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; staff read what is written here
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> dict | None:
    """A JSON object of ours that is no result document (``grading.json``, ``timings.json``,
    ``shard.json``), or ``None`` when it is missing, unreadable or not an object."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
