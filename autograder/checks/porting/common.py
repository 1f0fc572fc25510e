"""Helpers the ``autograd-porting`` checks share: tensor judging in the fixed order
type → shape → dtype → values, and naming the exceptions students commonly hit.

These could move to ``checks/calling.py`` once the shared core wants them; they live here so
that this assignment does not edit files another engineer owns.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import torch

from ..calling import call
from ..closeness import within
from ..describing import describe, error_text, expected_text, plain, sentence, tolerance_text
from ..result import Evidence, Verdict

#: Exception text -> (misconception id, what to do). Checked in order on the message.
RaiseHints = Iterable[tuple[str, str, str]]


def call_named(fn: Any, name: str, hints: RaiseHints, *args: Any,
               **kwargs: Any) -> tuple[Any, Verdict | None]:
    """``calling.call``, and when the student's code raised a known error, name the mistake.

    Args:
        fn: the student's callable.
        name: its contract name, for messages.
        hints: ``(text in the exception message, misconception id, advice)`` triples.
        *args: positional arguments.
        **kwargs: keyword arguments.
    """
    value, failure = call(fn, name, *args, **kwargs)
    if failure is None:
        return value, None
    return None, name_foreign_size(name_raised(failure, hints), [*args, *kwargs.values()])


#: What torch says when two shapes do not fit: the sizes it names come after these words.
_SIZE_ERRORS = ("size mismatch", "shapes cannot be multiplied", "must match the size of tensor",
                "does not match the broadcast shape", "shape '[")


def name_foreign_size(failure: Verdict, args: list[Any]) -> Verdict:
    """A "raised" shape error that names a size no argument has (the lesson's n = 5 written
    into the code, or the notebook's own X and y read instead of the arguments) becomes
    ``foreign-size``: the sizes in the message and the arguments' shapes are what the call
    established; nothing else is guessed."""
    if failure.misconception != "raised" or not any(e in failure.message for e in _SIZE_ERRORS):
        return failure
    error = failure.message.split(" raised ", 1)[-1].split("\n", 1)[0]
    own = {n for a in args if isinstance(a, torch.Tensor) for n in a.shape}
    named = {int(n) for dims in re.findall(r"(?<![\w.])(\d+(?:x\d+)*)(?![\w.])", error)
             for n in dims.split("x")}  # "(5)", "(49x4 and 5x1)", "[2, 5]"
    foreign = sorted(n for n in named - own if n > 1)
    if not foreign:
        return failure
    shapes = ", ".join(f"{tuple(a.shape)}" for a in args if isinstance(a, torch.Tensor))
    return Verdict(False, f"{sentence(failure.message)} The error names a size "
                   f"({', '.join(map(str, foreign))}) that none of the arguments has (their "
                   f"shapes: {shapes}): a size or a tensor that is not the arguments' is used, "
                   "such as the lesson's n = 5 written into the code or the notebook's own X "
                   "and y. Take every size from the arguments (n = X.shape[1]) and use the "
                   "tensors you are given.", "foreign-size", failure.evidence, failure.traceback)


def name_raised(failure: Verdict, hints: RaiseHints) -> Verdict:
    """A "raised" failure whose exception text matches a hint, renamed to that mistake."""
    if failure.misconception != "raised":
        return failure
    for needle, misconception, advice in hints:
        if needle in failure.message:
            return Verdict(False, f"{sentence(failure.message)} {advice}", misconception,
                           failure.evidence, failure.traceback)
    return failure


def max_error(got: torch.Tensor, expected: torch.Tensor) -> float:
    """Largest absolute difference, computed in float64 on the CPU."""
    if got.numel() == 0:
        return 0.0
    diff = (got.detach().cpu().double() - expected.detach().cpu().double()).abs()
    return float(diff.max())


def whole_count(m: int, factor: float, rtol: float = 1e-3, most: int | None = None
                ) -> int | None:
    """The whole count ``k`` (1 to ``most``, not ``m``) with ``factor`` = m / k to ``rtol``:
    a sum divided by ``k`` where ``m`` was meant; else ``None``."""
    if factor <= 0:
        return None
    k = round(m / factor)
    if k < 1 or (most is not None and k > most) or k == m or abs(m / factor - k) > rtol * k:
        return None
    return k


def allclose(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> bool:
    """``|g - e| <= atol + rtol * |e|`` elementwise in float64; NaN never matches."""
    return within(got.detach().cpu().double().numpy(), expected.detach().cpu().double().numpy(),
                  rtol, atol)


def judge_tensor(got: Any, expected: torch.Tensor, shown: str, *, dtype: torch.dtype,
                 rtol: float, atol: float, inputs: dict | None = None,
                 shapes: tuple[tuple[int, ...], ...] | None = None) -> Verdict:
    """Compare one returned tensor with the grader's reference, stopping at the first problem.

    Args:
        got: what the student returned.
        expected: the grader's reference (any dtype; compared in float64).
        shown: how to name the value in messages (``"the gradient of w"``).
        dtype: the dtype the contract asks for.
        rtol: relative tolerance.
        atol: absolute tolerance.
        inputs: plain-data inputs for the evidence.
        shapes: accepted shapes; default: only ``expected``'s shape.

    Returns:
        A passing verdict with the largest error, or a failing one saying what is wrong. A
        failing verdict on values has no misconception: callers diagnose it.
    """
    inputs = inputs or {}
    tol = tolerance_text(rtol, atol)
    evidence = Evidence(inputs, plain(expected), plain(got), None, tol)
    if not isinstance(got, torch.Tensor):
        return Verdict(False, f"{shown} is {describe(got)}; expected a torch.Tensor "
                       f"of shape {tuple(expected.shape)}.", "wrong-type", evidence)
    accepted = shapes or (tuple(expected.shape),)
    if tuple(got.shape) not in accepted:
        wanted = " or ".join(str(s) for s in accepted)
        return Verdict(False, f"{shown} has shape {tuple(got.shape)}; expected {wanted}.",
                       "wrong-shape", evidence)
    if got.dtype != dtype:
        return Verdict(False, f"{shown} has dtype {got.dtype}; expected {dtype} (the dtype of "
                       "the inputs): do not convert.", "wrong-dtype", evidence)
    got_flat, exp_flat = got.detach().reshape(-1), expected.detach().reshape(-1)
    err = max_error(got_flat, exp_flat)
    evidence = Evidence(inputs, plain(expected), plain(got), err, tol)
    if allclose(got_flat, exp_flat, rtol, atol):
        return Verdict(True, evidence=evidence)
    return Verdict(False, f"{shown} is {describe(got)}; expected {expected_text(expected)} "
                   f"(largest error {error_text(err)}, {tol}).", None, evidence)


def with_diagnosis(verdict: Verdict, diagnose: Callable[[], tuple[str | None, str]]) -> Verdict:
    """Append the named mistake (or a generic next step) to a failing value verdict."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    name, hint = diagnose()
    return Verdict(False, f"{verdict.message} {hint}".rstrip(), name, verdict.evidence,
                   verdict.traceback)


def first_failure(verdicts: Iterable[Callable[[], Verdict]]) -> Verdict:
    """Run the verdict thunks in order; return the first failing one, else the last pass."""
    last = Verdict(True)
    for make in verdicts:
        last = make()
        if not last.ok:
            return last
    return last
