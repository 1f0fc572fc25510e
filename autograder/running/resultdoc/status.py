"""The one status vocabulary of a result document, and the row each submission gets in
``final_grades.csv`` (``Graded``). No imports beyond the standard library: the Docker runner's
host side, the batch and the reports all read it."""

from __future__ import annotations

from dataclasses import dataclass

GRADED, GRADER_ERROR, REJECTED = "graded", "grader-error", "rejected"
#: Graded, but the whole submission's time limit cut it short (not one cell's or call's).
TIMED_OUT = "graded-timed-out"
#: Graded, but the notebook's process had to be replaced (``problems`` says why).
WORKER_RESTARTS = "graded-with-worker-restarts"
#: How its row's status starts in ``final_grades.csv``.
TIMED_OUT_ROW = "Timed out (the whole submission's time limit)"
#: A clean row's status in ``final_grades.csv``.
COMPLETED = "Completed"


class Status(str):
    """A document's status: ``graded`` (clean), ``graded-...`` (graded, with ``problems``:
    ``graded-timed-out``, ``graded-with-worker-restarts``), ``grader-error`` (our fault) or
    ``rejected`` (not a usable notebook). A ``str`` on disk and in messages; ask it with the
    ``is_*`` properties, never by comparing words.

    Raises:
        ValueError: for any other word.
    """

    __slots__ = ()

    def __new__(cls, word: str) -> "Status":
        if not isinstance(word, str) or not (word.startswith(GRADED)
                                             or word in (GRADER_ERROR, REJECTED)):
            raise ValueError(f"unknown status {word!r}"[:60])
        return super().__new__(cls, word)

    @property
    def is_graded(self) -> bool:
        """Graded, cleanly or with problems (points count)."""
        return self.startswith(GRADED)

    @property
    def is_clean(self) -> bool:
        """Graded with nothing wrong: the row says ``Completed``."""
        return self == GRADED

    @property
    def is_timed_out(self) -> bool:
        return self == TIMED_OUT

    @property
    def is_grader_error(self) -> bool:
        return self == GRADER_ERROR

    @property
    def is_rejected(self) -> bool:
        return self == REJECTED


@dataclass(frozen=True)
class Graded:
    """One submission's row of ``final_grades.csv`` (``ResultDoc.row``).

    Attributes:
        name: the submission's name (the ``file`` column).
        scores: question -> (score, max_score).
        status: the row's status in words: ``Completed`` or what went wrong.
        outcome: its document's status, to ask with ``is_*``.
    """

    name: str
    scores: dict[str, tuple[float, float]]
    status: str
    outcome: Status = Status(GRADED)
