"""Written answers graded by hand: questions from the masters, answers from the notebooks,
grading pages, scores files, and the scores merged into the grades, feedback and reports.

``report`` is what ``reporting.build`` calls per assignment; ``check`` and ``keep`` are what
``autograder report --written`` does before it (docs: README's staff workflow).
"""

from __future__ import annotations

from pathlib import Path

from ...authoring.written import WrittenQuestion
from ...running.batch import written_answers as answers
from ...running.outputs import final_grades, grading_json
from ...running.outputs import written_questions as questions
from ...running.outputs.final_grades import Grades, assignment_dirs
from ...running.outputs.results import iter_results
from ...running.resultdoc import ResultDoc
from ...running.results import result_path
from . import pages, scores


def seed_of(out: Path) -> object:
    """The run's seed (``out/grading.json``), the key of the pseudonyms."""
    return grading_json.read(out).get("seed")


def check(out: Path, paths: list[Path]) -> scores.Scores:
    """The scores files ``paths`` merged and checked against every assignment in ``out``;
    ``scores.ScoresError`` (one line) for the first problem. Writes nothing."""
    known = {}
    for folder in assignment_dirs(out):
        found = questions.load(folder)
        if found:
            known[folder.name] = (found, {r["file"] for r in final_grades.read(folder).rows})
    if not known:
        raise scores.ScoresError(f"{out}: no written questions in this output (graded "
                                 "before written answers were collected?)")
    return scores.merge(paths, known)


def keep(out: Path, merged: scores.Scores) -> None:
    """Keep ``merged`` as each assignment's scores (replacing what was merged before)."""
    for assignment, rows in merged.items():
        scores.save_merged(out / assignment, rows)


def report(folder: Path, seed: object, names: bool = False) -> tuple[list[Path], list[str]]:
    """Pages and the blank scores file for ``folder`` (``OUT/<assignment>``), and the merged
    scores applied to its ``final_grades.csv``; return the pages and what to tell staff."""
    found = questions.load(folder)
    if not found:
        return [], []
    grades = final_grades.read(folder)
    docs = [{"file": d.file, "error": d.error if d.status.is_rejected else None,
             answers.KEY: d.extra.get(answers.KEY)} for d in iter_results(folder)]
    written = pages.write(folder, found, docs, seed, names)
    scores.write_blank(folder, [r["file"] for r in grades.rows], found)
    merged = scores.load_merged(folder)
    if merged is None:
        left = len(grades.rows) * len(found)
        return written, [f"{left} written answer(s) to grade by hand: open "
                         f"{folder / 'written'}/<question>.html, then `autograder report -o "
                         f"{folder.parent} --written SCORES.csv`; until then the totals hold "
                         f"the auto-graded points only"]
    apply(folder, grades, found, merged)
    left = sum(merged.get((r["file"], q.name), scores.Score(None)).points is None
               for r in grades.rows for q in found)
    return written, [f"written answers: {left} of {len(grades.rows) * len(found)} not graded "
                     f"yet (empty cells in final_grades.csv, never 0; the totals and the "
                     f"Canvas gradebook count what is graded)" if left else
                     "written answers: every one graded"]


def apply(folder: Path, grades: Grades, found: list[WrittenQuestion],
          merged: dict[tuple[str, str], scores.Score]) -> None:
    """Rewrite ``final_grades.csv`` from the result documents (as ``autograder merge`` does)
    with the written questions' columns and points."""
    names = {q.name for q in found}
    possible = {q: p for q, p in grades.possible.items() if q not in names}
    rows = [ResultDoc.read(result_path(folder / "results", r["file"])).row() for r in grades.rows]
    given = {k: s.points for k, s in merged.items()}
    final_grades.write(folder / final_grades.FILE, rows, possible,
                     ({q.name: q.points for q in found}, given))


def for_feedback(folder: Path) -> dict[str, list[dict]] | None:
    """File -> its written questions' points (``None``: not graded yet), possible and
    comment, once scores were merged (``None`` before: feedback says nothing of them)."""
    found, merged = questions.load(folder), scores.load_merged(folder)
    if not found or merged is None:
        return None
    files = {file for file, _ in merged} | {r["file"] for r in final_grades.read(folder).rows}
    return {f: [{"name": q.name, "possible": q.points,
                 "points": merged.get((f, q.name), scores.Score(None)).points,
                 "comment": merged.get((f, q.name), scores.Score(None)).comment}
                for q in found] for f in files}
