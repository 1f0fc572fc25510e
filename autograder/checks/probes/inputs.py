"""Probes that change the failing input: one argument at a time where the reference's answer
changes, and one input class at a time, the nearest input outside it
(``probe.input-class.<class>`` when the answer is right there and wrong on the failing input).

An answer that stays as it was when one argument changes is asked twice more before it is
said to ignore that argument (``probe.ignores-argument``): with the same two inputs a thousand
times closer to zero, where a value capped, clamped or saturated at the failing input's
magnitude follows its argument (``probe.stops-following`` when it changes there), and with
the argument's sign flipped, where a value kept only as its sign or direction follows it
(``probe.follows-sign-only`` when it changes there). An answer whose every number is NaN or
infinite is not asked: the same NaN for another argument says nothing of that argument.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..describing import describe, expected_text
from .subject import Diagnosis, StopProbing, Subject, numbers_close, recorded_call, shown_args

#: How much closer to zero the confirming calls of an ignored argument are made.
SMALLER = 1e-3


def _times(x: Any, factor: float) -> Any:
    """``x`` times ``factor``, of the same kind: a float, or a floating tensor (its flags
    kept); ``None`` for anything else (ints and bools keep their class, a network or a device
    has no magnitude) and for zero."""
    if isinstance(x, (float, np.floating)) and x != 0:
        return float(x) * factor
    if isinstance(x, torch.Tensor) and x.is_floating_point() and x.device.type != "meta" \
            and bool(x.ne(0).any()):
        return (x.detach() * factor).requires_grad_(x.requires_grad)
    return None


def _has_value(numbers: list[float] | None) -> bool:
    """An answer that can show whether it follows an argument: one finite number at least, or
    no numbers to read (compared by description). NaN and infinities everywhere come from a
    step that breaks for any input (a log of 0, 0/0), so the same NaN for another argument
    shows that step, not an argument ignored."""
    return numbers is None or any(math.isfinite(v) for v in numbers)


def _scaled_down(args: tuple) -> tuple:
    """``args`` with every float argument a thousand times closer to zero."""
    return tuple(a if s is None else s for a, s in zip(args, (_times(a, SMALLER) for a in args)))


def _answers_differ(subject: Subject, pair: tuple[tuple, tuple], probe: str,
                    calls: list) -> dict | None:
    """Two calls, on ``pair``'s two inputs; what they showed when the answers differ (and the
    reference's do: else nothing is asked), else ``None``."""
    expected = [subject.expected(*args) for args in pair]
    if numbers_close(subject.numbers(expected[0]), subject.numbers(expected[1])):
        return None
    got = [subject.value(args) for args in pair]
    calls += [recorded_call(probe, a, e, g) for a, e, g in zip(pair, expected, got)]
    if subject.agree(got[0], got[1]):
        return None
    return {"args": pair, "got": got, "expected": expected,
            "right": all(subject.same(g, e) for g, e in zip(got, expected))}


def _confirmed(subject: Subject, i: int, alt: Any, got: Any, calls: list) -> tuple[str, Any]:
    """Argument ``i``, changed to ``alt``, left the answer as it was: asked a thousand times
    closer to zero (``stops-following``), then with its sign flipped (``follows-sign-only``,
    one call beside the failing answer); ``ignored`` when neither changes the answer."""
    name = subject.arg_names[i]
    if _times(subject.args[i], SMALLER) is not None and _times(alt, SMALLER) is not None:
        varied = subject.args[:i] + (alt,) + subject.args[i + 1:]
        found = _answers_differ(subject, (_scaled_down(subject.args), _scaled_down(varied)),
                                "smaller-" + name, calls)
        if found:
            return "stops-following", found
    flipped = _times(subject.args[i], -1.0)
    if flipped is not None:
        args = subject.args[:i] + (flipped,) + subject.args[i + 1:]
        expected = subject.expected(*args)
        if not numbers_close(subject.numbers(expected),
                             subject.numbers(subject.expected(*subject.args))):
            new = subject.value(args)
            calls.append(recorded_call("sign-" + name, args, expected, new))
            if not subject.agree(new, got):
                return "follows-sign-only", {"args": args, "got": new, "expected": expected}
    return "ignored", None


def ignored_arguments(subject: Subject, got: Any) -> Diagnosis | None:
    """Argument sensitivity: change one argument at a time where the reference changes; an
    answer that stays as it was, and stays a thousand times closer to zero and with the
    argument's sign flipped, ignores that argument. One that changes there is told what was
    seen instead, never to use the argument."""
    found, calls = [], []
    base = subject.expected(*subject.args)
    for i, vary in subject.variations.items():
        for alt in vary(subject.args[i]):
            args = subject.args[:i] + (alt,) + subject.args[i + 1:]
            expected = subject.expected(*args)
            if numbers_close(subject.numbers(expected), subject.numbers(base)):
                continue  # this change cannot tell anything apart
            subject.tried.append(f"changing {subject.arg_names[i]}")
            new = subject.value(args)
            calls.append(recorded_call("vary-" + subject.arg_names[i], args, expected, new))
            if subject.agree(new, got) and not subject.same(new, expected) \
                    and _has_value(subject.numbers(got)):
                kind, seen = _confirmed(subject, i, alt, got, calls)
                found.append((kind, seen, i, alt, expected))
            break
    if not found:
        return None
    parts = "; ".join(
        f"with {subject.arg_names[i]} changed from {describe(subject.args[i], 3)} to "
        f"{describe(alt, 3)} it still returned {describe(got, 3)} (expected "
        f"{expected_text(exp, 3)})" for _, _, i, alt, exp in found)
    ignored = [subject.arg_names[i] for kind, _, i, _, _ in found if kind == "ignored"]
    if ignored:
        return Diagnosis("probe.ignores-argument", (
            f"Changing one argument at a time: {parts}. The answer does not follow "
            f"{' and '.join(ignored)}, at this size, a thousand times closer to zero, nor with "
            f"the sign flipped: use the {'arguments' if len(ignored) > 1 else 'argument'} you "
            "are given."), calls)
    kind, seen, i, _, _ = found[0]
    told = _stops_following if kind == "stops-following" else _sign_only
    return Diagnosis(f"probe.{kind}", f"Changing one argument at a time: {parts}. "
                     f"{told(subject, i, seen)}", calls)


def _stops_following(subject: Subject, i: int, seen: dict) -> str:
    """What two calls a thousand times closer to zero showed: the answer changed there."""
    name, old = subject.arg_names[i], describe(subject.args[i], 3)
    small, varied = seen["args"]
    if seen["right"]:
        told = (f"both right: the answer follows {name} closer to zero and stops following it "
                f"near {old}")
    else:
        told = (f"expected {expected_text(seen['expected'][0], 3)} and "
                f"{expected_text(seen['expected'][1], 3)}: the answer changes with {name} "
                f"closer to zero, and not near {old}")
    return (f"With the same two inputs a thousand times closer to zero "
            f"({shown_args(subject, small)}, then {name}={describe(varied[i], 3)}) it returned "
            f"{describe(seen['got'][0], 3)} and then {describe(seen['got'][1], 3)} ({told}). "
            "Is something capping or saturating a value on the way (a clamp, clipping, a hook "
            "that changes a gradient, tanh or sigmoid)?")


def _sign_only(subject: Subject, i: int, seen: dict) -> str:
    """What a call with the argument's sign flipped showed: the answer changed there."""
    name = subject.arg_names[i]
    return (f"It stayed so a thousand times closer to zero too, and with {name}'s sign flipped "
            f"({shown_args(subject, seen['args'])}) it returned {describe(seen['got'], 3)} "
            f"(expected {expected_text(seen['expected'], 3)}): the answer follows the sign "
            f"of {name}, not its size. Is something keeping only the sign or direction of a "
            "value (sign(), x / |x|, a division by a norm, a hook that changes a gradient)?")


def input_classes(subject: Subject, raised: bool = False) -> Diagnosis | None:
    """Input classes: the failing input with one property removed (made integer, positive,
    float64, contiguous...); right there and wrong here names the class."""
    for klass in subject.classes(subject.args):
        if klass.args is None:
            continue
        subject.tried.append(f"an input that is not {klass.name}")
        got, failure = subject.run(klass.args)
        if failure is not None:
            if failure.misconception in ("worker-lost", "probe-budget"):
                raise StopProbing(failure.message)
            continue
        expected = subject.expected(*klass.args)
        if not subject.same(got, expected):
            continue
        what = "raised" if raised else "was wrong"
        question = klass.question
        if raised and klass.about_values:  # a raise computed no value to truncate or round
            question = (f"Something in the function takes another path for {klass.name} "
                        "inputs: the error above names the line where it stopped.")
        failing, nearest = shown_args(subject, subject.args), shown_args(subject, klass.args)
        if klass.change or nearest == failing:  # the same short description: say what changed
            nearest = f"the same call with {klass.change or klass.name + ' taken away'}"
        return Diagnosis(f"probe.input-class.{klass.name}", (
            f"It {what} for {failing} ({klass.name}) and was right for {nearest}, the nearest "
            f"input that is not {klass.name}: wrong for {klass.name} inputs. {question}"),
            [recorded_call("class-" + klass.name, klass.args, expected, got)])
    return None
