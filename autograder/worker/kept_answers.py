"""Answers handed out again: whether an answer's memory is memory an earlier answer of the same
function already holds (arrangement ``observe_reuse``).

``call_again`` shows an answer that the very next call overwrites (one buffer kept between
calls). A pool of buffers handed out in turn (a ring of two, of ten) survives one more call,
and the values of every answer are right when they are read (red team rt-4: a ring of two
kept q4's and q5's points). Whatever the pool's size, its buffers come round again, and then
an answer shares memory with an answer handed out before it. So every answer of the function
asked about is kept here, alive (so that its memory is never freed and handed to a later,
fresh answer by the allocator: that would look like sharing), and each new one is compared,
by the byte range of the memory it lives in, with those kept before it.

What the worker says here is heard, not measured (docs/security.md): a cell can forge it. A
forged "no" gains what one honest ``.copy()`` gives; a forged "yes" only costs its own points.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np
import torch

#: The answers of one function kept for comparison: far more calls than any check makes. Past
#: it answers are compared, not kept (a kept one freed could be handed out again, fresh)
CAP = 512
#: Where ``hand_over`` leaves the answer for the arrangement (never sent: the arrangement
#: takes it back as the call's arrangements end)
ANSWER = "_kept_answer"
_WANTED = "_kept_wanted"

#: id(function) -> the function (kept, so that its id is never another's), the
#: [(first byte, end byte), ...] of its answers so far, and those answers
_KEPT: dict[int, tuple[Any, list[tuple[int, int]], list[Any]]] = {}


def hand_over(observed: dict, value: Any) -> None:
    """Give the call's answer to ``observe_reuse`` (when the call asked for it)."""
    if wanted(observed):
        observed[ANSWER] = value


def wanted(observed: dict) -> bool:
    """Whether the call being arranged asked for ``observe_reuse``."""
    return bool(observed.get(_WANTED))


def _owner(a: np.ndarray) -> np.ndarray:
    """The array whose memory ``a`` views (itself when it owns its memory)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def span(value: Any) -> tuple[int, int] | None:
    """The byte range of the memory ``value`` (an array or a CPU tensor) lives in: its whole
    storage or owning array, so that slices handed out from one large buffer meet too."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.numel() == 0:
            return None
        storage = value.untyped_storage()
        start = storage.data_ptr()
        return (start, start + storage.nbytes()) if storage.nbytes() else None
    if isinstance(value, np.ndarray) and value.size:
        low, high = np.lib.array_utils.byte_bounds(_owner(value))
        return (low, high) if high > low else None
    return None


def _parts(value: Any) -> list[Any]:
    """The arrays and tensors of an answer: itself, or the items of a list or tuple."""
    items = list(value) if isinstance(value, (list, tuple)) and len(value) <= 64 else [value]
    return [v for v in items if isinstance(v, (np.ndarray, torch.Tensor))]


def shared_with_earlier(fn: Any, value: Any, args: tuple = ()) -> int | None:
    """How many answers of ``fn`` back the earliest one is whose memory ``value`` shares (1:
    the answer before it), or None; ``value`` is kept for the answers after it. Memory of one
    of the call's own arguments is not counted: an answer that views its input is the
    checks' to tell."""
    _, spans, kept = _KEPT.setdefault(id(fn), (fn, [], []))
    own = [s for a in args if (s := span(a)) is not None]
    found = None
    for part in _parts(value):
        here = span(part)
        if here is None or any(here[0] < high and low < here[1] for low, high in own):
            continue
        for back, (low, high) in enumerate(reversed(spans), start=1):
            if here[0] < high and low < here[1]:
                found = back if found is None else max(found, back)
        if len(spans) < CAP:
            spans.append(here)
            kept.append(part)
    return found


@contextlib.contextmanager
def observed_reuse(observed: dict, fn: Any, args: tuple) -> Iterator[None]:
    """Around a call of ``fn``: ``observed["answer_reused"]``, how many of its answers back
    the one is whose memory the call's answer shares, when it shares any."""
    observed[_WANTED] = True
    try:
        yield
    finally:
        observed.pop(_WANTED, None)
        has_answer = ANSWER in observed
        value = observed.pop(ANSWER, None)
        if has_answer:
            back = shared_with_earlier(fn, value, tuple(args))
            if back is not None:
                observed["answer_reused"] = back
