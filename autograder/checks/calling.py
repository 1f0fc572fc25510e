"""Calling student code without letting it raise: a value or a failing verdict naming the
call, with the student's own lines of the traceback. What messages show of values is
``describing``."""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import os
import sysconfig
import threading
import traceback
from typing import Any, Callable, TypeVar

import numpy as np
import torch

from ..worker import wire
from ..worker.arrangements import arranged
from ..worker.kept_answers import hand_over
from . import context, modes
from .describing import big_int_text, describe, plain, quoted, sentence, without_values
from .raised_hints import hint_for
from .result import Evidence, Verdict

#: Whether the calls in force may answer with tensors on the ``meta`` device (``predict``
#: asked to run on ``meta``: there an answer holds no values, by the contract).
_META_ANSWERS: contextvars.ContextVar[bool] = contextvars.ContextVar("meta_answers",
                                                                      default=False)

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


class UnreadableAnswer(RemoteError):
    """The student's function returned, but what it returned cannot be read by the grader
    (the wire refused it: a dtype it does not carry, a value past its budgets, a reply that
    is no value). Not an exception of the student's code: ``str()`` is the reason."""

    def __init__(self, reason: str):
        super().__init__("UnreadableAnswer", reason, "")


def unreadable_text(exc: UnreadableAnswer) -> str:
    """``"returned a value the grader cannot read (unknown dtype 'float8_e4m3fn')"``."""
    return f"returned a value the grader cannot read ({exc})"


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
        with _arranged_here(fn, args) as observed:
            value = fn(*args, **kwargs)
            hand_over(observed, value)
        modes.note(name, observed or getattr(fn, "last_observed", {}))
    except WorkerLost as exc:
        return None, Verdict(False, f"{call_text(name, args, kwargs)} did not return: {exc}",
                             misconception="worker-lost", evidence=Evidence(inputs=inputs))
    except UnreadableAnswer as exc:  # it returned: never "raised"
        return None, Verdict(
            False, f"{call_text(name, args, kwargs)} {unreadable_text(exc)}: return the plain "
            "result (tensors, numpy arrays of numbers, Python numbers, lists and tuples of them).",
            misconception="unreadable-answer", evidence=Evidence(inputs=inputs))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - student code: any failure is a result
        summary = exception_summary(exc)
        hint = hint_for(summary)
        return None, Verdict(
            False,
            f"{call_text(name, args, kwargs)} raised "
            + (f"{sentence(summary)} {hint}" if hint else summary),
            misconception="raised",
            evidence=Evidence(inputs=inputs),
            traceback=student_traceback(exc),
        )
    unreadable = unreadable_part(value)
    if unreadable is None:
        return value, None
    return None, Verdict(
        False,
        f"{call_text(name, args, kwargs)} returned {describe(value)}, which is or holds "
        f"{unreadable}: the grader cannot compare that with the expected answer, so it scores "
        "as a wrong answer. Return the plain result: tensors with their values (on the CPU, or "
        "on the device the function was given) and numbers a float can hold.",
        misconception="unreadable-answer", evidence=Evidence(inputs=inputs, got=plain(value)))


@contextlib.contextmanager
def meta_answers() -> Any:
    """Inside the block, an answer may hold tensors on the ``meta`` device (a call asked to
    run there, whose answer the check judges by shape and dtype alone)."""
    token = _META_ANSWERS.set(True)
    try:
        yield
    finally:
        _META_ANSWERS.reset(token)


def unreadable_part(value: Any, depth: int = 0) -> str | None:
    """What in a student's answer no check can read, as a phrase (``"a tensor on the 'meta'
    device, which holds no values"``, ``"an int of about 401 digits, too large for a
    float"``), or ``None``. Looks into lists, tuples and dicts (keys and values), where the
    checks read answers; strings, objects and the like are each check's to judge."""
    if isinstance(value, torch.Tensor):
        why = without_values(value)
        if why is None or (value.device.type == "meta" and _META_ANSWERS.get()
                           and value.layout == torch.strided):
            return None
        return f"a tensor {why}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1024:
        return f"{big_int_text(value)}, too large for a float"
    if depth < 32 and isinstance(value, (list, tuple, dict)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        return next((why for v in items if (why := unreadable_part(v, depth + 1))), None)
    return None


def call_then_again(fn: Any, name: str, args: tuple, again: tuple
                    ) -> tuple[Any, Verdict | None, int | None]:
    """``call(fn, name, *args)``, with ``fn`` called once more on ``again`` (the grader's other
    inputs, tensors) before the answer is read: call context ``call_again``, the same here and
    in a worker, where the answer is encoded after the second call. An answer that the later
    call changes (an object kept between calls and returned each time) is judged changed.

    The third value: how many answers of ``fn`` back the one is whose memory the answer
    shares (call context ``observe_reuse``: a pool of buffers handed out in turn, which the
    one later call here does not overwrite), or None. Heard from where the student's code
    runs: it decides points only as a ``.copy()`` would (``worker/kept_answers``)."""
    with context.call_context(call_again=[wire.encode(a) for a in again], observe_reuse=name):
        value, observed, failure = call_observed(fn, name, *args)
    back = observed.get("answer_reused")
    shared = isinstance(back, int) and not isinstance(back, bool) and back > 0
    return value, failure, back if shared and failure is None else None


def _arranged_here(fn: Any, args: tuple) -> Any:
    """Apply the checks' call-context request in this process (and fence torch's global
    modes around the call), unless ``fn`` is remote: a remote function sends the request to
    the worker with the call, and the worker fences."""
    if getattr(fn, "is_remote", False):
        return contextlib.nullcontext({})
    return arranged(fn, context.current(), args=args)


def call_observed(fn: Any, name: str, *args: Any,
                  **kwargs: Any) -> tuple[Any, dict, Verdict | None]:
    """``call``, plus what the call context observed (``saved_tensors``: tensors autograd
    saved during the call; ``dtypes``: the dtypes the swapped-in stand-ins were run in;
    ``forward_devices``: where a module argument's forwards took their inputs).

    Observations are measured where the student's code runs, so a cell can forge them: use
    them for advice and for naming a mistake, never to decide points (docs/security.md)."""
    if getattr(fn, "is_remote", False):
        value, failure = call(fn, name, *args, **kwargs)
        return value, dict(fn.last_observed), failure
    request, observed = context.current(), {}

    def observing(*a: Any, **k: Any) -> Any:
        seen: dict = {}
        try:
            with arranged(fn, request, args=a) as seen:
                value = fn(*a, **k)
                hand_over(seen, value)
                return value
        finally:  # after the arrangements' own exits, which observe too
            observed.update(seen)

    with context.cleared():  # ``observing`` applies the request; ``call`` must not again
        value, failure = call(observing, name, *args, **kwargs)
    if failure is None:
        modes.note(name, observed)
    return value, observed, failure


T = TypeVar("T")
U = TypeVar("U")


def alongside(fn: Any, call: Callable[[], T], work: Callable[[], U]) -> tuple[T, U]:
    """``(call(), work())``, where ``call`` calls the student's ``fn`` and ``work`` is the
    grader's own work that needs nothing of that call (its reference). When ``fn`` runs in a
    worker, the judge does ``work`` while the worker runs the student's code (a thread here
    waits for the reply), so that a submission costs the longer of the two, not their sum;
    in this process, one after the other. What either raises is raised here. Not for a call
    that asks the judge questions (the stand-in op's backward): see ``selfcheck``."""
    if not getattr(fn, "is_remote", False):
        return call(), work()
    outcome: dict[str, Any] = {}

    def waiting() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - raised again in the checking thread
            outcome["error"] = exc

    thread = threading.Thread(target=contextvars.copy_context().run, args=(waiting,),
                              name="student-call", daemon=True)
    thread.start()
    try:
        done = work()
    finally:
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"], done


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
