"""The probes' shared machinery: the failing call as the probes need it (``Subject``, with the
input classes of its arguments, ``InputClass``), what a probe established (``Diagnosis``), the
per-check call budget (``MAX_CALLS``), fresh copies of the arguments for every probe call
(``fresh``), how two of the student's answers are compared (``numbers_close``,
``Subject.agree``) and read as numbers (``numbers_of``), how arguments and calls are shown
(``shown_args``) and recorded (``recorded_call``), and ``StopProbing``, which ends the probing
when a probe call fails.
"""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..context import call_context
from ..describing import describe, plain
from ..result import Verdict

#: Extra calls of the student's function one failing check may make, all probes together.
MAX_CALLS = 12
#: The torch seed both calls of the nondeterminism probe start from.
PROBE_SEED = 20261130


@dataclass(frozen=True)
class Diagnosis:
    """What one probe established.

    Attributes:
        id: stable identifier (``probe.ignores-argument``), counted by the class report.
        message: student-facing; states only what the probe's calls showed.
        calls: the probe's calls as plain data (``args``, ``expected``, ``got``).
    """

    id: str
    message: str
    calls: list[dict] = field(default_factory=list)

    def record(self) -> dict:
        """Plain data for ``Evidence.probes``."""
        return {"id": self.id, "established": self.message, "calls": self.calls}


@dataclass(frozen=True)
class InputClass:
    """An input class the failing input belongs to, and the nearest input outside it.

    Attributes:
        name: the class (``non-integer``, ``negative``, ``size-1``, ``requires-grad``...).
        args: the failing call's arguments with that one property removed.
        question: what to look at, as a question (the probe cannot know the cause).
        about_values: the question asks about values the answer computed (truncated,
            rounded, a sign dropped): it does not fit an answer that raised, which is told
            only that something takes another path for the class.
        change: what ``args`` changes, in words, where the arguments' short descriptions
            (shapes, dtypes, numbers) would read the same for both calls ("X scaled by
            0.12: the first gradient's norm 0.4, not 3.3").
    """

    name: str
    args: tuple
    question: str
    about_values: bool = False
    change: str = ""


@dataclass
class Subject:
    """One failing call, as the probes need it.

    Attributes:
        name: the contract name (``multipath_grads``).
        fn: the student's function.
        args: the failing call's arguments (the probes call on copies).
        arg_names: a name per positional argument, for messages.
        expected: ``expected(*args)``: the reference for any arguments.
        same: ``same(got, expected)``: whether an answer meets the reference (its tolerance).
        numbers: an answer as a flat list of floats, ``None`` when it is not one of the
            contract's type (then value probes do not apply).
        variations: per argument index, values to try in its place (first useful one used).
        classes: ``classes(args)``: the input classes of ``args``, most specific first.
        kwargs: keyword arguments passed unchanged on every call.
        wrap: a context for every probe call (``call_context(...)`` the check itself uses).
    """

    name: str
    fn: Callable
    args: tuple
    arg_names: tuple[str, ...]
    expected: Callable[..., Any]
    same: Callable[[Any, Any], bool]
    numbers: Callable[[Any], list[float] | None]
    variations: dict[int, Callable[[Any], list[Any]]] = field(default_factory=dict)
    classes: Callable[[tuple], list[InputClass]] = lambda args: []
    kwargs: dict = field(default_factory=dict)
    calls_left: int = MAX_CALLS
    tried: list[str] = field(default_factory=list)

    def run(self, args: tuple, fork: bool = True, **context: Any) -> tuple[Any, Verdict | None]:
        """One probe call on fresh copies of ``args``; ``None, failure`` when out of calls.
        ``fork``: torch's generator is restored after the call (else the caller forks it)."""
        if self.calls_left <= 0:
            return None, Verdict(False, "probe budget spent", "probe-budget")
        self.calls_left -= 1
        with (torch.random.fork_rng(devices=[]) if fork else contextlib.nullcontext()), \
                call_context(**context):
            return call(self.fn, self.name, *fresh(args), **self.kwargs)

    def value(self, args: tuple, fork: bool = True, **context: Any) -> Any:
        """``run``'s answer; ``StopProbing`` when the call failed, was lost or was not made."""
        got, failure = self.run(args, fork, **context)
        if failure is not None:
            raise StopProbing(failure.message)
        return got

    def agree(self, a: Any, b: Any) -> bool:
        """Two of the student's answers agree: the same numbers (``numbers_close``), or the
        same description."""
        na, nb = self.numbers(a), self.numbers(b)
        if na is None or nb is None:
            return na is None and nb is None and describe(a) == describe(b)
        return numbers_close(na, nb)


class StopProbing(Exception):
    """A probe call failed or was lost: stop probing (say nothing about it)."""


def _copy(x: Any) -> Any:
    if isinstance(x, torch.Tensor):  # deepcopy refuses non-leaf tensors; keep class and strides
        copied = x.detach().clone()
        if x.requires_grad:
            copied.requires_grad_()
            if x.is_leaf and x.grad is not None:
                copied.grad = x.grad.detach().clone()
        return copied
    return copy.deepcopy(x)


def fresh(args: tuple) -> tuple:
    """Copies of the arguments (tensors keep strides, ``requires_grad`` and ``.grad``): a probe
    never hands the student the check's own objects."""
    return tuple(_copy(a) for a in args)


def _show(x: Any) -> str:
    """A tensor by its class (shape, dtype, flags; the values are in the evidence), anything
    else as ``describe`` renders it."""
    if not isinstance(x, torch.Tensor):
        return describe(x)
    flags = [f for f, on in (("requires_grad", x.requires_grad),
                             ("with a .grad", x.is_leaf and x.grad is not None),
                             ("non-contiguous", not x.is_contiguous())) if on]
    dtype = str(x.dtype).replace("torch.", "")
    return f"tensor {tuple(x.shape)} {dtype}" + (f" [{', '.join(flags)}]" if flags else "")


def shown_args(subject: Subject, args: tuple) -> str:
    return ", ".join(f"{n}={_show(a)}" for n, a in zip(subject.arg_names, args))


def recorded_call(probe: str, args: tuple, expected: Any, got: Any) -> dict:
    """One probe call as plain data, for ``Diagnosis.calls``."""
    return {"probe": probe, "args": [plain(a) for a in args], "expected": plain(expected),
            "got": plain(got)}


def numbers_close(a: list[float] | None, b: list[float] | None) -> bool:
    """Equal lengths and every pair within ``1e-6`` relative (``1e-9`` absolute), or equal
    infinities, or both NaN; an infinity is close to nothing else. A NaN given twice is one
    answer given twice: two calls that both give NaN must not read as an answer that changes
    from one call to the next. Symmetric, not ``closeness.within``: it asks whether two of the
    student's answers agree, with no reference side to scale by."""
    return a is not None and b is not None and len(a) == len(b) and all(
        x == y or (math.isnan(x) and math.isnan(y))
        or (math.isfinite(x) and math.isfinite(y)
            and abs(x - y) <= 1e-9 + 1e-6 * max(abs(x), abs(y))) for x, y in zip(a, b))


def numbers_of(x: Any) -> list[float] | None:
    """A flat list of floats from a float, a tuple/list of floats, a tensor or an array."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):
        return [float(x)]
    if isinstance(x, torch.Tensor):
        if x.device.type == "meta" or x.dtype.is_complex:
            return None
        return [float(v) for v in x.detach().cpu().double().reshape(-1).tolist()]
    if isinstance(x, np.ndarray) and x.dtype.kind in "fiu":
        return [float(v) for v in x.astype(np.float64).reshape(-1).tolist()]
    if isinstance(x, (list, tuple)):
        out: list[float] = []
        for v in x:
            n = numbers_of(v)
            if n is None:
                return None
            out += n
        return out
    return None
