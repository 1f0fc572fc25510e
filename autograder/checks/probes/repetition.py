"""Probes that call the failing input again: twice on fresh copies (``probe.nondeterministic``
when seeding torch's generator alike makes the calls agree, ``probe.depends-on-history`` when
it does not), then twice on the same objects (``probe.state-on-objects``, naming what the first
call left on them).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..calling import call
from ..describing import describe
from .side_effects import changes, snapshot
from .subject import PROBE_SEED, Diagnosis, StopProbing, Subject, fresh, recorded_call, shown_args


def repeat(subject: Subject) -> Diagnosis | None:
    """Nondeterminism and state: the failing input twice on fresh copies, then twice seeded;
    then twice on the same objects."""
    subject.tried.append("calling again on copies of the same input")
    with torch.random.fork_rng(devices=[]):  # one fork for both: the second call draws on
        first = subject.value(subject.args, fork=False)
        second = subject.value(subject.args, fork=False)
    calls = [recorded_call("repeat", subject.args, None, first),
             recorded_call("repeat", subject.args, None, second)]
    if not subject.agree(first, second):
        a = subject.value(subject.args, torch_seed=PROBE_SEED)
        b = subject.value(subject.args, torch_seed=PROBE_SEED)
        calls += [recorded_call("repeat-seeded", subject.args, None, a),
                  recorded_call("repeat-seeded", subject.args, None, b)]
        if subject.agree(a, b):
            return Diagnosis("probe.nondeterministic", (
                f"Two calls with the same input ({shown_args(subject, subject.args)}) returned "
                f"{describe(first)} and then {describe(second)}, and agreed when torch's random "
                "generator was seeded alike before each: the answer depends on torch's "
                "randomness (dropout still active, or an unseeded random draw)."), calls)
        return Diagnosis("probe.depends-on-history", (
            f"Two calls with the same input ({shown_args(subject, subject.args)}) returned "
            f"{describe(first)} and then {describe(second)}, even with torch's random generator "
            "seeded alike: the answer depends on something besides the arguments that changes "
            "from one call to the next (a global list or counter, a cached result, another "
            "random generator)." + carried_over(subject.numbers(first), subject.numbers(second),
                                                _expected_numbers(subject))), calls)
    objects = fresh(subject.args)
    if not any(isinstance(a, (torch.Tensor, nn.Module)) for a in objects):
        return None
    if subject.calls_left < 2:
        return None
    subject.tried.append("calling twice on the same objects")
    before = [snapshot(a) for a in objects]
    with torch.random.fork_rng(devices=[]):
        once, f1 = call(subject.fn, subject.name, *objects, **subject.kwargs)
        twice, f2 = call(subject.fn, subject.name, *objects, **subject.kwargs)
    subject.calls_left -= 2
    if f1 or f2:
        raise StopProbing("call failed")
    if subject.agree(once, twice):
        return None
    left = [c for name, b, a in zip(subject.arg_names, before, objects)
            for c in changes(b, a, name)]
    calls.append(recorded_call("same-objects", subject.args, None, [once, twice]))
    what = f" The first call left: {'; '.join(left)}." if left else ""
    return Diagnosis("probe.state-on-objects", (
        f"Called twice on the same objects it returned {describe(once)} and then "
        f"{describe(twice)}, while fresh copies give the same answer each time: the first call "
        f"changed the objects it was given, and the second call saw that.{what}"), calls)


def _expected_numbers(subject: Subject) -> list[float] | None:
    try:
        return subject.numbers(subject.expected(*fresh(subject.args)))
    except Exception:  # noqa: BLE001 - the words are a hint; the diagnosis stands without
        return None


def carried_over(first: list[float] | None, second: list[float] | None,
                 expected: list[float] | None) -> str:
    """A sentence for two answers to one input whose difference is what a gradient kept from
    one call to the next adds (blind round zzzt: a leaf made once at module level, refilled
    and never cleared): the second is the first plus the whole expected answer, or plus one
    amount at every element (a sequence of gradients after each backward, each one shifted by
    what the last call left in ``.grad``). "" when neither holds."""
    if not first or not second or len(first) != len(second):
        return ""
    diff = [b - a for a, b in zip(first, second)]
    if not all(math.isfinite(d) for d in diff) or not any(diff):
        return ""
    scale = max(abs(d) for d in diff)
    if expected is not None and len(expected) == len(diff) and any(expected) and all(
            abs(d - e) <= 1e-4 * max(scale, max(abs(x) for x in expected)) + 1e-9
            for d, e in zip(diff, expected)):
        shift = "the whole right answer"
    elif len(diff) >= 2 and max(diff) - min(diff) <= 1e-4 * scale + 1e-9:
        shift = f"the same amount, {diff[0]:.6g}, at every element"
    else:
        return ""
    return (f" The second answer is the first plus {shift}: gradients carried over from the "
            "call before, as a leaf (or its .grad) kept from one call to the next does, made "
            "once outside the function and refilled. Make a fresh leaf with "
            "requires_grad=True inside the function on every call.")
