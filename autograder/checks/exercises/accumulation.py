"""q1_accumulation: gradients accumulate across backward calls unless cleared."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..closeness import close_lists, is_float, max_abs_error
from ..describing import describe, error_text, expected_text, fmt, plain, tolerance_text
from ..probes import InputClass, Subject, explain, numbers_close, numbers_of, recorded_call
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from . import accumulation_doubled as doubled
from .accumulation_clipped import CLIPPED, CONTRIBUTIONS, cap_found, steady_increments
from .accumulation_clipped import confirmed as clip_confirmed
from .accumulation_integer import INTEGER, confirmed, integer_hint, integer_ways
from .accumulation_moved import LONG_RUN, MOVED, moved_between_backwards
from .accumulation_precision import LOW_PRECISION, confirm_p0, fitted, low_precision

QUESTION = "q1_accumulation"
RTOL, ATOL = 1e-5, 1e-6


def draw_p0s(rng: np.random.Generator) -> list[float]:
    """Leaf values for one grading run: negative, fractional, large, and one ordinary."""
    return [
        float(-rng.uniform(0.5, 9.5)),
        float(rng.uniform(0.05, 0.95)),
        float(rng.choice([-1, 1]) * rng.uniform(100.0, 5000.0)),
        float(np.round(rng.uniform(1.0, 9.0), 2)),
    ]


def draw_small_p0(rng: np.random.Generator, low: float, high: float) -> float:
    """A leaf value of either sign, its size in [low, high), with every digit a float holds."""
    return float(rng.choice([-1, 1]) * rng.uniform(low, high))


def expected_grads(p0: float, repeats: int, clear: bool) -> list[float]:
    """The reference, in float64: ``2*p0*k`` uncleared, ``2*p0`` each time when cleared."""
    return [2.0 * p0 * (1 if clear else k) for k in range(1, repeats + 1)]


def judge_grads(got: Any, p0: float, repeats: int, clear: bool, moved: bool = True,
                precision: bool = True, integer: bool = True,
                clipped: bool | str = True, multiplied: bool = True) -> Verdict:
    """Compare one return value of ``square_grads`` with the reference; name the mistake
    (``moved``: a p moved between backwards too, fitted to this answer alone; ``precision``:
    a computation in float16 or bfloat16, replayed on this answer; ``integer``: gradients
    made whole numbers, fitted to this answer; ``clipped``: gradients capped at a constant, or
    without clearing each backward's gradient capped, fitted to this answer: ``True`` both,
    or only the one named, ``CLIPPED`` or ``CONTRIBUTIONS``; ``multiplied``: whole multiples)."""
    expected = expected_grads(p0, repeats, clear)
    shown = f"square_grads({fmt(p0)}, {repeats}, clear={clear})"
    inputs = {"p0": p0, "repeats": repeats, "clear": clear}
    evidence = Evidence(inputs=inputs, expected=expected, got=plain(got),
                        tolerance=tolerance_text(RTOL, ATOL))
    if not isinstance(got, (list, tuple)):
        return Verdict(False, f"{shown} returned {describe(got)}; expected a list of {repeats} "
                       "Python floats.", "wrong-type", evidence)
    if any(isinstance(v, torch.Tensor) for v in got):
        return Verdict(
            False,
            f"{shown} returned tensors ({describe(list(got))}), not Python floats: append "
            "p.grad.item() after each backward. Appending p.grad itself also stores the same "
            "buffer again and again, so later backward calls change earlier entries.",
            "tensors-not-floats", evidence)
    if len(got) != repeats:
        return Verdict(False, f"{shown} returned {len(got)} values; expected one per backward, "
                       f"{repeats} in all. Use the repeats argument for the loop count.",
                       "wrong-length", evidence)
    if not all(is_float(v) for v in got):
        return Verdict(False, f"{shown} returned {describe(list(got))}; every entry must be a "
                       "Python float (use .item()).", "wrong-type", evidence)
    got = [float(v) for v in got]
    err = max_abs_error(got, expected)
    evidence = Evidence(inputs, expected, got, err, tolerance_text(RTOL, ATOL))
    if close_lists(got, expected, RTOL, ATOL):
        return Verdict(True, evidence=evidence)
    head = (f"{shown} returned {describe(got)}; expected {expected_text(expected)} "
            f"(largest error {error_text(err)}, {tolerance_text(RTOL, ATOL)}).")
    name, hint = _diagnose(got, p0, repeats, clear, moved, precision, integer, clipped,
                           multiplied)
    return Verdict(False, f"{head} {hint}".rstrip(), name, evidence)


def _diagnose(got: list[float], p0: float, repeats: int, clear: bool, moved: bool = True,
              precision: bool = True, integer: bool = True,
              clipped: bool | str = True, multiplied: bool = True
              ) -> tuple[str | None, str]:
    """Match a wrong answer against the known mistakes; most specific first."""
    def matches(pattern: list[float]) -> bool:
        return close_lists(got, pattern, RTOL, ATOL)

    growing = ", ".join(fmt(v) for v in expected_grads(p0, min(repeats, 3), False))
    if clear and repeats > 1 and matches(expected_grads(p0, repeats, False)):
        return "not-cleared", (f"The gradients grow {growing}: p.grad was not cleared before each "
                               "backward. Set p.grad = None (or p.grad.zero_()) before each "
                               "backward when clear is true.")
    if not clear and repeats > 1 and matches(expected_grads(p0, repeats, True)):
        return "cleared-when-accumulating", (
            "Every gradient is the same: with clear=False the gradient must accumulate, but "
            "p.grad was cleared or the leaf was re-created between backward calls. Make one leaf "
            "before the loop and never reset it.")
    if matches([p0 * p0] * repeats):
        return "returned-value-not-grad", ("These are values of p ** 2, not gradients: return "
                                           "p.grad after backward, not the expression.")
    for lesson_p0 in (2.0,):
        if p0 != lesson_p0 and matches(expected_grads(lesson_p0, repeats, clear)):
            return "ignores-p0", ("These are the lesson's gradients for p0=2.0 (typed in, or "
                                  "kept from an earlier call): build the leaf from the p0 "
                                  "argument on every call.")
    if multiplied and (k := doubled.multiple(got, p0, repeats, clear)) is not None:
        return doubled.NAME, doubled.hint(k, p0)
    hint = low_precision(got, p0, repeats, clear) if precision else None
    if hint is not None:
        return LOW_PRECISION, hint
    ways = integer_ways(got, p0, repeats, clear) if integer else []
    if ways:
        return INTEGER, integer_hint(ways)
    cap = cap_found(got, p0, repeats, clear, RTOL, ATOL, clipped) if clipped else None
    if cap is not None:
        return cap
    hint = moved_between_backwards(got, p0, clear, RTOL, ATOL) if moved else None
    if hint is not None:
        return MOVED, hint
    # no guessed cause: what the values show, and the probes look for one (check_square_grads)
    return None, steady_increments(got, p0, repeats, clear, RTOL, ATOL)


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(p0, repeats)`` a probe can step out of, with the nearest input outside."""
    p0, repeats = args
    classes = []
    if p0 != int(p0):
        classes.append(InputClass("non-integer", (float(np.sign(p0) * max(1, round(abs(p0)))),
                                                  repeats),
                                  "Is something truncating p0 (int(), an integer tensor)?",
                                  about_values=True))
    if p0 < 0:
        classes.append(InputClass("negative", (-p0, repeats),
                                  "Is something dropping the sign (abs(), a square root, or "
                                  ".norm(), which gives a gradient's size, not its value)?",
                                  about_values=True))
    if abs(p0) > 100:
        classes.append(InputClass("large", (p0 / 100, repeats),
                                  "Is precision running out for large values (float16, a fixed "
                                  "tolerance)?",
                                  about_values=True))
    if repeats == 1:
        classes.append(InputClass("single-repeat", (p0, 2),
                                  "Does the loop treat a single backward differently (an "
                                  "off-by-one in range)?"))
    return classes


def subject(square_grads: Callable, p0: float, repeats: int, clear: bool) -> Subject:
    """What the probes need to explain a wrong ``square_grads``."""
    def same(got: Any, expected: list[float]) -> bool:
        return (isinstance(got, (list, tuple)) and all(is_float(v) for v in got)
                and close_lists([float(v) for v in got], expected, RTOL, ATOL))

    return Subject("square_grads", square_grads, (p0, repeats), ("p0", "repeats"),
                   lambda p, r: expected_grads(float(p), int(r), clear), same, numbers_of,
                   variations={0: lambda p: [p + 1.5], 1: lambda r: [r + 2]},
                   classes=input_classes, kwargs={"clear": clear})


#: The repeats of the one longer run each check makes, beyond the others' 1 to 8
LONGEST_RUN = (9, 16)


def check_square_grads(square_grads: Callable, rng: np.random.Generator, *, clear: bool,
                       points: float = 1.0) -> CheckResult:
    """Call ``square_grads`` on fresh leaf values and repeat counts, cleared or not.

    Args:
        square_grads: the student's function.
        rng: a generator seeded with the grading seed.
        clear: which mode to check.
        points: what the check is worth.
    """
    seed = seed_of(rng)
    cases = [(p0, int(rng.integers(1, 9))) for p0 in draw_p0s(rng)]
    cases[0] = (cases[0][0], max(cases[0][1], 3))  # at least one run long enough to see growth
    # drawn last, so that the cases above stay those of earlier runs with the same seed: a
    # single backward (the loop's edge), from a fractional leaf of either sign
    cases.append((float(rng.choice([-1, 1]) * np.round(rng.uniform(0.1, 3.0), 3)), 1))
    # drawn last for the same reason: small leaves of full precision, whose gradients are
    # under 0.5, so that a tolerance of ~1e-6 shows an answer rounded to 4 or 5 decimals
    # (round(g, 4) "to tidy floats" passed on the draws above one seed in five: blind round
    # zzs)
    cases += [(draw_small_p0(rng, 0.0011, 0.0049), int(rng.integers(2, 6))),
              (draw_small_p0(rng, 0.011, 0.049), int(rng.integers(2, 6)))]
    # drawn last for the same reason: a longer run than the others' 1 to 8 (red team rt-4: a
    # fixed buffer of 8 slots passed every call above)
    cases.append((float(rng.choice([-1, 1]) * np.round(rng.uniform(0.1, 3.0), 3)),
                  int(rng.integers(LONGEST_RUN[0], LONGEST_RUN[1] + 1))))
    cases.append(cases[0])  # the first call again: identical calls must give identical answers
    verdict = PASS
    for p0, repeats in cases:
        got, failure = call(square_grads, "square_grads", p0, repeats, clear=clear)
        short = repeats < LONG_RUN  # too few gradients to tell update rules apart
        verdict = failure or judge_grads(got, p0, repeats, clear, moved=not short)
        if verdict.misconception == LOW_PRECISION:
            verdict = precision_confirmed(verdict, square_grads, p0, repeats, clear)
        if verdict.misconception == doubled.NAME:  # the same factor at another p0?
            verdict = doubled.confirmed(verdict, square_grads, p0, repeats, clear, lambda: (
                judge_grads(got, p0, repeats, clear, moved=not short, multiplied=False)))
        if verdict.misconception == INTEGER:  # and at another p0?
            verdict = confirmed(verdict, square_grads, p0, repeats, clear, lambda: judge_grads(
                got, p0, repeats, clear, moved=not short, integer=False))
        if verdict.misconception in (CLIPPED, CONTRIBUTIONS):  # the same cap at other p0?
            # (judged after the two above: a rejudged answer has neither)
            verdict = clip_confirmed(verdict, square_grads, p0, repeats, clear, RTOL, ATOL,
                                     lambda which: judge_grads(got, p0, repeats, clear,
                                                               moved=not short, precision=False,
                                                               integer=False, clipped=which))
        if not verdict.ok:
            if verdict.misconception is None and short:
                verdict = moved_verdict(verdict, square_grads, p0, clear)
            verdict = explain(verdict, subject(square_grads, p0, repeats, clear), got)
            break
    mode = "cleared" if clear else "uncleared"
    return finish(QUESTION, f"square_grads_{mode}", verdict, seed=seed, points=points,
                  passed_message=f"square_grads with clear={clear} matched on fresh leaf values.")


def moved_verdict(verdict: Verdict, square_grads: Callable, p0: float, clear: bool) -> Verdict:
    """``verdict`` (a short answer, failed, unnamed) named ``p-moved-between-backwards`` when a
    run of ``LONG_RUN`` backwards from the same p0, which begins with the failing answer, is
    fitted by an update of p (``moved_between_backwards``; a short answer has few gradients
    to tell rules apart and check them on), else when the answer itself is. Else ``verdict``
    as it was."""
    got = verdict.evidence.got
    if (not isinstance(got, list) or not all(is_float(v) for v in got)
            or not close_lists(got[:1], [2.0 * p0], RTOL, ATOL)):
        return verdict  # the first gradient wrong: no p moved after it (no call made)
    longer, failure = call(square_grads, "square_grads", p0, LONG_RUN, clear=clear)
    hint = None
    if (failure is None and isinstance(longer, (list, tuple)) and len(longer) == LONG_RUN
            and all(is_float(v) for v in longer)
            and numbers_close([float(v) for v in longer[:len(got)]], got)):
        longer = [float(v) for v in longer]
        hint = moved_between_backwards(longer, p0, clear, RTOL, ATOL)
    if hint is None:
        hint = moved_between_backwards(got, p0, clear, RTOL, ATOL)
        if hint is None:
            return verdict
        return dataclasses.replace(verdict, misconception=MOVED,
                                   message=f"{verdict.message.rstrip()} {hint}")
    shown = f"square_grads({fmt(p0)}, {LONG_RUN}, clear={clear})"
    probe = {"id": MOVED, "established": hint, "calls": [recorded_call(
        "longer run", (p0, LONG_RUN), expected_grads(p0, LONG_RUN, clear), longer)]}
    evidence = dataclasses.replace(verdict.evidence, probes=[probe])
    return dataclasses.replace(
        verdict, misconception=MOVED, evidence=evidence,
        message=f"{verdict.message.rstrip()} A longer run, {shown}, returned "
                f"{describe(longer)}. {hint}")


def precision_confirmed(verdict: Verdict, square_grads: Callable, p0: float, repeats: int,
                        clear: bool) -> Verdict:
    """``verdict`` (named ``low-precision`` from one answer) kept when a call at another p0
    (``confirm_p0``) is replayed by the same dtype too, with that call in its evidence; else
    the answer judged again without that name."""
    other = confirm_p0(p0)
    got, failure = call(square_grads, "square_grads", other, repeats, clear=clear)
    found = (fitted([float(v) for v in got], other, repeats, clear)
             if failure is None and isinstance(got, (list, tuple)) and len(got) == repeats
             and all(is_float(v) for v in got) else None)
    if found is None or found[0] != fitted(verdict.evidence.got, p0, repeats, clear)[0]:
        return judge_grads(verdict.evidence.got, p0, repeats, clear, moved=repeats >= LONG_RUN,
                           precision=False)
    probe = {"id": LOW_PRECISION, "established": "replayed in the same dtype", "calls": [
        recorded_call("another p0", (other, repeats), expected_grads(other, repeats, clear),
                      list(got))]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} So does square_grads({fmt(other)}, {repeats}, "
                f"clear={clear}), which returned {describe(list(got))}.")
