"""Calling student code without letting it raise, and describing what came back."""

from __future__ import annotations

import builtins
import contextlib
import math
import os
import sysconfig
import traceback
from contextvars import ContextVar
from typing import Any, Iterator

import numpy as np
import torch

from ..worker.arrangements import arranged
from ..worker.wire import Opaque
from . import context
from .result import Evidence, Verdict

_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        os.path.dirname(os.path.dirname(__file__)),  # the autograder package
        os.path.dirname(torch.__file__),
        os.path.dirname(np.__file__),
    }
)


def _is_student_frame(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


class RemoteError(Exception):
    """The student's code raised inside the sealed judge's worker; carries what it reported."""

    def __init__(self, type_name: str, message: str, traceback_text: str):
        super().__init__(message)
        self.type_name, self.traceback_text = type_name, traceback_text


class WorkerLost(Exception):
    """The student's process died or was killed (exit, crash, timeout, memory) during a call."""


def student_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` trimmed to frames from the student's own code.

    Library frames (torch, numpy, the standard library, this package) are dropped: the
    student can act only on their own lines, and the grader's frames would show test code.
    """
    if isinstance(exc, RemoteError):
        return exc.traceback_text
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _is_student_frame(f.filename)]
    lines = ["Traceback (your code only):"]
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    lines += [line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)


#: The texts the student's code chose that went into messages during a ``student_texts``
#: block (an exception's message, a string or a class name it returned).
_STUDENT_TEXT: ContextVar[list[str] | None] = ContextVar("student_text", default=None)


@contextlib.contextmanager
def student_texts() -> Iterator[list[str]]:
    """Collect, for the block, every text of the student's choosing that a message quotes
    (``quoted``), so that feedback that must not show what the student's code derived from
    hidden inputs can take exactly those texts out (``reporting.feedback``)."""
    texts: list[str] = []
    token = _STUDENT_TEXT.set(texts)
    try:
        yield texts
    finally:
        _STUDENT_TEXT.reset(token)


def quoted(text: str) -> str:
    """``text``, which the student's code chose, noted for the ``student_texts`` in force."""
    texts = _STUDENT_TEXT.get()
    if texts is not None and text:
        texts.append(text)
    return text


def exception_summary(exc: BaseException) -> str:
    """``"RuntimeError: message"`` with the message cut to its first line. The message, and
    the type's name unless it is one of Python's own, are the student's (``quoted``)."""
    text = str(exc).strip().splitlines()
    kind = exc.type_name if isinstance(exc, RemoteError) else type(exc).__name__
    if not isinstance(getattr(builtins, kind, None), type):
        quoted(kind)
    return f"{kind}: {quoted(text[0])}" if text else kind


def call(fn: Any, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Verdict | None]:
    """Call the student's ``fn``; return ``(value, None)`` or ``(None, failing verdict)``.

    Args:
        fn: what the student defined under ``name``.
        name: the contract name, used in the message (``"square_grads"``).
        *args: positional arguments for ``fn``.
        **kwargs: keyword arguments for ``fn``.
    """
    inputs = {"args": [plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()}}
    if not callable(fn):
        return None, Verdict(
            False,
            f"{name} is not a function (it is {describe(fn)}): define it with `def {name}(...)` "
            "and run its cell.",
            misconception="not-defined",
            evidence=Evidence(inputs=inputs),
        )
    try:
        with _arranged_here(fn):
            return fn(*args, **kwargs), None
    except WorkerLost as exc:
        return None, Verdict(False, f"{call_text(name, args, kwargs)} did not return: {exc}",
                             misconception="worker-lost", evidence=Evidence(inputs=inputs))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - student code: any failure is a result
        return None, Verdict(
            False,
            f"{call_text(name, args, kwargs)} raised {exception_summary(exc)}",
            misconception="raised",
            evidence=Evidence(inputs=inputs),
            traceback=student_traceback(exc),
        )


def _arranged_here(fn: Any) -> Any:
    """Apply the checks' call-context request in this process, unless ``fn`` is remote (a
    remote function sends the request to the worker with the call)."""
    request = context.current()
    if not request or getattr(fn, "is_remote", False):
        return contextlib.nullcontext({})
    return arranged(fn, request)


def call_observed(fn: Any, name: str, *args: Any,
                  **kwargs: Any) -> tuple[Any, dict, Verdict | None]:
    """``call``, plus what the call context observed (``saved_tensors``: tensors autograd
    saved during the call; ``dtypes``: the dtypes the swapped-in stand-ins were run in).

    Observations are measured where the student's code runs, so a cell can forge them: use
    them for advice and for naming a mistake, never to decide points (docs/security.md)."""
    if getattr(fn, "is_remote", False):
        value, failure = call(fn, name, *args, **kwargs)
        return value, dict(fn.last_observed), failure
    request, observed = context.current(), {}

    def observing(*a: Any, **k: Any) -> Any:
        with arranged(fn, request) as seen:
            try:
                return fn(*a, **k)
            finally:
                observed.update(seen)

    with context.cleared():  # ``observing`` applies the request; ``call`` must not again
        value, failure = call(observing, name, *args, **kwargs)
    return value, observed, failure


def call_backward(fn: Any, name: str, args: tuple, upstream: Any) -> tuple[Any, Verdict | None]:
    """Call ``fn(*args)`` and then ``.backward(upstream)`` on its result, as one step: the
    gradients land in the tensor arguments' ``.grad`` (mirrored back from a remote worker)."""
    if getattr(fn, "is_remote", False):
        return call(fn.with_backward(upstream), name, *args)

    def forward_backward(*a: Any) -> Any:
        out = fn(*a)
        out.backward(upstream)
        return out

    return call(forward_backward, name, *args)


def call_backward_each(fn: Any, name: str, args: tuple, upstream: Any
                       ) -> tuple[Any, Verdict | None]:
    """``fn`` on each of ``args`` (one graph each, all alive together), then each result's
    ``.backward(upstream)`` in order, as one step: each argument's gradient lands in its
    ``.grad``, so that a backward reading state its own graph did not keep is seen."""
    if getattr(fn, "is_remote", False):
        return call(fn.with_backward(upstream, per_argument=True), name, *args)

    def each(*a: Any) -> Any:
        outs = [fn(t) for t in a]
        for out in outs:
            out.backward(upstream)
        return outs

    return call(each, name, *args)


def call_text(name: str, args: tuple, kwargs: dict) -> str:
    """``"square_grads(2.0, 3, clear=True)"`` for messages."""
    parts = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


#: Significant digits of the values a message shows: 6 for what the student's code returned;
#: 3 for what the grader expected, and 2 for the largest error between them, so that what a
#: message shows is not itself an answer: a value rounded to 3 digits lands within a relative
#: tolerance of 1e-5 by chance 0.2 to 2 times in 100 (1e-4: 2 to 20), a whole list or tensor
#: of them practically never (docs/security.md).
DIGITS, EXPECTED_DIGITS, ERROR_DIGITS = 6, 3, 2


def fmt(x: float, digits: int = DIGITS) -> str:
    """A float, short but exact enough to compare by eye (``digits`` significant digits)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return f"{x:.1f}"
    # "#": rounded values keep their trailing zeros (-55.9776 to 3 digits is -56.0, not -56)
    return f"{x:#.{digits}g}".replace(".e", "e").rstrip(".") if digits < DIGITS else f"{x:.{digits}g}"


def expected_text(x: Any, limit: int = 6) -> str:
    """``describe`` for a value the grader expected: floats to ``EXPECTED_DIGITS``."""
    return describe(x, limit, EXPECTED_DIGITS)


def error_text(err: float) -> str:
    """The largest error between an answer and the expected value, to ``ERROR_DIGITS``."""
    return fmt(float(err), ERROR_DIGITS)


def describe(x: Any, limit: int = 6, digits: int = DIGITS) -> str:
    """A short, student-readable rendering of a value (tensors show dtype and shape; floats
    ``digits`` significant digits)."""
    if isinstance(x, torch.Tensor):
        body = (describe(x.detach().cpu().reshape(-1).tolist(), limit, digits) if x.numel()
                else "[]")
        return f"tensor(dtype={str(x.dtype).replace('torch.', '')}, shape={tuple(x.shape)}, {body})"
    if isinstance(x, np.ndarray):
        return (f"ndarray(dtype={x.dtype}, shape={x.shape}, "
                f"{describe(x.reshape(-1).tolist(), limit, digits)})")
    if isinstance(x, str):
        return quoted(repr(x))
    if isinstance(x, (list, tuple)):
        items = [describe(v, limit, digits) for v in x[:limit]]
        if len(x) > limit:
            items.append(f"... ({len(x)} items)")
        if isinstance(x, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(x, float) and type(x) is float:
        return fmt(x, digits)
    if x is Ellipsis:
        return "... (the template's placeholder)"
    if x is None or isinstance(x, (bool, int)):
        return repr(x)
    if isinstance(x, Opaque):
        return f"a {quoted(x.type_name.rsplit('.', 1)[-1])}"
    return f"a {quoted(type(x).__name__)}"


def plain(x: Any) -> Any:
    """JSON-able plain data for evidence; never the student's object itself."""
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                "values": t.tolist()}
    if isinstance(x, np.ndarray):
        return {"dtype": str(x.dtype), "shape": list(x.shape), "values": x.tolist()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return describe(x)


def is_float(x: Any) -> bool:
    """A Python float (numpy's float64 is one); not a tensor, not a bool or an int."""
    return isinstance(x, float)


def max_abs_error(got: list[float], expected: list[float]) -> float:
    """Largest absolute difference between two equal-length float lists."""
    return max((abs(g - e) for g, e in zip(got, expected)), default=0.0)


def close_lists(got: list[float], expected: list[float], rtol: float, atol: float) -> bool:
    """Elementwise ``|g - e| <= atol + rtol * |e|`` (NaN never matches)."""
    return len(got) == len(expected) and all(
        abs(g - e) <= atol + rtol * abs(e) for g, e in zip(got, expected)
    )


def tolerance_text(rtol: float, atol: float) -> str:
    return f"rtol={rtol:g}, atol={atol:g}"
