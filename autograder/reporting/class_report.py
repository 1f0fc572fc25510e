"""One self-contained HTML class report per assignment, its figures also written as PNGs.

Grades come from ``final_grades.csv`` (the official numbers, so the page and the CSV cannot
disagree); pass rates, misconceptions and problems from the result documents; times from
``timings.json`` (kept out of the results on purpose: those are deterministic).

Misconceptions are counted only where a check named one. What is not a misconception has rows
of its own (``OTHER_FAILURES``): a question left as the template had it, a name never defined,
code that raised or never returned. Wrong answers that no check names are grouped by how they
are wrong (``signature``), largest groups first: they are where the next named misconception is.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from ..running.files import write_atomic
from ..running.names import printable
from ..running.outputs import final_grades
from ..running.outputs import timings as run_timings
from ..running.outputs.final_grades import Grades
from ..running.outputs.results import iter_results
from ..running.outputs.roster import read_absent
from ..running.resultdoc import COMPLETED, CheckRecord, ResultDoc, Status
from . import plots
from .class_report_signature import signature
from .feedback_files import feedback_path
from .templating import environment

#: Failure kinds that are not misconceptions, each counted in a row of its own: the check's
#: misconception id -> what the report calls it. ``unanswered`` is told from the evidence (the
#: template's ``...`` came back, or None: the template's functions have no return), since the
#: checks call it ``wrong-type`` like any wrong type.
OTHER_FAILURES = {"not-defined": "not defined", "raised": "raised an exception",
                  "worker-lost": "crashed or ran out of time"}
UNANSWERED = "unanswered (returned None or the template's ...)"
_PLACEHOLDER = "the template's placeholder"


def pass_rates(grades: Grades) -> list[dict]:
    """Per question: share of submissions with full marks, and mean points (of the graded
    ones: a written answer not graded yet is an empty cell, left out)."""
    rates = []
    for q in grades.questions:
        earned = [float(r[q]) for r in grades.rows if r.get(q) not in (None, "")]
        full = sum(e >= grades.possible[q] for e in earned)
        rates.append({"question": q, "possible": grades.possible[q],
                      "full": full, "rate": full / len(earned) if earned else 0.0,
                      "mean": sum(earned) / len(earned) if earned else 0.0})
    return rates


@dataclass(frozen=True)
class Seen:
    """One check of one submission as this report reads it (``slim``)."""

    question: str
    check: str
    passed: bool
    misconception: str | None
    by_student: bool
    by_grader: bool
    #: when it failed: how (``signature``), whether the template's placeholder came back, and
    #: its message's first line
    signature: str = ""
    unanswered: bool = False
    message: str = ""


@dataclass(frozen=True)
class Slim:
    """What this report keeps of one result document: never its evidence or notebook cells."""

    file: str
    status: Status
    problems: tuple[str, ...]
    cell_errors: tuple[str, ...]
    checks: tuple[Seen, ...]


def kind(check: Seen) -> str | None:
    """What a failing check's result says about the student: a named misconception (its id),
    one of ``OTHER_FAILURES`` or ``UNANSWERED``, or ``None`` (wrong, and no check named it)."""
    if check.unanswered:
        return UNANSWERED
    name = check.misconception
    return OTHER_FAILURES.get(name, name) if name else None


def misconceptions(docs: list[Slim]) -> list[tuple[str, int]]:
    """``question: misconception`` -> how many submissions showed it, most frequent first;
    only what a check named (never an unanswered question, a missing name or a crash)."""
    return _count(docs, lambda k: k not in OTHER_FAILURES.values() and k != UNANSWERED)


def other_failures(docs: list[Slim]) -> list[tuple[str, int]]:
    """``question: unanswered / not defined / raised / crashed`` -> submissions."""
    return _count(docs, lambda k: k in OTHER_FAILURES.values() or k == UNANSWERED)


def _count(docs: list[Slim], wanted) -> list[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for doc in docs:
        counts.update({f"{c.question}: {k}" for c in doc.checks
                       if (k := kind(c)) and wanted(k)})
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def unnamed(docs: list[Slim]) -> list[dict]:
    """Failing checks (the student's fault) that no check named, grouped by check and by how
    the answer was wrong, largest groups first, each with an example submission and message.

    Why a signature and not the wrong value itself: every submission draws hidden inputs of
    its own (``checks.seeding.submission_seed``), so two students with the same mistake never
    return the same numbers. What they share is how their answer relates to the expected one
    (a shape, a dtype, a constant ratio such as x2 or x-1, a type), which is input-free.
    """
    groups: dict[tuple[str, str], dict] = {}
    for doc in docs:
        seen = set()
        for c in doc.checks:
            if c.passed or not c.by_student or kind(c):
                continue
            key = (f"{c.question}/{c.check}", c.signature or "wrong value")
            if key in seen:
                continue
            seen.add(key)
            group = groups.setdefault(key, {"check": key[0], "signature": key[1], "files": [],
                                            "example": c.message})
            group["files"].append(doc.file)
    return sorted(groups.values(), key=lambda g: (-len(g["files"]), g["check"], g["signature"]))


def troubles(grades: Grades, docs: list[Slim]) -> list[dict]:
    """Submissions not cleanly graded: a status other than graded, problems, grader faults,
    and cells that raised (a syntax error leaves the status "graded" but loses answers)."""
    by_file = {d.file: d for d in docs}
    found = []
    files = [r["file"] for r in grades.rows] + sorted(set(by_file) - {r["file"] for r in
                                                                      grades.rows})
    status_of = {r["file"]: r["grading_status"] for r in grades.rows}
    for file in files:
        doc = by_file.get(file)
        notes = [] if doc is None else (
            list(doc.problems) + [f"grader fault in {c.check}" for c in doc.checks
                                  if c.by_grader] + list(doc.cell_errors))
        row_status = status_of.get(file, "not in final_grades.csv")
        if row_status != COMPLETED or notes or (doc is not None and not doc.status.is_clean):
            found.append({"file": file, "status": "?" if doc is None else doc.status,
                          "detail": "; ".join(notes) or row_status})
    return found


def score_spread(grades: Grades) -> list[dict]:
    """Per question: how many submissions earned each number of points, lowest first, and how
    many are not graded yet (written answers: an empty cell)."""
    spread = []
    for q in grades.questions:
        counts = Counter(float(r[q]) for r in grades.rows if r.get(q) not in (None, ""))
        spread.append({"question": q, "possible": grades.possible[q],
                       "counts": sorted(counts.items()),
                       "ungraded": sum(r.get(q) in (None, "") for r in grades.rows)})
    return spread


def feedback_link(file: str) -> str:
    """The feedback page of ``file``, relative to the report folder (each path segment
    quoted: file names are the students')."""
    return "../feedback/" + "/".join(
        quote(part) for part in feedback_path(Path(), file, ".html").as_posix().split("/"))


def figures(grades: Grades, rates: list[dict], common: list[tuple[str, int]],
            timings: dict[str, float]) -> dict[str, bytes]:
    """File name -> PNG bytes for each figure of the report."""
    files = [r["file"] for r in grades.rows]
    return {
        "score_distribution.png": plots.score_distribution(
            [float(r["percent_correct"]) for r in grades.rows]),
        "pass_rate.png": plots.horizontal_bars(
            [r["question"] for r in rates], [100 * r["rate"] for r in rates],
            title="Submissions with full marks, per question", xlabel="%", xmax=100),
        "misconceptions.png": plots.horizontal_bars(
            [k for k, _ in common], [n for _, n in common], color="#c44e52",
            title="Named misconceptions", xlabel="submissions", integer=True),
        "grading_time.png": plots.horizontal_bars(  # names drawn without control characters
            [printable(f, lines=False) for f in files if f in timings],
            [timings[f] for f in files if f in timings],
            color="#55a868", title="Grading time per submission", xlabel="seconds"),
    }


def write(folder: Path) -> Path:
    """Write ``folder/report/class_report.html`` and its PNGs; return the HTML's path.

    Args:
        folder: ``OUT/<assignment>``, holding ``final_grades.csv`` and ``results/``.
    """
    grades, timings = final_grades.read(folder), run_timings.read(folder)
    docs = [slim(d) for d in iter_results(folder)]  # never a class of full documents
    rates, common = pass_rates(grades), misconceptions(docs)
    pngs = figures(grades, rates, common, timings)
    has_feedback = {r["file"] for r in grades.rows  # the page's path by the one name rule
                    if _has_page(folder, r["file"])}
    report = folder / "report"
    report.mkdir(parents=True, exist_ok=True)
    for name, data in pngs.items():
        (report / name).write_bytes(data)
    images = {n: "data:image/png;base64," + base64.b64encode(d).decode() for n, d in pngs.items()}
    html = environment(True).get_template("class_report.html.j2").render(
        assignment=folder.name, grades=grades, rates=rates, common=common,
        troubles=troubles(grades, docs), timings=timings, images=images,
        others=other_failures(docs), unnamed=unnamed(docs), spread=score_spread(grades),
        links={f: feedback_link(f) for f in has_feedback},
        mean=_mean([float(r["total_points_earned"]) for r in grades.rows]),
        possible=sum(grades.possible.values()), absent=read_absent(folder.parent))
    write_atomic(report / "class_report.html", html)
    return report / "class_report.html"


def _has_page(folder: Path, file: str) -> bool:
    """Whether ``file``'s feedback page is there; ``False`` rather than an error when the file
    system refuses to look or the name is none of ours (the feedback step names those)."""
    try:
        return feedback_path(folder / "feedback", file, ".html").is_file()
    except (OSError, ValueError):
        return False


def slim(doc: ResultDoc) -> Slim:
    """What this report reads of a result document: status, problems, the cells that raised,
    and per check its name, misconception, fault and, when it failed, how (``signature``),
    whether the template's placeholder came back, and its message's first line (no evidence
    or notebook cells kept)."""

    def seen(question: str, c: CheckRecord) -> Seen:
        base = Seen(question, c.check, c.passed, c.misconception, c.by_student, c.by_grader)
        if c.passed:
            return base
        return replace(base, signature=signature(c.evidence),
                       unanswered=(_PLACEHOLDER in json.dumps(c.evidence.get("got"))
                                   or " returned None;" in c.message),
                       message=c.message.split("\n", 1)[0][:300])

    cells = doc.notebook.cells if doc.notebook else ()
    return Slim(doc.file, doc.status, doc.problems,
                tuple(f"{c.name or 'a cell'} raised {c.error.type}" for c in cells if c.error),
                tuple(seen(q, c) for q, v in doc.questions.items() for t in v.tests
                      for c in t.checks or ()))


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0
