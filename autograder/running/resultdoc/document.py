"""``ResultDoc``: the one result document of one submission, and its only reader and writer.

Every runner returns one, the batch writes it to ``OUT/<a>/results/<file>.json``, partial
reruns (``--resume``, ``--only``, ``--question``) and the reports read it back. On disk it is
the JSON object the reports know (``file``, ``status``, ``questions``, ``problems``,
``notebook``, ``output``, ``cut``, ``seed``, ...) plus ``schema_version`` and ``kind``; keys this
module does not know are kept as they are (``extra``) and written back unchanged, so a newer
field added by another part of the grader survives a partial rerun.

What is refused: a document without this ``kind`` and ``schema_version`` (stock otter's
``results.json``, a document of an older grader, a foreign JSON file), or one whose required
fields have the wrong type. Such a file is never guessed to be otter output: reading it is a
``DocumentError``, one line naming the file. No torch here: the Docker runner's host side
imports this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..names import relative
from ..results import MAX_STATUS, capped, result_path
from .parts import Notebook, Question
from .status import COMPLETED, GRADED, GRADER_ERROR, REJECTED, TIMED_OUT_ROW, Graded, Status

#: Bump on an incompatible change; a document of another version is refused, not guessed at.
#: 2: every writer goes through ``ResultDoc`` (version 1 documents of grader errors had none).
SCHEMA_VERSION = 2
KIND = "autograder-result"

#: The known fields, in the order a reader cares about; everything else is ``extra``.
_FIELDS = ("file", "status", "questions", "assignment", "seed", "error", "problems",
           "notebook", "output", "cut")


def as_sentence(text: str) -> str:
    """``text`` as one sentence: its first letter capitalised, ending in one full stop (a
    problem joined with others into a message must not run on into the next)."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def sentences(texts: tuple[str, ...] | list[str]) -> str:
    """``texts`` (problems) joined into one message, each ``as_sentence``."""
    return " ".join(as_sentence(t) for t in texts if t.strip())


class DocumentError(ValueError):
    """A file under ``results/`` that is not a result document of this grader (one line)."""


@dataclass(frozen=True)
class ResultDoc:
    """One submission's result.

    Attributes:
        file: the submission's name (its path under the submissions folder).
        status: its ``Status``: graded (cleanly, or with ``problems``), a grader error (our
            fault: ``error`` says what) or rejected (not a usable notebook: ``error``).
        questions: question -> its ``Question`` (points, possible, every test's outcome).
        assignment, seed: what was graded and with which grading seed (``None``: unknown).
        error: why a grader error or a rejection happened.
        problems: what went wrong with the notebook's process, for staff and student.
        notebook: the notebook's cell report (``None``: not run by the judge, or cut).
        output: what the notebook printed (``None``: not captured, or cut).
        cut: what ``results.capped`` cut to keep the document within its budget, in words.
        extra: every other key of the document (``written``, what a newer part adds), kept.
    """

    file: str
    status: Status
    questions: dict[str, Question] = field(default_factory=dict)
    assignment: str | None = None
    seed: int | None = None
    error: str | None = None
    problems: tuple[str, ...] = ()
    notebook: Notebook | None = None
    output: str | None = None
    cut: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))

    # -- the three kinds of result -------------------------------------------------------------
    @classmethod
    def graded(cls, file: str, questions: dict[str, Question], *, assignment: str | None,
               seed: int | None, problems: list[str] | tuple[str, ...] = (),
               status: str = GRADED, notebook: Notebook | None = None,
               output: str | None = None, **extra: Any) -> "ResultDoc":
        """A graded submission; ``status`` may name what went wrong (``graded-with-...``)."""
        if not Status(status).is_graded:
            raise ValueError(f"a graded document's status starts with 'graded': {status!r}")
        return cls(file, Status(status), dict(questions), assignment, seed, None,
                   tuple(problems), notebook, output, None, extra)

    @classmethod
    def grader_error(cls, file: str, error: str, *, assignment: str | None = None,
                     seed: int | None = None, **extra: Any) -> "ResultDoc":
        """The grader failed on this submission (never the student's fault): no points."""
        return cls(file, Status(GRADER_ERROR), {}, assignment, seed, error, extra=extra)

    @classmethod
    def rejected(cls, file: str, error: str, *, assignment: str | None = None,
                 **extra: Any) -> "ResultDoc":
        """A file that was not run at all (not a usable notebook), and why."""
        return cls(file, Status(REJECTED), {}, assignment, None, error, extra=extra)

    @property
    def is_grader_error(self) -> bool:
        return self.status.is_grader_error

    @property
    def points(self) -> float:
        """The points earned, every question together."""
        return sum(q.points for q in self.questions.values())

    # -- JSON ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {**self.extra, "schema_version": SCHEMA_VERSION, "kind": KIND,
                               "file": self.file, "status": str(self.status),
                               "questions": {q: v.to_dict() for q, v in self.questions.items()}}
        for key in ("assignment", "seed", "error", "output"):
            if getattr(self, key) is not None:
                doc[key] = getattr(self, key)
        if self.problems or self.status.is_graded:
            doc["problems"] = list(self.problems)
        if self.notebook is not None:
            doc["notebook"] = self.notebook.to_dict()
        if self.cut is not None:
            doc["cut"] = list(self.cut)
        return doc

    @classmethod
    def from_dict(cls, doc: Any, source: str) -> "ResultDoc":
        """The document ``doc`` read from ``source`` (a path, or "the container's answer");
        ``DocumentError`` naming ``source`` when it is not one of ours."""
        if not isinstance(doc, dict):
            raise DocumentError(f"{source}: not a result document (a JSON "
                                f"{type(doc).__name__}, not an object)")
        if doc.get("kind") != KIND or doc.get("schema_version") != SCHEMA_VERSION:
            raise DocumentError(
                f"{source}: not a result document of this grader (kind "
                f"{_shown(doc.get('kind'))}, schema_version {_shown(doc.get('schema_version'))};"
                f" expected {KIND} version {SCHEMA_VERSION}): regrade it without --resume, "
                f"or move it away")
        try:
            return cls._parsed(doc)
        except ValueError as exc:
            raise DocumentError(f"{source}: not a valid result document ({exc})") from None

    @classmethod
    def _parsed(cls, doc: dict) -> "ResultDoc":
        """``doc``'s fields, typed; ``ValueError`` saying the first that is wrong."""
        problem = _type_problem(doc)
        if problem:
            raise ValueError(problem)
        questions = {}
        for name, raw in doc.get("questions", {}).items():
            try:
                questions[name] = Question.from_dict(raw)
            except ValueError as exc:
                raise ValueError(f"question {name!r} has {exc}" if str(exc).startswith("no ")
                                 else f"question {name!r}: {exc}") from None
        notebook = doc.get("notebook")
        if notebook is not None and not isinstance(notebook, dict):
            raise ValueError("'notebook' is not an object")
        extra = {k: v for k, v in doc.items()
                 if k not in _FIELDS and k not in ("schema_version", "kind")}
        return cls(doc["file"], Status(doc["status"]), questions, doc.get("assignment"),
                   doc.get("seed"), doc.get("error"), tuple(doc.get("problems", ())),
                   None if notebook is None else Notebook.from_dict(notebook),
                   doc.get("output"), None if doc.get("cut") is None else tuple(doc["cut"]),
                   extra)

    @classmethod
    def read(cls, path: Path) -> "ResultDoc":
        """The document at ``path``; ``DocumentError`` (naming ``path``) for anything else."""
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            # a run killed while writing it never leaves one half-written (written whole,
            # then renamed), but a copy or an editor may: the way on, said (red-team rt-2)
            raise DocumentError(f"{path}: not a result document (unreadable: "
                                f"{type(exc).__name__}: {exc}): move it away, then --resume "
                                f"grades that submission again") from None
        return cls.from_dict(doc, str(path))

    def to_json(self) -> str:
        """Capped (``results.capped``), stable key order: identical runs, identical bytes."""
        return json.dumps(capped(self.to_dict()), indent=2, sort_keys=True,
                          ensure_ascii=False) + "\n"

    def write(self, results: Path) -> Path:
        """Write to ``results/<file>.json`` atomically (temp file + rename: ``--resume`` and a
        stop midway see the old document or the whole new one); return the path."""
        path = result_path(results, self.file)
        write_atomic(path, self.to_json())
        return path

    def written(self, results: Path) -> Graded:
        """Write this document; its row. One that cannot be written (a full disk, a name the
        file system refuses) is that submission's grader error, never the batch's end: its
        own shorter document when that can be written, else a row that says so."""
        try:
            self.write(results)
            return self.row()
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            error = ResultDoc.grader_error(self.file, f"its result document could not be "
                                           f"written ({type(exc).__name__}: {exc})",
                                           assignment=self.assignment, seed=self.seed)
        try:
            error.write(results)
        except (OSError, ValueError):
            pass  # the row still says what happened
        return error.row()

    # -- what the batch makes of it ------------------------------------------------------------
    def row(self) -> Graded:
        """The ``final_grades.csv`` row: points per question and a status in words."""
        scores = {q: (float(v.points), float(v.possible)) for q, v in self.questions.items()}
        if self.status.is_clean:
            status = COMPLETED
        elif self.status.is_timed_out:  # never "Completed": what ran out of time scored 0
            status = f"{TIMED_OUT_ROW}: {sentences(self.problems)}"
        elif self.status.is_graded:
            status = f"Completed with problems: {sentences(self.problems)}"
        elif self.status.is_rejected:  # the vetting problem, as the batch says it
            status = self.error or ""
        else:
            status = f"{self.status}: {self.error or ''}"
        if len(status) > MAX_STATUS:
            status = status[:MAX_STATUS] + f" [... {len(status) - MAX_STATUS} more characters cut]"
        return Graded(self.file, scores, status, self.status)

    def with_question(self, new: "ResultDoc", question: str) -> "ResultDoc":
        """This document with ``question`` taken from ``new`` (a run of that question alone):
        problems from both, ``new``'s status when it is worse, ``new``'s seed."""
        questions = dict(self.questions)
        if question in new.questions:
            questions[question] = new.questions[question]
        merged = replace(self, questions=questions,
                         problems=tuple(dict.fromkeys(self.problems + new.problems)),
                         seed=new.seed if new.seed is not None else self.seed)
        if not new.status.is_clean:
            merged = replace(merged, status=new.status,
                             error=new.error if new.error is not None else merged.error)
        return merged


def _shown(value: Any) -> str:
    return "missing" if value is None else repr(value)[:40]


def _type_problem(doc: dict) -> str | None:
    """What is wrong with the top-level fields' types, or ``None``."""
    if not isinstance(doc.get("file"), str) or not doc["file"]:
        return "'file' is not a name"
    try:  # what the feedback and the document itself are named after: never outside OUT
        relative(doc["file"])
    except ValueError as exc:
        return f"'file': {exc}"
    try:
        Status(doc.get("status"))
    except ValueError:
        return f"unknown status {_shown(doc.get('status'))}"
    if not isinstance(doc.get("questions", {}), dict):
        return "'questions' is not an object"
    for key in ("problems", "cut"):
        value = doc.get(key)
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value)):
            return f"{key!r} is not a list of strings"
    for key, kind in (("error", str), ("assignment", str), ("seed", int), ("output", str)):
        if doc.get(key) is not None and not isinstance(doc[key], kind):
            return f"{key!r} is not a {kind.__name__}"
    return None


#: The ``extra`` key holding the hash of the file a document graded (``Submission.sha256``).
SOURCE = "source_sha256"


def with_source(doc: ResultDoc, digest: str | None) -> ResultDoc:
    """``doc`` saying which bytes it graded (``Submission.sha256``), when known."""
    if digest is None:
        return doc
    return replace(doc, extra={**doc.extra, SOURCE: digest})


def source_of(doc: ResultDoc) -> str | None:
    """The hash of the file ``doc`` graded; ``None`` for a document written before it was kept."""
    digest = doc.extra.get(SOURCE)
    return digest if isinstance(digest, str) else None
