"""Written answers graded by hand: questions from the masters, answers from the notebooks,
grading pages, scores files, and the scores merged into the grades, feedback and reports.

``report`` is what ``reporting.build`` calls per assignment; ``check`` and ``keep`` are what
``autograder report --written`` does before it (docs: README's staff workflow).
"""

from __future__ import annotations

from pathlib import Path

from ...authoring.written import WrittenQuestion
from ...running.batch import written_answers as answers
from ...running.names import printable
from ...running.outputs import final_grades
from ...running.outputs import written_questions as questions
from ...running.outputs.final_grades import Grades, assignment_dirs
from ...running.outputs.results import iter_results
from ...running.resultdoc import ResultDoc
from ...running.results import result_path
from . import pages, scores


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


def keep(out: Path, merged: scores.Scores) -> list[str]:
    """Keep ``merged`` as each assignment's scores, each for the answer graded now (replacing
    what was merged before, which is kept as a copy); return what to tell staff."""
    said = []
    for assignment, rows in merged.items():
        folder = out / assignment
        before = scores.load_merged(folder) or {}
        copy = scores.save_merged(folder, scores.stamped(rows, digests(_docs(folder),
                                                                       questions.load(folder))),
                                  backup=True)
        gone = sum(s.points is not None and rows.get(k, scores.Score(None)).points is None
                   for k, s in before.items())
        if copy:
            said.append(f"{assignment}: the scores merged before are kept in {copy}"
                        + (f" ({gone} of them in none of these files: no longer applied)"
                           if gone else ""))
    return said


def _docs(folder: Path) -> list[dict]:
    return [{"file": d.file, "error": d.error if d.status.is_rejected else None,
             answers.KEY: d.extra.get(answers.KEY)} for d in iter_results(folder)]


def digests(docs: list[dict], found: list[WrittenQuestion]) -> dict[tuple[str, str], str]:
    """(file, question) -> the ``scores.digest`` of the answer each result document holds."""
    return {(d["file"], q.name): scores.digest(answers.of(d, q.name)["answer"])
            for d in docs for q in found}


def _changed(folder: Path, merged: dict[tuple[str, str], scores.Score],
             now: dict[tuple[str, str], str]) -> tuple[dict, list[str]]:
    """``merged`` without the scores given for another answer than the one graded now, which
    are set aside (``scores.set_aside``); the merged file saved again when that changed it."""
    rows = scores.stamped(merged, now)  # a file merged before digests were kept
    changed = {k: s for k, s in rows.items() if k in now and s.answer != now[k]}
    kept = {k: s for k, s in rows.items() if k not in changed}
    if kept != merged:
        scores.save_merged(folder, kept)
    if not changed:
        return kept, []
    path = scores.set_aside(folder, changed)
    named = ", ".join(printable(f"{f} {q}", lines=False) for f, q in sorted(changed)[:5])
    return kept, [f"written answers: {len(changed)} score(s) set aside, the answer changed "
                  f"since it was graded ({named}{', ...' if len(changed) > 5 else ''}): not "
                  f"applied, kept in {path}; grade them again"]


def report(folder: Path, seed: object, names: bool = False) -> tuple[list[Path], list[str]]:
    """Pages and the blank scores file for ``folder`` (``OUT/<assignment>``), and the merged
    scores applied to its ``final_grades.csv``; return the pages and what to tell staff."""
    found = questions.load(folder)
    if not found:
        return [], []
    grades = final_grades.read(folder)
    docs = _docs(folder)
    now = digests(docs, found)
    written = pages.write(folder, found, docs, seed, names)
    scores.write_blank(folder, [r["file"] for r in grades.rows], found, now)
    merged = scores.load_merged(folder)
    if merged is None:
        left = len(grades.rows) * len(found)
        return written, [f"{left} written answer(s) to grade by hand: open "
                         f"{folder / 'written'}/<question>.html, then `autograder report -o "
                         f"{folder.parent} --written SCORES.csv`; until then the totals hold "
                         f"the auto-graded points only"]
    merged, said = _changed(folder, merged, now)
    # red-team rt-s3: a renamed resubmission's scores stayed under the old name, unapplied,
    # and nothing said so
    files = {r["file"] for r in grades.rows}
    orphans = sorted(k for k, s in merged.items() if k[0] not in files and s.points is not None)
    if orphans:
        named = ", ".join(printable(f"{f} {q}", lines=False) for f, q in orphans[:5])
        said.append(f"written answers: {len(orphans)} score(s) given for files this run does "
                    f"not hold ({named}{', ...' if len(orphans) > 5 else ''}): not applied, "
                    f"kept in {folder / 'written' / scores.MERGED}; a file renamed since "
                    "(a resubmission) needs its scores given again under its new name")
    apply(folder, grades, found, merged)
    left = sum(merged.get((r["file"], q.name), scores.Score(None)).points is None
               for r in grades.rows for q in found)
    return written, said + [f"written answers: {left} of {len(grades.rows) * len(found)} not "
                            f"graded yet (empty cells in final_grades.csv, never 0; the totals "
                            f"and the Canvas gradebook count what is graded)" if left else
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
