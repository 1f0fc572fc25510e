"""What ``--feedback mistake`` leaves of a hidden test's message: the grader's words, without
the numbers (the hidden inputs, the expected values), the seed, or any text the student's code
chose (what it raised, a string or class name it returned: these can spell the inputs out in
words). The judge lists those texts with the failed test (``student_text``:
``running.judge.core.said_by_student``); docs/class-feedback.md.
"""

from __future__ import annotations

import re

#: How much of a hidden test's message a student sees (``--feedback``): ``full`` (inputs,
#: expected values, seed; the default), ``mistake`` (``redact``), ``score`` (points only). Here,
#: in a module that imports nothing heavy, so that the command line offers it without loading
#: the reports.
DETAIL = ("full", "mistake", "score")
#: A number as checks print them (``-7.54026``, ``3``, ``1e-05``, ``[4.0, 8.0]``'s items).
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_SEED_TAG = re.compile(r"\s*\[grading seed -?\d+\]")
QUOTES_WITHHELD = ("This hidden test failed; its message quotes much of what your code printed or "
                   "raised, which this course's feedback does not show.")
#: For documents that do not list the student's texts: an exception's message, a quoted string.
_RAISED = re.compile(r"(raised [\w.]+): [^\n]*")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def redact(text: str, student_text: list[str] | None = None, cut: bool = False) -> str:
    """``text`` with every number replaced by ``…``, the seed tag dropped, and every text of
    the student's choosing it quotes (``student_text``: what their code raised or returned,
    which may spell hidden inputs out in words) taken out: the named mistake stays ("p.grad
    was not cleared"), the hidden inputs and expected values go. ``student_text`` None (a
    document that does not list them) takes out what follows ``raised <Type>`` and every
    quoted string; ``cut`` (more than the document lists) leaves a sentence of ours only."""
    if cut:
        return QUOTES_WITHHELD
    if student_text is None:
        text = _QUOTED.sub("…", _RAISED.sub(r"\1", text))
    for quote in sorted(student_text or [], key=len, reverse=True):
        text = text.replace(quote, "…")
        text = _cut_tail(text, quote)
    return _NUMBER.sub("…", _SEED_TAG.sub("", text))


def _cut_tail(text: str, quote: str) -> str:
    """``text`` without a tail that is the start of ``quote`` (a message cut to its size
    budget in the middle of a quote; a tail of ours that happens to match goes too)."""
    for size in range(min(len(quote), len(text)), 0, -1):
        if text.endswith(quote[:size]):
            return text[:-size] + "…"
    return text
