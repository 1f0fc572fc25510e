"""What a check's message and evidence show of a value: a short text (``describe``, ``fmt``,
to a number of digits that keeps what is shown from being an answer) or plain JSON-able data
(``plain``), never the student's object itself; and the texts of the student's choosing that a
message quotes (``quoted``, collected by ``student_texts``)."""

from __future__ import annotations

import contextlib
import math
from contextvars import ContextVar
from typing import Any, Iterator

import numpy as np
import torch

from ..worker.wire import Opaque

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
        return str(x) if x.bit_length() <= 1024 else big_int_text(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return f"{x:.1f}"
    # "#": rounded values keep their trailing zeros (-55.9776 to 3 digits is -56.0, not -56)
    return f"{x:#.{digits}g}".replace(".e", "e").rstrip(".") if digits < DIGITS else f"{x:.{digits}g}"


def big_int_text(x: int) -> str:
    """An int too large for a float, by its size: its digits could be too many to print."""
    return f"an int of about {int(x.bit_length() * math.log10(2)) + 1} digits"


def without_values(t: torch.Tensor) -> str | None:
    """Why a tensor's values cannot be read (a ``meta`` tensor holds none; a sparse, nested
    or quantized one is no plain array of numbers), or ``None`` when they can."""
    if t.device.type == "meta":
        return "on the 'meta' device, which holds no values"
    if t.layout != torch.strided or t.is_nested or t.is_quantized:
        return f"not a dense tensor (layout {str(t.layout).replace('torch.', '')})"
    return None


def _valueless(t: torch.Tensor) -> dict:
    """What can be shown of a tensor without values: dtype, shape, and its device (meta) or
    layout (``describe`` and ``plain`` both show these)."""
    where = {"device": "meta"} if t.device.type == "meta" else \
        {"layout": str(t.layout).replace("torch.", "")}
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), **where}


def expected_text(x: Any, limit: int = 6) -> str:
    """``describe`` for a value the grader expected: floats to ``EXPECTED_DIGITS``."""
    return describe(x, limit, EXPECTED_DIGITS)


def error_text(err: float) -> str:
    """The largest error between an answer and the expected value, to ``ERROR_DIGITS``."""
    return fmt(float(err), ERROR_DIGITS)


def describe(x: Any, limit: int = 6, digits: int = DIGITS) -> str:
    """A short, student-readable rendering of a value (tensors show dtype and shape; floats
    ``digits`` significant digits)."""
    if isinstance(x, torch.Tensor) and without_values(x):
        fields = _valueless(x)
        return (f"tensor(dtype={fields['dtype']}, shape={tuple(fields['shape'])}, "
                + ", ".join(f"{k}={v}" for k, v in fields.items() if k not in ("dtype", "shape"))
                + ")")
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
    if isinstance(x, int) and not isinstance(x, bool):
        return fmt(x)
    if x is None or isinstance(x, bool):
        return repr(x)
    if type(x) is torch.device:  # torch's own: its type and index are what a message needs
        return f"device('{x}')"
    name = x.type_name.rsplit(".", 1)[-1] if isinstance(x, Opaque) else type(x).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {quoted(name)}"


def plain(x: Any) -> Any:
    """JSON-able plain data for evidence; never the student's object itself."""
    if isinstance(x, torch.Tensor) and without_values(x):
        return _valueless(x)
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                "values": _json_values(t.tolist(), t.is_complex())}
    if isinstance(x, np.ndarray):
        return {"dtype": str(x.dtype), "shape": list(x.shape),
                "values": _json_values(x.tolist(), np.iscomplexobj(x))}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int) and x.bit_length() > 1024:
        return describe(x)  # JSON's own readers would take it, but no float can
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return describe(x)


def _json_values(values: Any, complex_: bool) -> Any:
    """``tolist()``'s values as JSON holds them: a complex number as its text ("(1+2j)")."""
    if not complex_:
        return values
    if isinstance(values, list):
        return [_json_values(v, True) for v in values]
    return str(values) if isinstance(values, complex) else values


def tolerance_text(rtol: float, atol: float) -> str:
    return f"rtol={rtol:g}, atol={atol:g}"


def sentence(text: str) -> str:
    """``text`` ending in one full stop (exception messages often bring their own)."""
    return text if text.endswith((".", "!", "?")) else text + "."
