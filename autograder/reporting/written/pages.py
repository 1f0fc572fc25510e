"""The grading pages: one self-contained HTML file per written question, every answer on it.

``OUT/<assignment>/written/<question>.html`` shows the prompt, the rubric and the model answer,
then each submission's answer under a pseudonym (``pseudonym``: stable for a run's seed, in an
order unrelated to the file names; ``names=True`` shows the files instead), with a points
field and a comment. Scoring runs in the page (``templates/written_page.js``): kept in the
browser's storage, exported as a scores file (``scores``). No server and no network: the page
works from ``file://``.

Student Markdown is rendered by markdown-it-py with raw HTML off (a ``<script>`` or ``<b
onclick>`` shows as text) and images off (a remote image would be a network request); the
result document has already capped each answer (``results.MAX_TEXT``). The page's
Content-Security-Policy allows only its own script (by hash) and no network at all, should
anything slip through.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup

from ...authoring.written import WrittenQuestion
from ...running.batch import written_answers
from ...running.files import write_atomic
from ..templating import TEMPLATES, environment
from . import scores

SCRIPT = TEMPLATES / "written_page.js"


def markdown(text: str) -> Markup:
    """``text`` (untrusted Markdown) as safe HTML."""
    md = MarkdownIt("commonmark", {"html": False}).disable("image")
    return Markup(md.render(text))


def pseudonym(seed: object, question: str, file: str) -> str:
    """``answer-<10 hex>``: an HMAC of the file under the run's seed and the question, so each
    page has its own names and order, the same every time the run's reports are written."""
    digest = hmac.new(str(seed).encode(), f"{question}\0{file}".encode(), hashlib.sha256)
    return "answer-" + digest.hexdigest()[:10]


def entries(docs: list[dict], question: WrittenQuestion, seed: object,
            names: bool) -> list[dict]:
    """One entry per result document: the answer rendered, its label and its storage key;
    in pseudonym order (by file with ``names``)."""
    found = []
    for doc in docs:
        got = written_answers.of(doc, question.name)
        key = hashlib.sha256(f"{doc['file']}\0{got['answer']}".encode()).hexdigest()[:16]
        label = pseudonym(seed, question.name, doc["file"])
        found.append({"file": doc["file"], "label": doc["file"] if names else label,
                      "order": doc["file"] if names else label, "key": key,
                      "answer": scores.digest(got["answer"]),
                      "note": got["note"] or doc.get("error") or "",
                      "html": markdown(got["answer"])})
    return sorted(found, key=lambda e: e["order"])


def render(assignment: str, question: WrittenQuestion, docs: list[dict], seed: object,
           names: bool = False) -> str:
    script = SCRIPT.read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    download = f"{assignment}-{question.name}-scores.csv"
    answers = entries(docs, question, seed, names)
    data = {"assignment": assignment, "question": question.name, "points": question.points,
            "step": question.step, "download": download}
    return environment(True).get_template("written_page.html.j2").render(
        assignment=assignment, q=question, answers=answers, names=names, data=data,
        download=download, prompt=markdown(question.prompt), rubric=markdown(question.rubric)
        if question.rubric else "", solution=markdown(question.solution)
        if question.solution else "", script=Markup(script), script_hash=f"sha256-{digest}")


def write(folder: Path, questions: list[WrittenQuestion], docs: list[dict], seed: object,
          names: bool = False) -> list[Path]:
    """``folder/written/<question>.html`` for each question; return them."""
    written = []
    for question in questions:
        path = folder / "written" / f"{question.name}.html"
        write_atomic(path, render(folder.name, question, docs, seed, names))
        written.append(path)
    return written
