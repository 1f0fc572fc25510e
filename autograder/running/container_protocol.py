"""The protocol between the grading host and a judge in a container, both halves in one place.

The host sends one grading job (JSON, at most ``MAX_JOB_BYTES``); the judge
(``entry.container``, ``entry.judge_service``) answers with one line, ``answer_line``:
``RESULT_MARKER`` and the result document, a grader error (``job_error``) when it could not
grade the job. The host reads at most ``MAX_ANSWER_BYTES`` of it and finds the document with
``parse_answer``, or raises ``ContainerError``.

Light on purpose: no torch, no otter. The Docker runners' host side imports it
(``runners.docker_engine``), and so do the entry points inside the image.
"""

from __future__ import annotations

import json

from .resultdoc import ResultDoc
from .results import MAX_DOCUMENT_BYTES, capped

#: What starts the judge's answer line; the worker's output is a pipe to the judge, so student
#: code cannot print it.
RESULT_MARKER = "AUTOGRADER-RESULT-V1 "
#: The largest job a judge reads: the host refuses notebooks over 20 MB; base64 adds a third.
MAX_JOB_BYTES = 64 * 2**20
#: The most of a container's output (or the judge's answer) the host reads: the result
#: document is capped at 1 MiB in the container (``results.capped``); anything past this is
#: cut and the document then fails to parse, as a grader error, never a grader out of memory.
MAX_ANSWER_BYTES = 4 * MAX_DOCUMENT_BYTES


class ContainerError(RuntimeError):
    """The container could not be run or gave no usable result (the grader's fault)."""


def answer_line(doc: ResultDoc) -> str:
    """The judge's answer: ``RESULT_MARKER`` and ``doc`` as one line of JSON, ``doc`` capped
    (``results.capped``) well under the ``MAX_ANSWER_BYTES`` the host reads."""
    return (RESULT_MARKER + json.dumps(capped(doc.to_dict()), sort_keys=True, ensure_ascii=False)
            + "\n")


def job_error(job: dict, message: str) -> ResultDoc:
    """The grader-error document for a job the judge could not grade, under the job's name
    and assignment where the job gives them."""
    name, assignment = job.get("name"), job.get("assignment")
    return ResultDoc.grader_error(name if isinstance(name, str) and name else "?", message,
                                  assignment=assignment if isinstance(assignment, str) else None)


def parse_answer(stdout: str, stderr: str) -> dict:
    """The result document after ``RESULT_MARKER`` in a judge's output (a JSON object), else
    ``ContainerError`` with the last line of ``stderr``."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            doc = json.loads(line[len(RESULT_MARKER):])
            if isinstance(doc, dict):
                return doc
    tail = (stderr.strip().splitlines() or ["no output"])[-1][:500]
    raise ContainerError(f"the judge printed no result ({tail})")
