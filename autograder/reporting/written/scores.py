"""Scores files: the graders' points and comments for the written answers.

A scores file is a CSV with the header ``file,question,points,comment`` and optionally
``answer`` (``file`` as in ``final_grades.csv``; empty ``points``: not graded yet). Grading writes a blank one per
assignment (``OUT/<a>/written/scores.csv``); the grading pages export the same layout.
``autograder report --written FILE ...`` checks every file before anything is written, then
keeps what they say, per assignment, in ``OUT/<a>/written/merged_scores.csv``, which replaces
the scores merged before (kept as ``merged_scores-<UTC time>.csv``) and which every later
report applies.

A score belongs to the answer it was given for: a fifth column, ``answer``, holds a digest of
the answer's text (``digest``), as the grading page showed it (its export, the blank file) or,
in a file without one, as it was when merged. A report that finds another answer there (a
resubmission, another section's notebook of the same name) applies no score to it and moves
the row to ``OUT/<a>/written/set_aside_scores-<UTC time>.csv``. Every file this module writes
is itself a scores file (``report --written`` takes it back); a row whose ``answer`` cell is
empty is taken for the answer graded now.

Refused, with one line naming the file, the row and the problem: a file that is not a UTF-8
CSV with that header, an unknown file or question, points that are not a number, outside
0 to the question's points or off its step, and two rows for one answer with different
points (in one file or across files). The same points twice are one score; their comments
are joined.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ...authoring.written import WrittenQuestion
from ...running.files import write_atomic
from ...running.outputs.cells import from_spreadsheet, safe_row

HEADER = ["file", "question", "points", "comment"]
#: The optional fifth column: the digest of the answer a score was given for.
ANSWER = "answer"
BLANK, MERGED, SET_ASIDE = "scores.csv", "merged_scores.csv", "set_aside_scores"
#: The most a scores file may hold; a class's file is a few hundred KB.
MAX_BYTES = 16 * 1024 * 1024


class ScoresError(ValueError):
    """A scores file that cannot be used: one line naming the file, row and problem."""


@dataclass(frozen=True)
class Score:
    """One answer's score: ``points`` is ``None`` until a grader gives some; ``answer`` is the
    ``digest`` of the answer it was given for (empty: the answer graded now)."""

    points: float | None
    comment: str = ""
    answer: str = ""


#: assignment -> (file, question) -> score
Scores = dict[str, dict[tuple[str, str], Score]]


def _num(x: float) -> str:
    return f"{x + 0.0:g}"  # + 0.0: -0 is written 0


def digest(answer: str) -> str:
    """What a merged score keeps of the answer it was given for."""
    return hashlib.sha256(answer.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def to_csv(rows: dict[tuple[str, str], Score], answers: bool = False) -> str:
    """The scores file for ``rows``, by file then question (spreadsheet-safe cells); with
    ``answers``, the ``answer`` column too."""
    buf = io.StringIO(newline="")
    out = csv.writer(buf)  # lines end in \r\n, so a lone \r in a comment is quoted too
    out.writerow(HEADER + [ANSWER] * answers)
    for (file, question), s in sorted(rows.items()):
        out.writerow(safe_row([file, question, "" if s.points is None else _num(s.points),
                               s.comment] + [s.answer] * answers))
    return buf.getvalue()


def write_blank(folder: Path, files: list[str], questions: list[WrittenQuestion],
                answers: dict[tuple[str, str], str] | None = None) -> Path:
    """``folder/written/scores.csv``: a row per answer, points empty (with ``answers``, (file,
    question) -> its ``digest``, the answer column). Rows a grader already filled in there are
    kept with their answer (a regrade never wipes them), and so are filled rows of files no
    longer graded (the merge then names them); a file there that is no longer a scores file
    (saved by a spreadsheet in another layout) is left as it is, for its grader to fix."""
    path = folder / "written" / BLANK
    rows = {(f, q.name): Score(None, answer=(answers or {}).get((f, q.name), ""))
            for f in files for q in questions}
    if path.exists():
        try:
            old = read(path, None)
        except ScoresError:
            return path
        rows.update({k: s for k, s in old.items() if s.points is not None or s.comment})
    write_atomic(path, to_csv(rows, answers=answers is not None))
    return path


def read(path: Path, known: dict[str, float] | None, files: set[str] | None = None,
         steps: dict[str, float] | None = None) -> dict[tuple[str, str], Score]:
    """The rows of the scores file ``path`` that say something (points or a comment).

    Args:
        known: question -> its points, to check rows against (``None``: no checks).
        files: the files that may be named (``final_grades.csv``'s).
        steps: question -> its points step (the points must be a multiple of it).

    Raises:
        ScoresError: the first problem, naming ``path`` and the row (the header is row 1).
    """
    def bad(row: int | None, problem: str) -> ScoresError:
        return ScoresError(f"{path}: {f'row {row}: ' if row else ''}{problem}")

    try:
        data = path.read_bytes() if path.stat().st_size <= MAX_BYTES else None
        if data is None:
            raise bad(None, f"over {MAX_BYTES // 2**20} MB: not a scores file")
        text = data.decode("utf-8-sig")
        table = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except OSError as exc:
        raise bad(None, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise bad(None, f"not a CSV file: not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise bad(None, f"not a CSV file ({exc})") from None
    header = [c.strip() for c in table[0]] if table else []
    if header not in (HEADER, HEADER + [ANSWER]):
        raise bad(1, f"not a scores file: the header must be {','.join(HEADER)}")
    found: dict[tuple[str, str], tuple[Score, int]] = {}
    for number, cells in enumerate(table[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise bad(number, f"{len(cells)} cells, not {len(header)} ({','.join(header)})")
        file, question, points, comment, *answer = (from_spreadsheet(c) for c in cells)
        if known is not None and question not in known:
            raise bad(number, f"unknown question {question!r} (written questions: "
                              f"{', '.join(sorted(known)) or 'none'})")
        if files is not None and file not in files:
            raise bad(number, f"unknown file {file!r}: not in final_grades.csv")
        most = known.get(question) if known is not None else None
        step = (steps or {}).get(question)
        score = Score(_points(points.strip(), most, step, question, f"{path}: row {number}: "),
                      comment.strip(), "".join(answer).strip())
        key = (file, question)
        if key in found and score.points is not None and found[key][0].points is not None \
                and found[key][0].points != score.points:
            raise bad(number, f"{file} {question}: {_num(score.points)} points, but row "
                              f"{found[key][1]} gives {_num(found[key][0].points)}")
        if score.points is None and not score.comment:
            continue
        if key in found:
            score = join(found[key][0], score)
        found[key] = (score, number)
    return {k: s for k, (s, _) in found.items()}


def _points(text: str, most: float | None, step: float | None, question: str,
            where: str) -> float | None:
    """The points a cell gives (``None``: empty), checked against what ``question`` is worth
    and its step (as the grading page checks them)."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ScoresError(f"{where}points {text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise ScoresError(f"{where}points {text[:40]!r} is not a finite number")
    if value < 0:
        raise ScoresError(f"{where}points {text[:40]} are below 0")
    if most is not None and value > most:
        raise ScoresError(f"{where}points {text[:40]} are above {_num(most)}, what {question} "
                          "is worth")
    if step and abs(value / step - round(value / step)) > 1e-9:
        raise ScoresError(f"{where}points {text[:40]} are not a multiple of {_num(step)}, "
                          f"{question}'s step")
    return value + 0.0  # -0 is 0


def join(a: Score, b: Score) -> Score:
    """Two rows for one answer that agree on the points (or one has none)."""
    comments = list(dict.fromkeys(c for c in (a.comment, b.comment) if c))
    return Score(a.points if a.points is not None else b.points, "\n".join(comments),
                 a.answer or b.answer)


def merge(paths: list[Path], assignments: dict[str, tuple[list[WrittenQuestion], set[str]]]
          ) -> Scores:
    """Every file's rows, checked, by assignment (``assignments``: name -> its written
    questions and the files of its ``final_grades.csv``).

    Raises:
        ScoresError: the first problem of the first file that has one; a disagreement across
            files names the second file and its row.
    """
    owner = {q.name: a for a, (qs, _) in assignments.items() for q in qs}
    points = {q.name: q.points for qs, _ in assignments.values() for q in qs}
    steps = {q.name: q.step for qs, _ in assignments.values() for q in qs}
    merged: Scores = {}
    seen: dict[tuple[str, str], tuple[Path, Score]] = {}
    for path in paths:
        rows = read(path, points, steps=steps)
        for (file, question), score in rows.items():
            assignment = owner[question]
            if file not in assignments[assignment][1]:
                raise ScoresError(f"{path}: row {_row_of(path, file, question)}: unknown file "
                                  f"{file!r}: not in {assignment}'s final_grades.csv")
            key = (file, question)
            if key in seen and None not in (seen[key][1].points, score.points) \
                    and seen[key][1].points != score.points:
                raise ScoresError(
                    f"{path}: row {_row_of(path, file, question)}: {file} {question}: "
                    f"{_num(score.points)} points, but {seen[key][0]} gives "
                    f"{_num(seen[key][1].points)}")
            score = join(seen[key][1], score) if key in seen else score
            seen[key] = (path, score)
            merged.setdefault(assignment, {})[key] = score
    return merged


def _row_of(path: Path, file: str, question: str) -> int:
    """The row of ``path`` that names ``file`` and ``question`` (for messages)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        for number, cells in enumerate(csv.reader(f), start=1):
            if [from_spreadsheet(c) for c in cells[:2]] == [file, question]:
                return number
    return 0


def save_merged(folder: Path, rows: dict[tuple[str, str], Score],
                backup: bool = False) -> Path | None:
    """``folder/written/merged_scores.csv`` (``folder``: ``OUT/<assignment>``) with each row's
    answer digest; with ``backup``, a different earlier file is first copied to
    ``merged_scores-<UTC time>.csv``: return that copy (``None``: none made)."""
    path, text = folder / "written" / MERGED, to_csv(rows, answers=True)
    copy = None
    if backup and path.exists() and path.read_text(encoding="utf-8") != text:
        copy = _write_new(path.parent, path.stem, path.read_text(encoding="utf-8"))
    write_atomic(path, text)
    return copy


def load_merged(folder: Path) -> dict[tuple[str, str], Score] | None:
    """What the last ``report --written`` kept for ``folder``, or ``None`` (never merged)."""
    path = folder / "written" / MERGED
    return read(path, None) if path.exists() else None


def stamped(rows: dict[tuple[str, str], Score], answers: dict[tuple[str, str], str]
            ) -> dict[tuple[str, str], Score]:
    """``rows``, each without an answer digest given the one of ``answers`` (the answers
    graded now: (file, question) -> ``digest``)."""
    return {k: s if s.answer or k not in answers else replace(s, answer=answers[k])
            for k, s in rows.items()}


def set_aside(folder: Path, rows: dict[tuple[str, str], Score]) -> Path:
    """``rows`` (scores given for an answer since changed) in a file of their own,
    ``folder/written/set_aside_scores-<UTC time>.csv`` (never one set aside before)."""
    return _write_new(folder / "written", SET_ASIDE, to_csv(rows, answers=True))


def _write_new(folder: Path, stem: str, text: str) -> Path:
    """``text`` in ``folder/<stem>-<UTC time>.csv``, a name no file has yet."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path, n = folder / f"{stem}-{stamp}.csv", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{stamp}-{n}.csv"
    write_atomic(path, text)
    return path
