"""q4_device's probes: ``pick_device`` and ``make_optimizer`` (``predict``'s are beside its
check, ``device.py``).

``pick_device``: when one simulated availability got a wrong device, ask under all four (cuda
and mps each on and off) and say only what those answers show.

- The same device whatever was simulated: ``availability-ignored`` (the answer was fixed
  before the call: a module-level constant, a cache).
- cuda (or mps) never returned, even where it was available: ``never-picks-cuda`` (or
  ``never-picks-mps``): it was never asked (every documented question is simulated alike:
  ``worker/simulated_devices.py``), or cpu came before it.
- The first available device of some other fixed order (mps before cuda):
  ``wrong-preference-order``, naming the order the answers follow.
- A device with an index past the first (``cuda:1`` from ``cuda:{device_count()}``) where the
  right type was picked: ``device-index`` (red team rt-8: the four answers' types were right,
  and the message listed them as if they were).
- Anything else: no cause; the message lists the four answers, each as returned.

Each of these (and a ``pick_device`` that raised) is also told which question it asked torch
that does not say whether a device is there (``torch.cuda.is_initialized()``,
``torch.version.cuda``, ``is_built()``...: ``device_questions``, heard from the worker): as the
cause, in place of a guess, when asked again with those questions answering as availability
every answer comes right; else as what was heard. The names above come from the answers only.

``make_optimizer``: a call that raised or failed with no named mistake is probed like any
other (``probes.explain``): repeated calls, another ``lr``, and, after a move, the same call
with the CPU as the device (``probe.input-class.another-device``).
"""

from __future__ import annotations

import dataclasses
from itertools import permutations
from typing import Any, Callable

import torch
from torch import nn

from ..calling import call
from ..context import call_context
from ..probes import InputClass, Subject, explain
from ..raised_hints import hint_for
from ..result import Verdict, with_probe
from .device_questions import RIGHT, Heard, heard_questions

CASES = ((True, True), (True, False), (False, True), (False, False))
RIGHT_ORDER = ("cuda", "mps", "cpu")


def _first_available(order: tuple[str, ...], cuda: bool, mps: bool) -> str:
    available = {"cuda": cuda, "mps": mps, "cpu": True}
    return next(d for d in order if available[d])


def _kind(answer: Any) -> str | None:
    if isinstance(answer, torch.device):
        return answer.type
    return answer if isinstance(answer, str) else None


def _shown(cuda: bool, mps: bool) -> str:
    return f"cuda {'on' if cuda else 'off'}, mps {'on' if mps else 'off'}"


def _as_returned(answer: Any) -> str:
    """An answer as the table shows it: a device with its index (``cuda:1``)."""
    return str(answer) if isinstance(answer, torch.device) else str(_kind(answer))


def _past_first(answers: dict) -> list[str]:
    """The devices answered with an index past the first, where the type was the right one."""
    return sorted({str(got) for (cuda, mps), got in answers.items()
                   if isinstance(got, torch.device) and got.index not in (None, 0)
                   and got.type == _first_available(RIGHT_ORDER, cuda, mps)})


def explain_pick(verdict: Verdict, pick_device: Callable) -> Verdict:
    """``verdict`` (a wrong device or a raise, no named cause) with what more calls establish:
    the four availabilities asked again, and which question the function asked torch
    (``device_questions``: heard, so it chooses words only)."""
    if verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    if verdict.misconception == "raised":
        return _told_raised(verdict, heard_questions(pick_device))
    answers, returned = {}, {}
    for cuda, mps in CASES:
        with call_context(simulate_devices={"cuda": cuda, "mps": mps}):
            got, failure = call(pick_device, "pick_device")
        if failure is not None:
            return verdict  # a call that failed establishes nothing
        answers[(cuda, mps)], returned[(cuda, mps)] = _kind(got), got
    table = "; ".join(f"{_shown(c, m)}: {_as_returned(returned[(c, m)])}" for c, m in CASES)
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": None, "answers": {_shown(c, m): _as_returned(returned[(c, m)]) for c, m in CASES}}])
    indexed = _past_first(returned)
    if indexed and all(kind == _first_available(RIGHT_ORDER, c, m)
                       for (c, m), kind in answers.items()):
        return dataclasses.replace(
            verdict, misconception="device-index", evidence=evidence,
            message=f"{verdict.message} It picks the right kind of device under every simulated "
            f"availability ({table}), but {' and '.join(indexed)} names a device past the "
            "first: device indices count from 0, so with one GPU only cuda:0 exists (and "
            "device_count() is how many there are, not the last index). Return "
            "torch.device('cuda') (the current GPU) or cuda:0.")
    same, never = len(set(answers.values())) == 1, [d for d in ("cuda", "mps")
                                                     if d not in answers.values()]
    order = None if same or never else next(
        (o for o in permutations(RIGHT_ORDER) if o != RIGHT_ORDER
         and all(answers[(c, m)] == _first_available(o, c, m) for c, m in CASES)), None)
    if order is not None:
        return dataclasses.replace(verdict, misconception="wrong-preference-order",
                                   evidence=evidence, message=f"{verdict.message} Under every "
                                   f"simulated availability ({table}) it picks the first "
                                   f"available of {', '.join(order)}. Prefer cuda, then mps, "
                                   "then cpu.")
    heard = heard_questions(pick_device)  # asked only where no other order explains the answers
    if heard:
        evidence.probes.append(heard.probe())
    cause = heard.sentence() if heard and heard.confirmed else None
    also = f" {heard.sentence()}" if heard and not heard.confirmed else ""
    if same:
        fix = ("Ask torch.cuda.is_available() and torch.backends.mps.is_available() each time "
               "you are called.")
        return dataclasses.replace(verdict, misconception="availability-ignored", evidence=evidence,
                                   message=f"{verdict.message} Asked under every simulated "
                                   f"availability it returned {answers[CASES[0]]} each time "
                                   f"({table})" + (f". {cause} {fix}" if cause else
                                                   ": the answer was fixed before the call (a "
                                                   f"module-level constant, a cached result). "
                                                   f"{fix}{also}"))
    if never:  # cuda before mps: every order with cpu before it says the same
        device, asked = never[0], RIGHT[never[0]]
        fix = f"with {asked} itself, called each time, and prefer cuda, then mps, then cpu."
        return dataclasses.replace(verdict, misconception=f"never-picks-{device}",
                                   evidence=evidence, message=f"{verdict.message} Under every "
                                   f"simulated availability ({table}) it never returned "
                                   f"{device}, even when {asked} said True"
                                   + (f". {cause} Decide {fix}" if cause else f": decide {fix}{also}"))
    if cause:
        return dataclasses.replace(verdict, evidence=evidence, message=f"{verdict.message} The "
                                   f"answers under every simulated availability were {table}. "
                                   f"{cause} {heard.fix()}")
    return dataclasses.replace(verdict, evidence=evidence, message=f"{verdict.message} Checked "
                               f"without finding the cause: the answers under every simulated "
                               f"availability were {table}.{also}")


def _told_raised(verdict: Verdict, heard: Heard | None) -> Verdict:
    """A ``pick_device`` that raised, told the question it asked: as the cause when answering
    it as availability made every answer right (then without the hint for the error, which
    was torch's, not the student's), else as what was heard."""
    if heard is None:
        return verdict
    message = verdict.message
    if heard.confirmed:
        hint = hint_for(message)
        message = message.replace(f" {hint}", "") if hint else message
    return with_probe(verdict, heard.probe(), message=f"{message} {heard.sentence()}"
                      + (f" {heard.fix()}" if heard.confirmed else ""))


def _optimizer_numbers(opt: Any) -> list[float] | None:
    """An optimizer as numbers: its lr and how many tensors it holds (``None`` for others)."""
    if not isinstance(opt, torch.optim.Optimizer):
        return None
    return [float(g.get("lr", 0.0)) for g in opt.param_groups] + [
        float(sum(len(g["params"]) for g in opt.param_groups))]


def explain_optimizer(verdict: Verdict, make_optimizer: Callable, model: nn.Module,
                      device: torch.device, lr: float) -> Verdict:
    """Probe a ``make_optimizer`` that raised or failed with no named mistake."""
    count = len(list(model.parameters()))

    def expected(m: nn.Module, d: torch.device, lr_: float) -> list[float]:
        return [lr_, float(count)]

    def same(got: Any, exp: list[float]) -> bool:
        return (isinstance(got, torch.optim.SGD) and _optimizer_numbers(got) == exp
                and all(p.device.type == got_device(got) for g in got.param_groups
                        for p in g["params"]))

    def got_device(opt: torch.optim.Optimizer) -> str:
        return opt.param_groups[0]["params"][0].device.type if opt.param_groups[0]["params"] \
            else "cpu"

    def classes(args: tuple) -> list[InputClass]:
        m, d, lr_ = args
        if d.type == "cpu":
            return []
        return [InputClass("another-device", (m, torch.device("cpu"), lr_),
                           "Does something in make_optimizer work on the CPU only? Move the "
                           "model with model.to(device) and build SGD over its parameters.")]

    return explain(verdict, Subject("make_optimizer", make_optimizer, (model, device, lr),
                                    ("model", "device", "lr"), expected, same,
                                    _optimizer_numbers, variations={2: lambda v: [v * 2]},
                                    classes=classes), None)


#: What a returned optimizer that holds tensors other than the model's parameters may be
KEPT_SUSPECTS = ("lr-ignored", "wrong-parameters", "model-not-moved")


def _held(opt: torch.optim.Optimizer) -> list[tuple]:
    """What an optimizer holds, comparable across the wall: each tensor's shape, device and
    values (``None`` on ``meta``)."""
    return [(tuple(p.shape), p.device.type,
             None if p.device.type == "meta" else p.detach().cpu().double().reshape(-1).tolist())
            for group in opt.param_groups for p in group["params"]]


def _ids(opt: torch.optim.Optimizer) -> set[int]:
    return {id(p) for group in opt.param_groups for p in group["params"]}


def _lrs(opt: torch.optim.Optimizer) -> list:
    return [group.get("lr") for group in opt.param_groups]


def kept_optimizer(verdict: Verdict, make_optimizer: Callable, opt: Any, model: nn.Module,
                   device: torch.device, lr: float, other: nn.Module) -> Verdict:
    """A failing answer that holds tensors other than ``model``'s parameters, asked again with
    ``other`` (another model, on the CPU, another lr): the same tensors again name
    ``optimizer-kept``, an optimizer built once and returned by every later call."""
    if verdict.ok or verdict.misconception not in KEPT_SUSPECTS \
            or not isinstance(opt, torch.optim.Optimizer):
        return verdict
    if _ids(opt) & {id(p) for p in model.parameters()}:
        return verdict
    held, lr_other = _held(opt), lr * 2 + 0.05
    again, failure = call(make_optimizer, "make_optimizer", other, torch.device("cpu"),
                          lr=lr_other)
    if failure is not None or not isinstance(again, torch.optim.Optimizer) \
            or _ids(again) & {id(p) for p in other.parameters()} or _held(again) != held \
            or _lrs(again) != _lrs(opt):  # a new optimizer would take the lr asked for
        return verdict
    shapes = ", ".join(str(shape) for shape, _, _ in held)
    lrs = _lrs(again)
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": "optimizer-kept", "established": "a call with another model and lr returned an "
        "optimizer over the same tensors", "calls": [{"probe": "another-model", "lr": lr_other,
                                                      "got_lr": lrs, "held": shapes}]}])
    return dataclasses.replace(verdict, misconception="optimizer-kept", evidence=evidence,
                               message=f"make_optimizer(model, {device}, lr={lr:g}) returned an "
                               f"optimizer over {len(held)} tensors (shapes {shapes}) that "
                               "are not this model's parameters, and a call with another model "
                               f"and lr={lr_other:g} returned an optimizer over the same tensors "
                               f"(lr {lrs}): make_optimizer hands back one optimizer built in an "
                               "earlier call and kept (a module-level variable, a default "
                               "argument, an attribute), so its step() updates that first model, "
                               "never the one passed in. Build a new "
                               "torch.optim.SGD(model.parameters(), lr=lr) on every call.")
