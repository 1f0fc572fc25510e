"""Grading part of a batch again: ``--resume``, ``--only NAME`` and ``--question Q``.

Results are files, one per submission, so a partial run merges into what is on disk: the
others' results and rows stay exactly as they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .files import write_atomic
from .results import Graded, graded as graded_row, write_document
from .submissions import Submission


@dataclass(frozen=True)
class Selection:
    """Which submissions and questions a run grades.

    Attributes:
        resume: skip submissions that already have a result document.
        only: grade only these submissions (path, file name or stem); empty means all.
        question: regrade only this question, merging into each existing result document.
    """

    resume: bool = False
    only: tuple[str, ...] = ()
    question: str | None = None

    @property
    def partial(self) -> bool:
        """Whether results already on disk are kept and merged into."""
        return self.resume or bool(self.only) or self.question is not None


def matches(sub: Submission, names: tuple[str, ...]) -> bool:
    """``--only`` accepts the full relative path, the file name, or the stem."""
    return not names or bool({sub.name, sub.path.name, sub.path.stem} & set(names))


def result_file(results: Path, sub: Submission) -> Path:
    return results / f"{sub.name}.json"


def pick(subs: list[Submission], results: Path, sel: Selection) -> tuple[list, list]:
    """Split ``subs`` into (to grade now, kept as they are on disk)."""
    now, kept = [], []
    for sub in subs:
        done = result_file(results, sub).exists()
        if not matches(sub, sel.only) or (sel.resume and done):
            kept.append(sub)
        else:
            now.append(sub)
    return now, kept


def read_doc(path: Path) -> dict | None:
    """A result document, or ``None`` when missing or unreadable (then it is regraded)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def merge_question(old: dict, new: dict, question: str) -> dict:
    """``old`` with ``question`` taken from ``new``; problems from both, the worse status."""
    merged = {**old, "questions": {**old.get("questions", {})}}
    if question in new.get("questions", {}):
        merged["questions"][question] = new["questions"][question]
    merged["problems"] = list(dict.fromkeys(old.get("problems", []) + new.get("problems", [])))
    if new.get("status", "graded") != "graded":
        merged["status"] = new["status"]
        if "error" in new:
            merged["error"] = new["error"]
    merged["seed"] = new.get("seed", old.get("seed"))
    return merged


def graded(name: str, doc: dict) -> Graded:
    """The CSV row's data for a result document (ours, or stock otter's ``results.json``)."""
    if "schema_version" not in doc:
        from .otter_run import parse  # only the otter runner writes these

        return parse(name, doc)
    if doc.get("status") == "rejected":  # the vetting problem, as batch puts it in the row
        return Graded(name, {}, doc.get("error", ""))
    row = graded_row(doc)
    return Graded(name, row.scores, row.status)


def regrade_question(runner, scratch: Path, results: Path, sub: Submission,
                     question: str) -> Graded | None:
    """Grade ``question`` alone with ``runner`` (whose ``results`` is ``scratch``) and merge it
    into ``sub``'s document in ``results``; ``None`` when there is no document to merge into.

    The partial document goes to ``scratch`` first so that a stop midway never leaves a
    result holding one question only.
    """
    old = read_doc(result_file(results, sub))
    if old is None or "schema_version" not in old or not old.get("questions"):
        return None
    runner(sub)
    new = read_doc(result_file(scratch, sub)) or {}
    doc = merge_question(old, new, question)
    write_document(results, doc)
    return graded(sub.name, doc)


def write_timings(path: Path, seconds: dict[str, float]) -> None:
    """Merge ``seconds`` (file -> wall-clock seconds) into ``path`` (``timings.json``)."""
    old = read_doc(path) or {}
    old.update({k: round(v, 3) for k, v in seconds.items()})
    write_atomic(path, json.dumps(dict(sorted(old.items())), indent=2) + "\n")


def on_disk(results: Path, subs: list[Submission]) -> list[Graded]:
    """Rows for the kept submissions that have a readable result document."""
    rows = []
    for sub in subs:
        doc = read_doc(result_file(results, sub))
        if doc is not None:
            rows.append(graded(sub.name, doc))
    return rows
