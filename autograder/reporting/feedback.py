"""Per-student feedback, one Markdown and one self-contained HTML file per submission.

What a student sees for each test: the message naming the mistake first (public tests already
say got vs expected; hidden checks add what was checked, from the check's ``proves`` sentence),
then the points. Never the hidden inputs' generator or the tests' code: only the registry's
sentence and the message the check wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .. import checks
from ..running.files import write_atomic
from .documents import iter_results, stem

TEMPLATES = Path(__file__).parent / "templates"
GRADER = "grader"


@dataclass(frozen=True)
class TestFeedback:
    """One test as the student sees it.

    Attributes:
        name: otter's test name (``"q1_accumulation - 3"``).
        hidden: whether it is a hidden test.
        passed: whether it passed.
        points: points earned.
        possible: points possible.
        message: the first line of the message (the mistake, got vs expected).
        detail: the rest of the message (a trimmed traceback), or ``""``.
        checked: the ``proves`` sentences of the hidden checks this test ran.
        grader_fault: the grader, not the student, failed here.
    """

    name: str
    hidden: bool
    passed: bool
    points: float
    possible: float
    message: str
    detail: str
    checked: list[str]
    grader_fault: bool


@dataclass(frozen=True)
class QuestionFeedback:
    name: str
    points: float
    possible: float
    tests: list[TestFeedback]


@dataclass(frozen=True)
class Feedback:
    """Everything one submission's feedback file says."""

    file: str
    assignment: str
    seed: int | None
    status: str
    points: float
    possible: float
    grader_error: str | None = None
    rejected: str | None = None
    problems: list[str] = field(default_factory=list)
    cells: list[dict] = field(default_factory=list)
    questions: list[QuestionFeedback] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)


def proves(assignment: str, question: str, check: str) -> str | None:
    """The registry's sentence for ``question/check``, or ``None`` for an unknown check."""
    try:
        return checks.find(assignment, f"{question}/{check}").proves
    except KeyError:
        return None


def test_feedback(assignment: str, question: str, test: dict) -> TestFeedback:
    """One test of a result document, for the student."""
    head, _, rest = str(test.get("message", "")).partition("\n")
    results = test.get("checks", [])
    checked = [p for c in results if (p := proves(assignment, question, c["check"]))]
    return TestFeedback(
        name=test["name"], hidden=bool(test.get("hidden")), passed=bool(test.get("passed")),
        points=test.get("points", 0.0), possible=test.get("possible", 0.0), message=head,
        detail=rest.strip("\n"), checked=list(dict.fromkeys(checked)),
        grader_fault=any(c.get("fault") == GRADER for c in results))


def build(doc: dict) -> Feedback:
    """The feedback for one result document (deterministic: no clock, no paths)."""
    assignment = doc.get("assignment", "")
    questions = []
    for name in sorted(doc.get("questions", {})):
        q = doc["questions"][name]
        tests = [test_feedback(assignment, name, t) for t in q.get("tests", [])]
        # Failures first: what to fix leads, what already works follows.
        tests = [t for t in tests if not t.passed] + [t for t in tests if t.passed]
        questions.append(QuestionFeedback(name, q["points"], q["possible"], tests))
    status = doc.get("status", "")
    return Feedback(
        file=doc["file"], assignment=assignment, seed=doc.get("seed"), status=status,
        points=sum(q.points for q in questions), possible=sum(q.possible for q in questions),
        grader_error=doc.get("error") if status.startswith("grader-error") else None,
        rejected=doc.get("error") if status == "rejected" else None,
        problems=list(doc.get("problems", [])), cells=_cells(doc), questions=questions,
        cut=[str(c) for c in doc.get("cut", [])])


def _cells(doc: dict) -> list[dict]:
    """Notebook cells that raised or carry notes (skipped magics), numbered from 1."""
    found = []
    for cell in doc.get("notebook", {}).get("cells", []):
        error = cell.get("error") or {}
        if error or cell.get("notes") or cell.get("status") == "stopped":
            found.append({"number": cell["index"] + 1, "error": error,
                          "reason": cell.get("reason", ""), "notes": cell.get("notes", [])})
    return found


def _md(text: str) -> str:
    """Escape the Markdown that messages can hold by accident (``2*x``, ``<cell 8>``) or on
    purpose: no raw HTML or autolink (``<``), no link, image or link definition (every one
    needs ``](``, ``][`` or ``]:``), one line (a line break could start a heading or a block)."""
    text = " ".join(str(text).splitlines())
    for ch in "\\`*<":
        text = text.replace(ch, "\\" + ch)
    return re.sub(r"\](?=[(\[:])", r"\\]", text)


def _fence(text: str) -> str:
    """A code fence that ``text`` cannot close: longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", str(text))), default=0)
    return "`" * max(3, longest + 1)


def _num(x: float) -> str:
    return f"{x:g}"


def environment(autoescape: bool) -> Environment:
    """The Jinja environment for the templates beside this module."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=autoescape,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters.update(md=_md, num=_num, fence=_fence)
    return env


def render_markdown(fb: Feedback) -> str:
    return environment(False).get_template("feedback.md.j2").render(fb=fb)


def render_html(fb: Feedback) -> str:
    return environment(True).get_template("feedback.html.j2").render(fb=fb)


#: The most one feedback file may take; over it, the notebook's cell errors are left out.
MAX_FEEDBACK_BYTES = 1 << 20


def write_all(folder: Path) -> list[Path]:
    """Write ``folder/feedback/<name>.md`` and ``.html`` for every result document.

    Args:
        folder: ``OUT/<assignment>``.

    Returns:
        The Markdown files written.
    """
    written = []
    for doc in iter_results(folder):
        fb = build(doc)
        md, html = render_markdown(fb), render_html(fb)
        if max(len(md.encode()), len(html.encode())) > MAX_FEEDBACK_BYTES:
            # the document is capped already (results.capped); escaping can still grow it
            fb = replace(fb, cells=[], cut=[*fb.cut, (
                f"the notebook cells' errors were left out to keep this file under "
                f"{MAX_FEEDBACK_BYTES // 1024} KB")])
            md, html = render_markdown(fb), render_html(fb)
        base = folder / "feedback" / stem(fb.file)
        write_atomic(base.with_name(base.name + ".md"), md)
        write_atomic(base.with_name(base.name + ".html"), html)
        written.append(base.with_name(base.name + ".md"))
    return written
