"""The checks every decoder shares, one field of a value at a time: a number (``number``), an
integer (``integer``), a dtype's name (``torch_dtype``, ``numpy_dtype``), a shape or strides
(``dimensions``), and ``guarded``, which turns whatever torch or numpy raise on a malformed
value into ``WireError``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from .limits import DTYPES, MAX_DIMS, NP_DTYPES, WireError


def number(v: Any) -> float:
    """A float from a JSON number, or from ``"nan"``, ``"inf"``, ``"-inf"`` (never a bool)."""
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise WireError(f"not a number: {v!r:.40}")
    return float(v)


def integer(v: Any, what: str) -> int:
    """A JSON integer (never a bool); ``what`` names the field in the error."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise WireError(f"{what} must be an integer, got {v!r:.40}")
    return v


def guarded(build):
    """``build``'s errors as ``WireError``: whatever torch or numpy raise on a malformed value
    (a RuntimeError for a stride that overflows, an OverflowError for a number out of a dtype's
    range, a MemoryError) is the sender's malformed value, never the judge's crash."""
    @functools.wraps(build)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except WireError:
            raise
        except MemoryError:
            raise WireError("the grader ran out of memory reading it") from None
        except Exception as exc:  # noqa: BLE001 - see the docstring
            raise WireError(f"malformed value ({type(exc).__name__}: {str(exc)[:200]})") from None
    return checked


def torch_dtype(name: Any) -> torch.dtype:
    """The torch dtype of a name the wire knows (``limits.DTYPES``)."""
    if not isinstance(name, str) or name not in DTYPES:
        raise WireError(f"unknown dtype {str(name)[:40]!r}" if isinstance(name, str)
                        else "dtype name expected")
    return DTYPES[name]


def numpy_dtype(name: Any) -> str:
    """A numpy dtype's name the wire knows (``limits.NP_DTYPES``), checked; or one of those
    in an explicit byte order (``'>f4'``, which ``str`` of a big-endian float32 array's dtype
    gives), so that such an answer reaches the checks as it is, to be judged and told."""
    if isinstance(name, str) and name in NP_DTYPES:
        return name
    if isinstance(name, str) and len(name) <= 4 and name[:1] in "<>" and name[1:2] in "biuf" \
            and name[2:].isdigit() and str(np.dtype("=" + name[1:])) in NP_DTYPES:
        return name
    raise WireError(f"unknown numpy dtype {str(name)[:40]!r}" if isinstance(name, str)
                    else "numpy dtype name expected")


def dimensions(values: Any, what: str) -> list[int]:
    """A shape or strides: at most ``MAX_DIMS`` integers, none negative."""
    if type(values) is list and len(values) <= MAX_DIMS \
            and all(type(v) is int and v >= 0 for v in values):
        return values  # what every well-formed value sends: checked in one pass
    if not isinstance(values, list) or len(values) > MAX_DIMS:
        raise WireError(f"{what} must be a list of at most {MAX_DIMS} integers")
    dims = [integer(v, what) for v in values]
    if any(v < 0 for v in dims):
        raise WireError(f"{what} must not be negative")
    return dims
