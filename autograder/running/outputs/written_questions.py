"""``OUT/<assignment>/written/questions.json``: the written questions of the assignment's
master (``authoring.written``) as grading found them. The pages, the scores check and the
reports read this snapshot, so a run's reports never depend on a master edited since.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ...authoring.written import WrittenQuestion, from_master
from ..files import write_atomic

QUESTIONS_FILE = "questions.json"


def snapshot(master: Path, folder: Path) -> list[WrittenQuestion]:
    """The written questions of ``master``, saved to ``folder`` (``OUT/<assignment>``); none
    without the master (a pod given only the zips grades the auto-graded questions)."""
    if not master.exists():
        return []
    found = from_master(master)
    save(folder, found)
    return found


def save(folder: Path, questions: list[WrittenQuestion]) -> None:
    """``folder/written/questions.json`` (``folder``: ``OUT/<assignment>``); nothing when the
    assignment has no written question."""
    if questions:
        write_atomic(folder / "written" / QUESTIONS_FILE,
                     json.dumps([asdict(q) for q in questions], indent=2) + "\n")


def load(folder: Path) -> list[WrittenQuestion]:
    """The snapshot ``save`` wrote, or ``[]`` (no written question, or graded without)."""
    path = folder / "written" / QUESTIONS_FILE
    if not path.exists():
        return []
    return [WrittenQuestion(**q) for q in json.loads(path.read_text(encoding="utf-8"))]
