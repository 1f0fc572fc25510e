"""Calling student code without letting it raise, and describing what came back."""

from __future__ import annotations

import math
import os
import sysconfig
import traceback
from typing import Any, Callable

import numpy as np
import torch

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


def student_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` trimmed to frames from the student's own code.

    Library frames (torch, numpy, the standard library, this package) are dropped: the
    student can act only on their own lines, and the grader's frames would show test code.
    """
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _is_student_frame(f.filename)]
    lines = ["Traceback (your code only):"]
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    lines += [line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)


def exception_summary(exc: BaseException) -> str:
    """``"RuntimeError: message"`` with the message cut to its first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


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
        return fn(*args, **kwargs), None
    except (Exception, SystemExit) as exc:  # student code: any failure is a result
        return None, Verdict(
            False,
            f"{call_text(name, args, kwargs)} raised {exception_summary(exc)}",
            misconception="raised",
            evidence=Evidence(inputs=inputs),
            traceback=student_traceback(exc),
        )


def call_text(name: str, args: tuple, kwargs: dict) -> str:
    """``"square_grads(2.0, 3, clear=True)"`` for messages."""
    parts = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def fmt(x: float) -> str:
    """A float, short but exact enough to compare by eye."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return f"{x:.1f}"
    return f"{x:.6g}"


def describe(x: Any, limit: int = 6) -> str:
    """A short, student-readable rendering of a value (tensors show dtype and shape)."""
    if isinstance(x, torch.Tensor):
        body = describe(x.detach().cpu().reshape(-1).tolist(), limit) if x.numel() else "[]"
        return f"tensor(dtype={str(x.dtype).replace('torch.', '')}, shape={tuple(x.shape)}, {body})"
    if isinstance(x, np.ndarray):
        return f"ndarray(dtype={x.dtype}, shape={x.shape}, {describe(x.reshape(-1).tolist(), limit)})"
    if isinstance(x, (list, tuple)):
        items = [describe(v, limit) for v in x[:limit]]
        if len(x) > limit:
            items.append(f"... ({len(x)} items)")
        if isinstance(x, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(x, float) and type(x) is float:
        return fmt(x)
    if x is Ellipsis:
        return "... (the template's placeholder)"
    if x is None or isinstance(x, (bool, int, str)):
        return repr(x)
    return f"a {type(x).__name__}"


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
