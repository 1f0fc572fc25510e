"""Diagnostic probes: when a check failed and no known mistake matched, a few more calls of the
student's function that locate the cause, and a message that says only what they showed.

A probe is a small function that returns a ``Diagnosis`` (a stable id, the sentence it
established, the calls it made as plain data) or ``None``. ``explain`` runs them in a fixed
order on one failing call and puts the first diagnosis into the verdict: its id becomes the
result's ``misconception`` (so the class report counts it) and its calls go to
``Evidence.probes``. Without a diagnosis the message gains only the list of what was tried,
never a guessed cause (docs/probes.md).

Probe kinds and their ids:

- ``probe.nondeterministic``: two calls on copies of one input disagree, and agree when torch's
  generator is seeded alike before each: the answer depends on torch's randomness.
- ``probe.depends-on-history``: two calls on copies of one input disagree even so: the answer
  depends on something besides the arguments that changes between calls.
- ``probe.state-on-objects``: two calls on the *same* objects disagree while calls on fresh
  copies agree: the first call left something on the caller's objects.
- ``probe.ignores-argument``: changing one argument (the reference's answer changes) leaves the
  answer as it was.
- ``probe.input-class.<class>``: right on the nearest input outside ``<class>`` (the same values
  made integer, positive, float64, with no size-1 dimension...), wrong on the one inside it.
- ``probe.rounded`` / ``probe.scaled``: the answer equals the reference rounded to a number of
  decimals, or the reference times one constant factor.
- side effects (``changes``): what a call changed on the caller's tensors, networks and
  optimizers; checks whose contract leaves those alone score it (``modified-network``...).

Probe calls go through ``calling.call`` like the checks' own (the same wall, time limit and
budgets), on fresh copies, with torch's generator forked; a probe whose call fails or is lost
stops the probing. Every probe is bounded: at most ``MAX_CALLS`` calls per failing check.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from .calling import call, describe, fmt, plain
from .context import call_context
from .result import Verdict

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
    """

    name: str
    args: tuple
    question: str


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


class _Stop(Exception):
    """A probe call failed or was lost: stop probing (say nothing about it)."""


def _value(subject: Subject, args: tuple, fork: bool = True, **context: Any) -> Any:
    got, failure = subject.run(args, fork, **context)
    if failure is not None:
        raise _Stop(failure.message)
    return got


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


def _record(probe: str, args: tuple, expected: Any, got: Any) -> dict:
    return {"probe": probe, "args": [plain(a) for a in args], "expected": plain(expected),
            "got": plain(got)}


# --- probes that call ------------------------------------------------------------------------


def repeat(subject: Subject) -> Diagnosis | None:
    """Nondeterminism and state: the failing input twice on fresh copies, then twice seeded;
    then twice on the same objects."""
    subject.tried.append("calling again on copies of the same input")
    with torch.random.fork_rng(devices=[]):  # one fork for both: the second call draws on
        first = _value(subject, subject.args, fork=False)
        second = _value(subject, subject.args, fork=False)
    calls = [_record("repeat", subject.args, None, first), _record("repeat", subject.args, None,
                                                                   second)]
    if not _agree(subject, first, second):
        a = _value(subject, subject.args, torch_seed=PROBE_SEED)
        b = _value(subject, subject.args, torch_seed=PROBE_SEED)
        calls += [_record("repeat-seeded", subject.args, None, a),
                  _record("repeat-seeded", subject.args, None, b)]
        if _agree(subject, a, b):
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
            "random generator)."), calls)
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
        raise _Stop("call failed")
    if _agree(subject, once, twice):
        return None
    left = [c for name, b, a in zip(subject.arg_names, before, objects)
            for c in changes(b, a, name)]
    calls.append(_record("same-objects", subject.args, None, [once, twice]))
    what = f" The first call left: {'; '.join(left)}." if left else ""
    return Diagnosis("probe.state-on-objects", (
        f"Called twice on the same objects it returned {describe(once)} and then "
        f"{describe(twice)}, while fresh copies give the same answer each time: the first call "
        f"changed the objects it was given, and the second call saw that.{what}"), calls)


def ignored_arguments(subject: Subject, got: Any) -> Diagnosis | None:
    """Argument sensitivity: change one argument at a time where the reference changes; an
    answer that stays as it was ignores that argument."""
    ignored, calls = [], []
    base = subject.expected(*subject.args)
    for i, vary in subject.variations.items():
        for alt in vary(subject.args[i]):
            args = subject.args[:i] + (alt,) + subject.args[i + 1:]
            expected = subject.expected(*args)
            if _close(subject.numbers(expected), subject.numbers(base)):
                continue  # this change cannot tell anything apart
            subject.tried.append(f"changing {subject.arg_names[i]}")
            new = _value(subject, args)
            calls.append(_record("vary-" + subject.arg_names[i], args, expected, new))
            if _agree(subject, new, got) and not subject.same(new, expected):
                ignored.append((subject.arg_names[i], subject.args[i], alt, expected))
            break
    if not ignored:
        return None
    parts = [f"with {n} changed from {describe(old, 3)} to {describe(alt, 3)} it still returned "
             f"{describe(got, 3)} (expected {describe(exp, 3)})" for n, old, alt, exp in ignored]
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
                raise _Stop(failure.message)
            continue
        expected = subject.expected(*klass.args)
        if not subject.same(got, expected):
            continue
        what = "raised" if raised else "was wrong"
        return Diagnosis(f"probe.input-class.{klass.name}", (
            f"It {what} for {shown_args(subject, subject.args)} ({klass.name}) and was right "
            f"for {shown_args(subject, klass.args)}, the nearest input that is not "
            f"{klass.name}: wrong for {klass.name} inputs. {klass.question}"),
            [_record("class-" + klass.name, klass.args, expected, got)])
    return None


# --- probes on the numbers alone ---------------------------------------------------------------


def rounded(got: list[float], expected: list[float]) -> Diagnosis | None:
    """The answer is the reference rounded to 1..6 decimals (and rounding changed something)."""
    if not got or len(got) != len(expected):
        return None
    for decimals in range(1, 7):
        target = [round(e, decimals) for e in expected]
        if all(abs(g - t) <= 1e-9 * max(1.0, abs(t)) for g, t in zip(got, target)) and any(
                abs(t - e) > 1e-9 * max(1.0, abs(e)) for t, e in zip(target, expected)):
            example = next((e, t) for e, t in zip(expected, target) if abs(t - e) > 1e-12)
            return Diagnosis("probe.rounded", (
                f"Every value equals the expected one rounded to {decimals} decimal"
                f"{'s' if decimals > 1 else ''} ({fmt(example[0])} became {fmt(example[1])}): "
                "something rounds the result; return it at full precision."),
                [{"probe": "rounded", "decimals": decimals, "got": got, "expected": expected}])
    return None


def scaled(got: list[float], expected: list[float]) -> Diagnosis | None:
    """The answer is the reference times one constant (other than 1), on two or more values."""
    pairs = [(g, e) for g, e in zip(got, expected) if abs(e) > 1e-9]
    if len(pairs) < 2 or len(got) != len(expected) or not all(map(math.isfinite, got)):
        return None
    ratios = [g / e for g, e in pairs]
    k = ratios[0]
    if abs(k) < 1e-9 or abs(k - 1) < 1e-6 or any(abs(r - k) > 1e-6 * max(1.0, abs(k))
                                                  for r in ratios):
        return None
    if any(abs(g) > 1e-9 for g, e in zip(got, expected) if abs(e) <= 1e-9):
        return None
    sign = " (the sign is flipped)" if abs(k + 1) < 1e-6 else ""
    return Diagnosis("probe.scaled", (
        f"Every value is {fmt(round(k, 6))} times the expected one{sign}: the answer is off by "
        "a constant factor."), [{"probe": "scaled", "factor": k, "got": got,
                                 "expected": expected}])


# --- running them ------------------------------------------------------------------------------


def _close(a: list[float] | None, b: list[float] | None) -> bool:
    """Equal lengths and every pair within ``1e-6`` relative (``1e-9`` absolute). Symmetric, not
    ``closeness.within``: it asks whether two of the student's answers agree, with no reference
    side to scale by."""
    return a is not None and b is not None and len(a) == len(b) and all(
        abs(x - y) <= 1e-9 + 1e-6 * max(abs(x), abs(y)) for x, y in zip(a, b))


def _agree(subject: Subject, a: Any, b: Any) -> bool:
    """Two answers agree: the same numbers (to ``1e-6``), or the same description."""
    na, nb = subject.numbers(a), subject.numbers(b)
    if na is None or nb is None:
        return na is None and nb is None and describe(a) == describe(b)
    return _close(na, nb)


def diagnose(subject: Subject, got: Any, raised: bool = False) -> Diagnosis | None:
    """The probes in order, first diagnosis wins: state and randomness (they would make every
    later probe's answer unreliable), rounding, argument sensitivity, input classes, and a
    constant factor last."""
    try:
        if raised:
            return input_classes(subject, raised=True)
        found = repeat(subject)
        if found:
            return found
        numbers, expected = subject.numbers(got), subject.numbers(subject.expected(*subject.args))
        comparable = numbers is not None and expected is not None
        if comparable:
            subject.tried.append("rounding")
            found = rounded(numbers, expected)
            if found:
                return found
        found = ignored_arguments(subject, got) or input_classes(subject)
        if found or not comparable:
            return found
        # last: a constant factor is true of any wrong scalar answer, so it is said only when
        # nothing more specific was found (and only for two or more values)
        subject.tried.append("a constant factor")
        return scaled(numbers, expected)
    except _Stop:
        return None


def explain(verdict: Verdict, subject: Subject, got: Any) -> Verdict:
    """``verdict`` (failed, no named mistake) with what the probes established, or with what
    they tried when none established anything. A named mistake is left as it is."""
    if verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    raised = verdict.misconception == "raised"
    found = diagnose(subject, got, raised=raised)
    message = verdict.message.rstrip()
    if found is not None:
        evidence = dataclasses.replace(verdict.evidence, probes=[found.record()])
        return dataclasses.replace(verdict, message=f"{message} {found.message}",
                                   misconception=found.id, evidence=evidence)
    if raised:
        return verdict
    tried = sorted(set(subject.tried), key=subject.tried.index)
    checked = f" Checked without finding the cause: {', '.join(tried)}." if tried else ""
    evidence = dataclasses.replace(verdict.evidence,
                                   probes=[{"id": None, "tried": tried}] if tried else [])
    return dataclasses.replace(verdict, message=f"{message}{checked}", evidence=evidence)


# --- side effects --------------------------------------------------------------------------------


def _hooks(obj: Any) -> int:
    names = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
             "_post_accumulate_grad_hooks")
    return sum(len(getattr(obj, n, None) or {}) for n in names)


def snapshot(obj: Any) -> dict | None:
    """What ``changes`` compares: a tensor's values, flag, gradient and hooks; a module's
    parameters (values, ``requires_grad``, gradients), training flags and hooks; an optimizer's
    settings and state size. ``None`` for anything else."""
    if isinstance(obj, torch.Tensor):
        return {"values": obj.detach().clone() if obj.device.type != "meta" else None,
                "requires_grad": obj.requires_grad,
                "grad": obj.grad.detach().clone() if obj.is_leaf and obj.grad is not None
                else None, "hooks": _hooks(obj)}
    if isinstance(obj, nn.Module):
        return {"params": {n: snapshot(p) for n, p in obj.named_parameters()},
                "ids": {n: id(p) for n, p in obj.named_parameters()},
                "training": {n: m.training for n, m in obj.named_modules()},
                "hooks": {n: _hooks(m) for n, m in obj.named_modules()}}
    if isinstance(obj, torch.optim.Optimizer):
        return {"settings": [{k: v for k, v in g.items() if k != "params"}
                             for g in obj.param_groups], "state": len(obj.state)}
    return None


def _tensor_changes(before: dict, t: torch.Tensor, name: str) -> list[str]:
    out = []
    if before["values"] is not None and t.device.type != "meta" and (
            t.shape != before["values"].shape or not torch.equal(t.detach(), before["values"])):
        out.append(f"the values of {name} changed")
    if t.requires_grad != before["requires_grad"]:
        out.append(f"{name}.requires_grad became {t.requires_grad}")
    grad = t.grad if t.is_leaf else None
    if (grad is None) != (before["grad"] is None) or (
            grad is not None and (grad.shape != before["grad"].shape
                                  or not torch.equal(grad, before["grad"]))):
        out.append(f"{name}.grad was {'set' if before['grad'] is None else 'changed'}"
                   if grad is not None else f"{name}.grad was cleared")
    if _hooks(t) != before["hooks"]:
        out.append(f"{name} has {_hooks(t) - before['hooks']:+d} hooks")
    return out


def changes(before: dict | None, obj: Any, name: str) -> list[str]:
    """What changed on ``obj`` since ``snapshot`` (one phrase each, naming the part)."""
    if before is None:
        return []
    if isinstance(obj, torch.Tensor):
        return _tensor_changes(before, obj, name)
    if isinstance(obj, nn.Module):
        out = []
        params = dict(obj.named_parameters())
        for n, snap in before["params"].items():
            if n not in params:
                out.append(f"{name}.{n} was removed")
            elif id(params[n]) != before["ids"][n] and params[n].shape != snap["values"].shape:
                out.append(f"{name}.{n} was replaced")
            else:
                out += _tensor_changes(snap, params[n], f"{name}.{n}")
        for n, m in obj.named_modules():
            label = f"{name}.{n}" if n else name
            if n in before["training"] and m.training != before["training"][n]:
                out.append(f"{label} was put in {'training' if m.training else 'eval'} mode")
            if n in before["hooks"] and _hooks(m) != before["hooks"][n]:
                out.append(f"{label} has {_hooks(m) - before['hooks'][n]:+d} hooks")
        return out
    if isinstance(obj, torch.optim.Optimizer):
        now = snapshot(obj)
        return [f"{name}'s settings or state changed"] if now != before else []
    return []


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
