"""Grading part of a batch again: ``--resume``, ``--only NAME`` and ``--question Q``.

Results are files, one per submission, so a partial run merges into what is on disk: the
others' results and rows stay exactly as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..names import text
from ..resultdoc import DocumentError, ResultDoc
from ..resultdoc.document import source_of
from ..results import result_path
from ..submissions import Submission


@dataclass(frozen=True)
class Selection:
    """Which submissions and questions a run grades.

    Attributes:
        resume: skip submissions that already have a result document (a grader error's is
            graded again).
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
    return not names or bool({sub.name, text(sub.path.name), text(sub.path.stem)} & set(names))


def as_listed(names: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    """``--only`` names as the batch lists them: a path that resolves to a file in ``folder``
    (``./stu.ipynb`` from inside it, ``subs/stu.ipynb`` from above it, an absolute path)
    becomes its path under ``folder`` (red-team rt-2: they were refused as naming nothing). A
    name that already is a path under ``folder``, a file name or a stem is kept as given."""
    try:
        root = folder.resolve()
    except (OSError, RuntimeError):
        return names
    kept = []
    for name in names:
        given = Path(name)
        try:  # the last part unresolved: a link named as the file is the link, not its target
            where = given.parent.resolve() / given.name
            plain = not given.is_absolute() and not {".", ".."} & set(name.split("/"))
            listed = (plain and (folder / name).exists()) or not where.is_file()
        except (OSError, RuntimeError, ValueError):
            listed = True
        if not listed and root.is_file():
            kept.append(text(folder.name) if where == root else name)
        elif not listed and where.is_relative_to(root):
            kept.append(text(where.relative_to(root).as_posix()))
        else:
            kept.append(name)
    return tuple(kept)


def result_file(results: Path, sub: Submission) -> Path:
    return result_path(results, sub.name)


@dataclass(frozen=True)
class Picked:
    """What a run grades of one assignment's submissions.

    Attributes:
        now: the submissions to grade now.
        docs: the documents on disk a partial run keeps or merges into, by name.
    """

    now: list[Submission]
    docs: dict[str, ResultDoc]
    changed: frozenset[str] = frozenset()
    redrawn: frozenset[str] = frozenset()


def pick(subs: list[Submission], results: Path, sel: Selection) -> Picked:
    """The submissions to grade now, and the documents on disk a partial run keeps or merges
    into. Read before anything is graded: a document that is not ours (stock otter's, an older
    grader's, another file) is a ``DocumentError`` naming it, never guessed at.

    A file whose bytes are not those its document graded (``changed``: a resubmission under
    the same name, red-team round rt-2) is graded again by ``--resume``, and in full by
    ``--question`` (that question alone would mix two versions in one grade). A document
    written before the hash was kept is taken as the file's.

    A document drawn with another seed than the submission's now (``redrawn``: a run stopped
    midway after it started again with a new seed, red-team round rt-s3) is graded again in
    full the same ways: kept, it would be a grade of other hidden inputs than the run's."""
    now, docs, changed, redrawn = [], {}, set(), set()
    for sub in subs:
        path = result_file(results, sub)
        if sel.partial and path.exists():
            doc = docs[sub.name] = ResultDoc.read(path)
            if doc.file != sub.name:
                raise DocumentError(f"{path}: holds the result of {doc.file}, not {sub.name}")
            if source_of(doc) not in (None, sub.sha256):
                changed.add(sub.name)
            elif None not in (doc.seed, sub.seed) and doc.seed != sub.seed \
                    and not doc.is_grader_error:
                redrawn.add(sub.name)
        graded = (sub.name in docs and not docs[sub.name].is_grader_error
                  and sub.name not in changed | redrawn)
        if matches(sub, sel.only) and not (sel.resume and graded):
            now.append(sub)
    return Picked(now, docs, frozenset(changed), frozenset(redrawn))


def on_disk(docs: dict[str, ResultDoc], subs: list[Submission]) -> list:
    """Rows (``Graded``) for the kept submissions that have a result document."""
    return [docs[sub.name].row() for sub in subs if sub.name in docs]
