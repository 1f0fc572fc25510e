"""The result document of one submission, typed all the way down: ``ResultDoc`` (``document``)
holds ``Question``s, their ``TestOutcome``s, each test's ``CheckRecord``s and the notebook's
``CellReport``s (``parts``); its status is a ``Status`` (``status``), one vocabulary for the
judge, the batch and the reports. No torch, no otter: the Docker runner's host side imports
this."""

from .document import KIND, SCHEMA_VERSION, DocumentError, ResultDoc, as_sentence, sentences
from .parts import STOPPED, CellError, CellReport, CheckRecord, Notebook, Question, TestOutcome
from .status import (
    COMPLETED,
    GRADED,
    GRADER_ERROR,
    REJECTED,
    TIMED_OUT,
    TIMED_OUT_ROW,
    WORKER_RESTARTS,
    Graded,
    Status,
)

__all__ = ["KIND", "SCHEMA_VERSION", "DocumentError", "ResultDoc", "STOPPED", "CellError", "CellReport",
           "CheckRecord", "Notebook", "Question", "TestOutcome", "COMPLETED", "GRADED",
           "GRADER_ERROR", "REJECTED", "TIMED_OUT", "TIMED_OUT_ROW", "WORKER_RESTARTS",
           "Graded", "Status", "as_sentence", "sentences"]
