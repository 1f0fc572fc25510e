"""Each submission's written answers, taken from its notebook by the batch (on the grading
host: JSON only, no student code runs) into its result document, key ``written``.

In the student notebook otter assign writes each written question as a prompt cell opening with
``<!-- BEGIN QUESTION -->``, the answer cell(s), then a cell opening with ``<!-- END QUESTION
-->``. The answer is every cell between the prompt and that end marker (Markdown as written,
code and raw cells fenced), so an answer split over cells, or a cell added below, is kept.
The prompt is found by its text; a notebook whose prompt was edited falls back to the n-th
``BEGIN QUESTION`` marker. The result document caps the answer (``results.MAX_TEXT``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from ...authoring.assign import WRITTEN_PLACEHOLDER
from ...authoring.written import WrittenQuestion
from ..resultdoc import ResultDoc
from ..submissions import MAX_BYTES, Submission, read_notebook_bytes

KEY = "written"
BEGIN, END = "<!-- BEGIN QUESTION -->", "<!-- END QUESTION -->"
UNANSWERED = "no answer: the template's placeholder was left as it was"
NOT_FOUND = "the question's cells were not found in the notebook (deleted or rewritten)"


def _text(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _fenced(text: str, lang: str = "") -> str:
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _start(cells: list, question: WrittenQuestion, index: int) -> int | None:
    """The index of ``question``'s prompt cell."""
    prompt = _squash(question.prompt)
    for i, cell in enumerate(cells):
        if prompt and prompt in _squash(_text(cell)):
            return i
    begins = [i for i, c in enumerate(cells) if _text(c).lstrip().startswith(BEGIN)]
    return begins[index] if index < len(begins) else None


def answer(cells: list, question: WrittenQuestion, index: int) -> dict:
    """``{"answer": Markdown, "note": why there is none, or ""}`` for ``question``, the
    ``index``-th written question of the assignment."""
    start = _start(cells, question, index)
    if start is None:
        return {"answer": "", "note": NOT_FOUND}
    parts = []
    for cell in cells[start + 1:]:
        text = _text(cell)
        if text.lstrip().startswith((END, BEGIN)):
            break
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if not text.strip() or text.strip() == WRITTEN_PLACEHOLDER:
            continue
        parts.append(text if kind == "markdown" else
                     _fenced(text, "python" if kind == "code" else ""))
    text = "\n\n".join(parts).strip()
    return {"answer": text, "note": "" if text else UNANSWERED}


def answers(cells: list, questions: list[WrittenQuestion]) -> dict[str, dict]:
    return {q.name: answer(cells, q, i) for i, q in enumerate(questions)}


def attach(doc: ResultDoc, sub: Submission, questions: list[WrittenQuestion]) -> ResultDoc:
    """``doc`` with ``sub``'s written answers under ``written`` (unchanged without written
    questions or for a file that was never opened: a rejected one)."""
    if not questions or sub.problem:
        return doc
    try:
        data = read_notebook_bytes(sub.path)
        if len(data) > MAX_BYTES:
            raise ValueError("over the size limit")
        cells = json.loads(data.decode("utf-8")).get("cells")
        if not isinstance(cells, list):
            raise ValueError("no list of cells")
        found = answers(cells, questions)
    except Exception as exc:  # noqa: BLE001 - a file changed since vetting: said, not raised
        why = f"the notebook could not be read again ({type(exc).__name__}: {str(exc)[:200]})"
        found = {q.name: {"answer": "", "note": why} for q in questions}
    return replace(doc, extra={**doc.extra, KEY: found})


def of(doc: dict, question: str) -> dict:
    """The answer ``attach`` stored for ``question`` in the result document ``doc``."""
    found = doc.get(KEY)
    entry = found.get(question) if isinstance(found, dict) else None
    if not isinstance(entry, dict):
        return {"answer": "", "note": "no written answer recorded (graded without this step)"}
    return {"answer": str(entry.get("answer", "")), "note": str(entry.get("note", ""))}
