"""What every runner returns and writes, with no torch in sight (the Docker runner's host side
imports this and must stay light): ``Graded`` rows and the per-submission JSON documents."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_atomic


@dataclass(frozen=True)
class Graded:
    """Scores for one submission.

    Attributes:
        name: the submission's name (the ``file`` column).
        scores: question -> (score, max_score).
        status: ``"Completed"`` or why grading failed.
        details: question -> otter's test output for it (messages included).
    """

    name: str
    scores: dict[str, tuple[float, float]]
    status: str
    details: dict[str, str] = field(default_factory=dict)


def result_path(results: Path, name: str) -> Path:
    """``out/<a>/results/<name>.json``, mirroring the submission's folders (no collisions)."""
    path = results / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_document(results: Path, doc: dict) -> None:
    """Write one submission's result document (stable key order: identical runs, identical
    bytes)."""
    # Atomic (temp file + rename): --resume trusts any document it finds.
    write_atomic(result_path(results, doc["file"]),
                 json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def graded(doc: dict) -> Graded:
    """The CSV row of a result document: points per question and a status in words."""
    scores = {q: (v["points"], v["possible"]) for q, v in doc.get("questions", {}).items()}
    if doc["status"] == "graded":
        status = "Completed"
    elif doc["status"].startswith("graded"):
        status = f"Completed with problems: {'; '.join(doc.get('problems', []))}"
    else:
        status = f"{doc['status']}: {doc.get('error', '')}"
    return Graded(doc["file"], scores, status)
