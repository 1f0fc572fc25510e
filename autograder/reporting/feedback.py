"""Per-student feedback, one Markdown and one self-contained HTML file per submission.

What a student sees: a "fix first" list (the earliest failing question and its named mistake),
then for each test the message naming the mistake first (public tests already say got vs
expected; hidden checks add what was checked, from the check's ``proves`` sentence), then the
points. Never the hidden inputs' generator or the tests' code: only the registry's sentence and
the message the check wrote. How much of a hidden test's message shows is the course's choice
(``redaction.DETAIL``): ``full`` (inputs, expected values, seed), ``mistake`` (the named
mistake with every number taken out), ``score`` (points only).

Here: the feedback of one result document (``build``) and its two renderings; writing every
submission's files under ``OUT/<a>/feedback/`` is ``feedback_files``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..checks import contract_names, descriptions
from ..running.names import visible
from ..running.resultdoc import CheckRecord, ResultDoc, TestOutcome
from .near_names import difference, near_name
from .redaction import redact
from .templating import environment

_NOT_DEFINED = re.compile(r"^([\w, ]+) is not defined: ")
#: How the worker names a cell in tracebacks (``worker.main.CELL_FILE``, numbered from 1).
_CELL_FILE = re.compile(r"<cell (\d+)>")


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
        withheld: the message is not shown (``score`` detail); only the points are.
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
    withheld: bool = False


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
    detail: str = "full"
    fix_first: list[dict] = field(default_factory=list)
    #: the written questions once scores are merged: name, points (None: not graded yet),
    #: possible, the grader's comment (``reporting.written.for_feedback``)
    written: list[dict] = field(default_factory=list)


def proves(assignment: str, question: str, check: str) -> str | None:
    """The sentence for ``question/check`` (``checks.descriptions``, read without importing
    the checks), or ``None`` for an unknown check."""
    return descriptions.proves(assignment, f"{question}/{check}")


def test_feedback(assignment: str, question: str, test: TestOutcome, detail: str = "full",
                  cells: list[dict] | None = None) -> TestFeedback:
    """One test of a result document, for the student, at the course's ``detail``."""
    results = test.checks or ()
    message = _real_cause(test.message, results, cells or [], assignment)
    head, _, rest = message.partition("\n")
    rest = cell_names_in(rest, cells or [])
    checked = [p for c in results if (p := proves(assignment, question, c.check))]
    withheld = False
    if test.hidden and detail == "mistake":
        # a trimmed traceback can quote the hidden inputs (shapes, values): left out
        head, rest = redact(head, None if test.student_text is None else list(test.student_text),
                            bool(test.student_text_cut)), ""
    elif test.hidden and detail == "score":
        head, rest, withheld, checked = "", "", True, []
    return TestFeedback(
        name=test.name, hidden=test.hidden, passed=test.passed, points=test.points,
        possible=test.possible, message=head, detail=rest.strip("\n"),
        checked=list(dict.fromkeys(checked)), grader_fault=test.grader_fault,
        withheld=withheld)


def cell_names_in(traceback: str, cells: list[dict]) -> str:
    """``File "<cell 26>"`` -> ``File "<the cell defining export_numpy>"``: Jupyter shows no
    cell numbers, a student finds a cell by what it defines."""
    names = {c["number"]: c["name"] for c in cells}
    return _CELL_FILE.sub(lambda m: f"<{names.get(int(m.group(1)), m.group(0)[1:-1])}>",
                          traceback)


def _real_cause(message: str, results: tuple[CheckRecord, ...], cells: list[dict],
                assignment: str = "") -> str:
    """A "not defined" message replaced by why, when the student did write the name: the
    cell defining it raised, or stopped the notebook's process (a crash, a time limit); or,
    when no cell defines it, the name a cell defines instead, misspelt or with a look-alike
    character (``near_names``)."""
    found = _NOT_DEFINED.match(message)
    if not found or not any(c.misconception == "not-defined" for c in results):
        return message
    names = [n.strip() for n in found.group(1).split(",") if n.strip()]
    for cell in cells:
        if not set(names) & set(cell["defines"]):
            continue
        if cell["error"]:
            why = f"raised {cell['error'].type}: {cell['error'].message}"
        elif cell["reason"]:
            why = f"stopped the notebook's process ({cell['reason']})"
        else:
            continue
        return (f"{', '.join(names)} was never defined: {cell['name']} {why} before its "
                f"definition ran. Fix that cell; your definition itself was not graded yet.")
    return _defined_instead(message, names, cells, assignment)


def _defined_instead(message: str, names: list[str], cells: list[dict], assignment: str) -> str:
    """``message``, or what a cell defines in place of the first of ``names`` that no cell
    defines (``near_names``): the tests look a name up exactly."""
    defined = {name: cell for cell in cells for name in cell["defines"]}
    for name in names:
        found = None if name in defined else near_name(
            name, defined, contract_names.NAMES.get(assignment, ()))
        if found is None:
            continue
        alike = difference(name, found)
        told = (f", which looks like {name} but is another name to Python: {alike}" if alike
                else "")
        return (f"{name} is not defined: {defined[found]['name']} defines {found}{told}. The "
                f"tests look each name up exactly as the assignment spells it: rename it {name} "
                "and run that cell again.")
    return message


def build(doc: ResultDoc, detail: str = "full") -> Feedback:
    """The feedback for one result document at ``detail`` (deterministic: no clock, no
    paths)."""
    assignment = doc.assignment or ""
    cells = _cells(doc)
    questions = []
    for name in sorted(doc.questions):
        q = doc.questions[name]
        tests = [test_feedback(assignment, name, t, detail, cells) for t in q.tests]
        # Failures first: what to fix leads, what already works follows.
        tests = [t for t in tests if not t.passed] + [t for t in tests if t.passed]
        questions.append(QuestionFeedback(name, q.points, q.possible, tests))
    return Feedback(
        file=doc.file, assignment=assignment, seed=doc.seed, status=doc.status,
        points=sum(q.points for q in questions), possible=sum(q.possible for q in questions),
        grader_error=doc.error if doc.status.is_grader_error else None,
        rejected=doc.error if doc.status.is_rejected else None,
        problems=list(doc.problems), cells=[c for c in cells if c["shown"]],
        questions=questions, cut=list(doc.cut or ()), detail=detail,
        fix_first=fix_first(questions))


def fix_first(questions: list[QuestionFeedback]) -> list[dict]:
    """The earliest failing question and its first named mistake (a student's own fault,
    not the grader's): where to start."""
    for q in questions:
        failing = [t for t in q.tests if not t.passed and not t.grader_fault]
        if failing:
            t = failing[0]
            return [{"question": q.name, "message": t.message,
                     "more": len(failing) - 1, "withheld": t.withheld}]
    return []


def _cells(doc: ResultDoc) -> list[dict]:
    """The notebook's cells as reported, each named by what it defines or its first line
    (``name``); ``shown``: it raised or carries notes (skipped magics)."""
    found = []
    for cell in doc.notebook.cells if doc.notebook else ():
        found.append({"number": cell.index + 1, "error": cell.error,
                      "name": cell.name or f"code cell {cell.index + 1}",
                      "defines": list(cell.defines or ()), "reason": cell.reason or "",
                      "notes": list(cell.notes or ()),
                      "shown": bool(cell.error or cell.notes or cell.stopped)})
    for cell in found:
        if cell["error"] and cell["error"].traceback:
            cell["error"] = replace(cell["error"], traceback=cell_names_in(
                cell["error"].traceback, found))
    return found


def render_markdown(fb: Feedback) -> str:
    """The feedback file's Markdown, with every character that could move, hide or reorder
    what a reader sees shown as an escape (``names.visible``): what a submission printed or
    raised (an ANSI escape, a right-to-left override, a carriage return) is quoted in it, and
    ``cat`` on the file must not run it in a terminal (red team rt-4)."""
    return visible(environment(False).get_template("feedback.md.j2").render(fb=fb))


def render_html(fb: Feedback) -> str:
    """The feedback file's self-contained HTML page, its hiding characters shown as escapes
    as in the Markdown."""
    return visible(environment(True).get_template("feedback.html.j2").render(fb=fb))


def with_written(fb: Feedback, written: list[dict]) -> Feedback:
    """``fb`` with the written questions' scores, counted in its total as in
    ``final_grades.csv`` (what is not graded yet counts nothing and says so)."""
    if not written or fb.rejected or fb.grader_error:
        return fb
    return replace(fb, written=written,
                   points=fb.points + sum(w["points"] or 0 for w in written),
                   possible=fb.possible + sum(w["possible"] for w in written))
