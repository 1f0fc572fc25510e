"""q3_multipath: a leaf used on two paths collects the sum of both paths' gradients.

For ``w = x*y + x**2`` the reference is exact arithmetic in float64: ``dw/dx = y + 2x`` and
``dw/dy = x``; split over two leaves ``a`` (product) and ``b`` (square) it is ``(y, 2x)``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from ..calling import call
from ..describing import error_text, expected_text, fmt, plain
from ..probes import InputClass, Subject, explain, numbers_of
from ..probes.values import rounded
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import first_match, float_pair_problem, pair_close, renamed
from .multipath_halved import HALVED, confirmed_halved, halved
from .multipath_points import (
    draw_points,
    expected_multipath,
    expected_split,
    subtracted_totals,
    tolerance,
)
from .multipath_precision import LOW_PRECISION, low_precision
from .multipath_precision import confirmed as precision_confirmed
from .multipath_repeated import REPEATED, confirmed, repeated_backward
from .multipath_split import cancellation, not_split
from .multipath_tiny import TINY, confirmed_tiny, tiny_zeroed

QUESTION = "q3_multipath"
#: The lesson's printed answers, used only to recognise a copied constant.
LESSON_MULTIPATH, LESSON_SPLIT = (10.0, 3.0), (4.0, 6.0)
INT_HINT = ("With int arguments torch.tensor(x0) is an integer tensor, and integer tensors "
            "cannot require gradients. Convert first: torch.tensor(float(x0), requires_grad=True).")


NONE_HINT = ("A gradient was None: that leaf took no part in the backward. Every leaf must appear "
             "in the expression you call backward on (in split_path_grads: a in the product, b "
             "in the square).")


def tolerance_text(atol: np.ndarray) -> str:
    return f"atol=({atol[0]:.3g}, {atol[1]:.3g})"


def _judge(got: Any, expected: tuple[float, float], shown: str, what: str,
           patterns: list[tuple[str, Any, str]], inputs: dict, none_name: str,
           split: bool, repeated: bool = True, halving: bool = True,
           precision: bool = True, tiny: bool = True) -> Verdict:
    """Type first, then values; with ``tiny``, a gradient zeroed where it is tiny next to the
    other (``tiny_zeroed``) is named before anything else; a wrong value is matched against
    ``patterns`` (for split_path_grads, first against a subtraction of totals:
    ``cancellation``), then, with
    ``repeated``, against gradients accumulated over more than one backward.

    ``none_name`` names the mistake behind a gradient of ``None`` (a leaf left unused);
    ``halving``: a split's square path at half its gradient is looked for (``halved``);
    ``precision``: a replay through float16 or bfloat16 (``low_precision``).
    """
    x0, y0 = float(inputs["x0"]), float(inputs["y0"])
    atol = tolerance(x0, y0, split)
    tolerance_shown = tolerance_text(atol)
    evidence = Evidence(inputs=inputs, expected=list(expected), got=plain(got),
                        tolerance=tolerance_shown)
    problem = float_pair_problem(got, what)
    if problem:
        if isinstance(got, (tuple, list)) and any(v is None for v in got):
            return Verdict(False, f"{shown} {problem} {NONE_HINT}", none_name, evidence)
        return Verdict(False, f"{shown} {problem}", "wrong-type", evidence)
    got = (float(got[0]), float(got[1]))
    err = max(abs(g - e) for g, e in zip(got, expected))
    evidence = Evidence(inputs, list(expected), list(got), err, tolerance_shown)
    if pair_close(got, expected, 0.0, atol):
        return Verdict(True, evidence=evidence)
    head = (f"{shown} returned ({fmt(got[0])}, {fmt(got[1])}); expected "
            f"{expected_text(tuple(expected))} (largest error {error_text(err)}, "
            f"{tolerance_shown}).")
    zeroed = tiny_zeroed(got, expected, atol, ("a.grad", "b.grad") if split
                         else ("x.grad", "y.grad")) if tiny else None
    # a rounding to a few decimals before the float32 namers: rounded to 6 decimals, a small
    # path's gradient is off by as much as a cancellation leaves (blind round zzx)
    # ... unless a changed value is bit for bit the float32 subtraction of totals: at 8
    # decimals float32's noise allowance dwarfs the step, so rounding "fits" it as well
    subtracted = split and any(g == s != e for g, s, e in
                               zip(got, subtracted_totals(x0, y0), expected))
    rounding = rounded(list(got), list(expected)) if not zeroed and not subtracted else None
    if rounding is not None:
        return Verdict(False, f"{head} {rounding.message}", rounding.id,
                       dataclasses.replace(evidence, probes=[rounding.record()]))
    name, hint = zeroed or (cancellation(got, x0, y0, atol) if split else None) or first_match(
        got, expected, patterns, lambda a, b: pair_close(tuple(a), tuple(b), 0.0, atol))
    derived = not_split(got, x0, y0, atol) if split and not zeroed else None
    if derived is not None:  # the two readings cannot both hold but where their answers meet
        name, hint = derived if name is None else (None, (
            f"It fits two readings, nothing here tells which. One: {hint} Or: {derived[1]}"))
    if name is None and not hint and precision and not zeroed:
        name, hint = low_precision(got, x0, y0, split) or (None, "")
    if name is None and not hint and split and halving:
        name, hint = halved(got, x0, y0, atol) or (None, "")
    if name is None and not hint and repeated:
        name, hint = repeated_backward(got, expected, atol, split) or (None, "")
    # no fallback cause here: an unmatched answer goes to the probes (check_grads)
    return Verdict(False, f"{head} {hint}".rstrip(), name, evidence)


def judge_multipath(got: Any, x0: float, y0: float, repeated: bool = True,
                    precision: bool = True, tiny: bool = True) -> Verdict:
    """Compare ``multipath_grads(x0, y0)`` with ``(2*x0 + y0, x0)``; name the mistake
    (``repeated``: gradients accumulated over backward calls too; ``precision``: a lower
    precision; see ``_judge``)."""
    x, y = float(x0), float(y0)
    return _judge(got, expected_multipath(x, y), f"multipath_grads({fmt(x0)}, {fmt(y0)})",
                  "(x.grad, y.grad)", [
        ("one-path", (y, x), "x.grad holds the product path only: x also feeds x ** 2, whose "
         "gradient 2*x must be added. Build w = x * y + x ** 2 and call backward once."),
        ("one-path", (2 * x, x), "x.grad holds the square path only: x also feeds x * y, whose "
         "gradient y must be added. Build w = x * y + x ** 2 and call backward once."),
        ("one-path", (2 * x, 0.0), "x.grad holds the square path only and y got no gradient: "
         "build w = x * y + x ** 2 and call backward once."),
        ("swapped-order", (x, 2 * x + y), "The two gradients are in the wrong order: return "
         "(x.grad, y.grad), x first."),
        ("lesson-constant", LESSON_MULTIPATH, "These are the lesson's gradients for (3, 4): make "
         "the leaves from the x0 and y0 arguments."),
    ], {"x0": x0, "y0": y0}, "unused-leaf", split=False, repeated=repeated,
                  precision=precision, tiny=tiny)


def judge_split(got: Any, x0: float, y0: float, repeated: bool = True,
                halving: bool = True, precision: bool = True, tiny: bool = True) -> Verdict:
    """Compare ``split_path_grads(x0, y0)`` with ``(y0, 2*x0)``; name the mistake
    (``repeated`` and ``precision`` as in ``judge_multipath``, ``halving`` as in
    ``_judge``)."""
    x, y = float(x0), float(y0)
    total = 2 * x + y
    return _judge(got, expected_split(x, y), f"split_path_grads({fmt(x0)}, {fmt(y0)})",
                  "(a.grad, b.grad)", [
        ("paths-swapped", (2 * x, y), "a.grad and b.grad are swapped: a carries the product "
         "path (a * y) and gets y0, b carries the square (b ** 2) and gets 2*x0."),
        ("one-leaf", (total, total), "Both paths were built on one leaf, so it collected both "
         "contributions: make two separate leaves, a for the product and b for the square."),
        ("one-leaf", (total, 0.0), "Both paths were built on a, so b collected nothing: use a "
         "in the product and b in the square."),
        ("one-leaf", (0.0, total), "Both paths were built on b, so a collected nothing: use a "
         "in the product and b in the square."),
        ("lesson-constant", LESSON_SPLIT, "These are the lesson's gradients for (3, 4): make the "
         "leaves from the x0 and y0 arguments."),
    ], {"x0": x0, "y0": y0}, "one-leaf", split=True, repeated=repeated, halving=halving,
                  precision=precision, tiny=tiny)


def _call(fn: Callable, name: str, x0: Any, y0: Any, none_name: str) -> tuple[Any, Verdict | None]:
    """Call the student; name the two failures whose cause is clear from the outside.

    Ints that raise where floats do not mean a missing conversion; ``None`` in the error means a
    gradient was ``None``, i.e. a leaf took no part in the backward.
    """
    got, failure = call(fn, name, x0, y0)
    if failure is None or failure.misconception != "raised":
        return got, failure
    if isinstance(x0, int) and call(fn, name, float(x0), float(y0))[1] is None:
        return None, renamed(failure, "int-not-converted", INT_HINT)
    if "NoneType" in failure.message:
        return None, renamed(failure, none_name, NONE_HINT)
    return None, failure


def _nearest_integer(v: float) -> float:
    """The integer nearest ``v`` that is not zero (zero would blur the paths)."""
    return math.copysign(max(1.0, float(round(abs(v)))), v)


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(x0, y0)`` a probe can step out of, with the nearest point outside."""
    x0, y0 = args
    if isinstance(x0, int) and isinstance(y0, int):
        return [InputClass("integer-typed", (float(x0), float(y0)),
                           "Does an int argument take a different path (integer arithmetic, an "
                           "integer dtype)?")]
    classes = []
    if any(v != int(v) for v in (x0, y0)):
        classes.append(InputClass("non-integer", (_nearest_integer(x0), _nearest_integer(y0)),
                                  "Is something truncating them (int(), //, round)?",
                                  about_values=True))
    if x0 < 0 or y0 < 0:
        classes.append(InputClass("negative", (abs(x0), abs(y0)),
                                  "Is something dropping the sign (abs, a square, a clamp)?",
                                  about_values=True))
    if max(abs(x0), abs(y0)) > 20:
        classes.append(InputClass("large", (x0 / 100, y0 / 100),
                                  "Is precision running out for large values (float16, a fixed "
                                  "absolute tolerance)?",
                                  about_values=True))
    if max(abs(x0), abs(y0)) < 1:
        classes.append(InputClass("smaller-than-one", (x0 * 10, y0 * 10),
                                  "Is something rounding small values?",
                                  about_values=True))
    return classes


def subject(fn: Callable, name: str, x0: Any, y0: Any, split: bool) -> Subject:
    """What the probes need to explain a wrong ``multipath_grads`` / ``split_path_grads``."""
    reference = expected_split if split else expected_multipath
    atol = tolerance(float(x0), float(y0), split)

    def same(got: Any, expected: Any) -> bool:
        return (float_pair_problem(got, "") is None
                and pair_close(tuple(map(float, got)), tuple(expected), 0.0, atol))

    def other(v: Any) -> list[Any]:
        return [v + 2 if isinstance(v, int) else v + 1.5]

    return Subject(name, fn, (x0, y0), ("x0", "y0"),
                   lambda a, b: reference(float(a), float(b)), same, numbers_of,
                   variations={0: other, 1: other}, classes=input_classes)


def check_grads(fn: Callable, rng: np.random.Generator, *, split: bool,
                points: float = 1.0) -> CheckResult:
    """Call ``multipath_grads`` (or ``split_path_grads``) on fresh points, ints included.

    Args:
        fn: the student's function.
        rng: a generator seeded with the grading seed.
        split: judge ``split_path_grads`` instead of ``multipath_grads``.
        points: what the check is worth.
    """
    seed = seed_of(rng)
    name = "split_path_grads" if split else "multipath_grads"
    judge = judge_split if split else judge_multipath
    verdict = PASS
    for x0, y0 in draw_points(rng):
        got, failure = _call(fn, name, x0, y0, "one-leaf" if split else "unused-leaf")
        verdict = failure or judge(got, x0, y0)
        if verdict.misconception == TINY:  # zeroed where tiny: and right at an ordinary point?
            verdict = confirmed_tiny(verdict, fn, name, x0, y0, judge,
                                     expected_split if split else expected_multipath,
                                     lambda a, b: tolerance(a, b, split))
        if verdict.misconception == LOW_PRECISION:  # replayed here: and at another point?
            verdict = precision_confirmed(verdict, fn, name, x0, y0, split, judge,
                                          expected_split if split else expected_multipath)
        if verdict.misconception == REPEATED:  # one answer's multiples, seen again elsewhere?
            verdict = confirmed(verdict, fn, name, x0, y0, judge,
                                expected_split if split else expected_multipath,
                                lambda a, b: tolerance(a, b, split))
        elif verdict.misconception == HALVED:  # half the square path here; elsewhere too?
            verdict = confirmed_halved(verdict, fn, name, x0, y0, judge, expected_split,
                                       lambda a, b: tolerance(a, b, True))
        if not verdict.ok:
            verdict = explain(verdict, subject(fn, name, x0, y0, split), got)
            break
    return finish(QUESTION, name, verdict, seed=seed, points=points,
                  passed_message=f"{name} matched on fresh points, ints included.")
