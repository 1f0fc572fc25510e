"""What a check asks to have arranged around its next calls of student code, by name.

Checks say ``with call_context(simulate_devices={"cuda": True, "mps": False}): ...``. When the
student's code is in this process (otter's hidden tests), ``calling.call`` applies the request
itself; when it is a remote function in the sealed judge's worker, the request travels with the
call and the worker applies it. The arrangements are defined once, in
``autograder.worker.arrangements``, for both.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Iterator

from ..worker.stand_in import STAND_IN_BACKWARD

#: Keys a check's request holds for the judge alone, never sent to the student's process.
JUDGE_ONLY = frozenset({STAND_IN_BACKWARD})
_REQUEST: ContextVar[dict[str, Any]] = ContextVar("call_context", default={})


@contextlib.contextmanager
def call_context(**request: Any) -> Iterator[None]:
    """Add ``request`` (``simulate_devices``, ``swap_globals``, ``call_again``...) to
    every call of student code inside the block."""
    token = _REQUEST.set({**_REQUEST.get(), **request})
    try:
        yield
    finally:
        _REQUEST.reset(token)


def current() -> dict[str, Any]:
    """The request in force (empty outside any ``call_context``)."""
    return dict(_REQUEST.get())


def for_worker(request: dict[str, Any]) -> dict[str, Any]:
    """What of ``request`` travels to a worker: all but the judge's own keys (which backward
    the stand-in op has: the worker asks for it, never reads it; docs/security.md)."""
    return {k: v for k, v in request.items() if k not in JUDGE_ONLY}


@contextlib.contextmanager
def cleared() -> Iterator[None]:
    """No request in force inside the block."""
    token = _REQUEST.set({})
    try:
        yield
    finally:
        _REQUEST.reset(token)
