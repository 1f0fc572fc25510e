"""Probes that change the failing input: one argument at a time where the reference's answer
changes (``probe.ignores-argument`` when the student's stays as it was), and one input class at
a time, the nearest input outside it (``probe.input-class.<class>`` when the answer is right
there and wrong on the failing input).
"""

from __future__ import annotations

from typing import Any

from ..describing import describe, expected_text
from .subject import Diagnosis, StopProbing, Subject, numbers_close, recorded_call, shown_args


def ignored_arguments(subject: Subject, got: Any) -> Diagnosis | None:
    """Argument sensitivity: change one argument at a time where the reference changes; an
    answer that stays as it was ignores that argument."""
    ignored, calls = [], []
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
            if subject.agree(new, got) and not subject.same(new, expected):
                ignored.append((subject.arg_names[i], subject.args[i], alt, expected))
            break
    if not ignored:
        return None
    parts = [f"with {n} changed from {describe(old, 3)} to {describe(alt, 3)} it still returned "
             f"{describe(got, 3)} (expected {expected_text(exp, 3)})" for n, old, alt, exp in ignored]
    names = " and ".join(n for n, *_ in ignored)
    return Diagnosis("probe.ignores-argument", (
        f"Changing one argument at a time: {'; '.join(parts)}. The answer does not follow "
        f"{names}: use the {'arguments' if len(ignored) > 1 else 'argument'} you are given."),
        calls)


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
        return Diagnosis(f"probe.input-class.{klass.name}", (
            f"It {what} for {shown_args(subject, subject.args)} ({klass.name}) and was right "
            f"for {shown_args(subject, klass.args)}, the nearest input that is not "
            f"{klass.name}: wrong for {klass.name} inputs. {question}"),
            [recorded_call("class-" + klass.name, klass.args, expected, got)])
    return None
