"""q4_device: ``make_optimizer`` moves the caller's model and keeps its weights. A move copies
the values (``model.to(device)``); ``model.to_empty(device=...)`` allocates new, uninitialised
memory and copies nothing, a re-initialisation after the move (``reset_parameters()``, an
``nn.init`` function, ``apply(init)``, a new model's weights loaded) draws new values, writing
to the parameters (``zero_()``, ``p.data = torch.empty_like(p)``) replaces them, and a cast
(``.half()``, ``.double()``) changes the caller's model's dtype. Each still hands back SGD over
the model's own parameters, on the device, so only the values tell (blind round zzj:
``to_empty`` kept full marks).

Measured: the model's parameters and buffers after the call against copies taken before it
(``meta`` holds no values: nothing is compared there). Uninitialised memory may hold anything,
the old values too when the allocator hands back the memory that held them, so the check keeps
the model's own tensors referenced through the call (their memory cannot be handed out again)
and scales its model's values in place first (``distinct``): the same seed draws the same model
for the predict checks, whose freed copies would otherwise hold exactly these values.

Named on the failing path only: ``model-dtype-changed`` (a floating dtype other than the one the
model came with, measured); ``weights-reinitialised`` when three more calls, with models of
other values and torch's generator seeded S, S2, S, give the same values under S and others
under S2 (the values come from the seed, not from the model); else ``weights-lost``, told that
the model was moved with ``to_empty`` only when the worker heard a move through it (heard:
it words the message, never the points).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn as nn

from ..calling import call_observed
from ..context import call_context
from ..describing import fmt, sentence
from ..result import PASS, Evidence, Verdict
from .device_transform import NAME as TRANSFORMED

#: The factor the check scales its model's values by (``distinct``), and those of the probes'
#: models: none is 1, no two alike.
FACTOR = -0.75
PROBE_FACTORS = (0.5, -0.625, 1.5)
#: torch's seeds for the probes' three calls: S, S2, S
PROBE_SEEDS = (20250417, 977, 20250417)
TO = "model.to(device) moves the values as they are"


def tensors(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's parameters and buffers by name."""
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def distinct(model: nn.Module, factor: float = FACTOR) -> nn.Module:
    """``model`` with its floating values scaled by ``factor`` in place: no copy of the new
    values is made, so none is left in freed memory."""
    with torch.no_grad():
        for t in tensors(model).values():
            if t.is_floating_point():
                t.mul_(factor)
    return model


@dataclass
class Kept:
    """A model's tensors before a call: its own (``held``, referenced until the judgement so
    that their memory cannot be handed to anything the call allocates) and copies of them."""

    held: dict[str, torch.Tensor]
    values: dict[str, torch.Tensor]


def kept(model: nn.Module) -> Kept:
    held = {name: t.detach() for name, t in tensors(model).items()}
    return Kept(held, {name: t.clone() for name, t in held.items()})


def _lost(model: nn.Module, before: Kept) -> tuple[list[str], str] | None:
    """The names of the tensors whose values changed and a sentence showing the first change,
    ``None`` where nothing can be compared (``meta``)."""
    now = tensors(model)
    if any(t.device.type == "meta" for t in now.values()) \
            or any(t.device.type == "meta" for t in before.values.values()):
        return None
    if set(now) != set(before.values):
        return sorted(set(now) ^ set(before.values)), "the model's tensors are not the ones it " \
            f"came with ({', '.join(sorted(before.values))} before, {', '.join(sorted(now))} now)"
    changed = []
    for name, old in before.values.items():
        new = now[name].detach().cpu()
        if new.shape != old.shape or not torch.equal(new.to(old.dtype), old):
            changed.append(name)
    if not changed:
        return [], ""
    name = changed[0]
    old, new = before.values[name].reshape(-1), now[name].detach().cpu().reshape(-1)
    shown = f"{len(changed)} of {len(before.values)} tensors changed"
    if new.shape == old.shape:
        at = int(torch.nonzero(new.to(old.dtype) != old)[0, 0])
        shown += f"; {name} held {fmt(float(old[at]))} at flat index {at}, now {fmt(float(new[at]))}"
    zeros = all(not now[n].detach().cpu().any() for n in changed)
    return changed, shown + ("; every changed value is 0" if zeros else "")


def _cast(model: nn.Module, before: Kept) -> str | None:
    """The floating dtypes the model's tensors have now where they came with another one."""
    now = tensors(model)
    cast = sorted({str(now[n].dtype).removeprefix("torch.") for n, old in before.values.items()
                   if n in now and old.is_floating_point() and now[n].dtype != old.dtype})
    return " and ".join(cast) or None


@dataclass
class Asked:
    """How a check asks the student's function again on another model, the other arguments
    as in the judged call (``again(model)``: what was observed, and the failure or ``None``),
    with ``fresh()`` the judged model as it arrived, drawn again; ``then``: what the function
    does after the move."""

    name: str
    again: Callable[[nn.Module], tuple[dict, Verdict | None]]
    fresh: Callable[[], nn.Module]
    then: str


def _probe(asked: Asked) -> list[tuple[dict | None, list[str]]]:
    """Three more calls on models of other values, torch seeded S, S2, S: the values of the
    tensors each call changed, after it (``None`` when it raised or changed none), and the
    moves heard. Every model stays
    referenced until the last call, so that no call's memory holds another's values."""
    models, results = [], []
    for factor, seed in zip(PROBE_FACTORS, PROBE_SEEDS):
        model = distinct(asked.fresh(), factor)
        before = kept(model)
        models.append((model, before))
        with call_context(torch_seed=seed, observe_moves=0):
            observed, failure = asked.again(model)
        lost = None if failure is not None else _lost(model, before)
        now = tensors(model)
        values = {n: now[n].detach().cpu().clone() for n in lost[0] if n in now} \
            if lost and lost[0] else None
        results.append((values, [str(k) for k in observed.get("move_kinds") or ()]))
    return results


def _same(a: dict | None, b: dict | None) -> bool:
    return a is not None and b is not None and a.keys() == b.keys() and all(
        a[n].shape == b[n].shape and a[n].dtype == b[n].dtype and torch.equal(a[n], b[n])
        for n in a)


def _came(before: Kept) -> str:
    return " and ".join(sorted({str(t.dtype).removeprefix("torch.")
                                for t in before.values.values() if t.is_floating_point()}))


def cast_text(model: nn.Module, before: Kept) -> str | None:
    """What a call that converted the caller's model is told (``None`` when it did not)."""
    cast, came = _cast(model, before), _came(before)
    if cast is None:
        return None
    return (f"after the call the model's parameters are {cast}, not {came} as they came: the "
            "call converted the caller's model (.half(), .double(), model.to(dtype=...) convert "
            "it in place). Move the model with model.to(device) only: the model decides the "
            f"dtype, and {TO}.")


def judge_weights(asked: Asked, model: nn.Module, before: Kept) -> Verdict:
    """The caller's ``model`` after a call: its values as ``before``, else a failure named by
    what is established, its message to follow the call as shown (``after the call ...``)."""
    lost = _lost(model, before)
    if lost is None or not lost[0]:
        return PASS
    names, what = lost
    evidence = Evidence(expected="the model's values as they came", got=names)
    results = _probe(asked)
    first, second, third = (values for values, _ in results)
    heard = any("Module.to_empty" in kinds for _, kinds in results)
    empty = (" It was moved with to_empty() first (as your process reported), which keeps "
             "no values either." if heard else "")
    fix = (f"Move the model with model.to(device) only, which moves the values as they are, "
           f"then {asked.then}.")
    if _same(first, third) and not _same(first, second) and second is not None:
        return Verdict(False, f"after the call the model's weights are not the ones it came "
                       f"with ({what}): they are new values drawn from torch's random "
                       "generator. Asked again with torch seeded alike, two models of "
                       "different weights came back with the same values, and with another "
                       f"seed with others: {asked.name} re-initialises the model "
                       "(reset_parameters(), an nn.init function, a new model's weights "
                       f"loaded), and the caller's trained weights are lost.{empty} {fix}",
                       "weights-reinitialised", evidence)
    if heard:
        cause = ("the model was moved with to_empty() (as your process reported), which "
                 "allocates new, uninitialised memory on the device and copies nothing into "
                 "it, on the CPU too, so the caller's trained weights are lost.")
    else:
        cause = ("they were not drawn from torch's random generator (asked again with torch "
                 "seeded, they did not follow the seed)" if first is not None else
                 f"{asked.name} replaced them")
        cause += (", so the caller's trained weights are lost. Moving must keep them: memory "
                  "that is only allocated (to_empty(), torch.empty_like) holds no values, and "
                  "zero_(), fill_() or assigning p.data replace them.")
    return Verdict(False, f"after the call the model's weights are not the ones it came with "
                   f"({what}): {cause} {fix}", "weights-lost", evidence)


def lost_weights(verdict: Verdict, make_optimizer: Callable, opt: Any, model: nn.Module,
                 before: Kept, fresh: Callable[[], nn.Module], device: torch.device,
                 lr: float) -> Verdict:
    """``verdict`` (an optimizer judged right) followed by the model's dtypes and values."""
    if not verdict.ok or not isinstance(opt, torch.optim.Optimizer):
        return verdict
    shown = f"make_optimizer(model, {device}, lr={fmt(lr)})"
    cast = cast_text(model, before)
    if cast is not None:
        return Verdict(False, f"{shown}: {cast}", "model-dtype-changed",
                       Evidence(expected=_came(before), got=_cast(model, before)))
    asked = Asked("make_optimizer", lambda m: call_observed(
        make_optimizer, "make_optimizer", m, device, lr=lr)[1:], fresh,
        "build SGD over model.parameters()")
    weights = judge_weights(asked, model, before)
    return weights if weights.ok else dataclasses.replace(
        weights, message=f"{shown}: {weights.message}")


def predict_weights(verdict: Verdict, predict: Callable, model: nn.Module, batch: torch.Tensor,
                    before: Kept, fresh: Callable[[], nn.Module],
                    device: torch.device) -> Verdict:
    """``verdict`` on ``predict``'s answer, failed (when it passed) or named (when no cause
    was named) by the caller's model's values after the call. A converted model is left to
    the dtype checks (``device_dtype``). Lost weights also replace ``output-transformed``:
    that name is read from the answer's values alone, and a model without its weights
    answers with whatever its memory held (uninitialised memory is often all zeros, as a
    threshold of the grader's output may be)."""
    named = not verdict.ok and verdict.misconception not in (None, TRANSFORMED)
    if named or _cast(model, before):
        return verdict
    asked = Asked("predict", lambda m: call_observed(predict, "predict", m, batch, device)[1:],
                  fresh, "run its forward in eval mode under torch.no_grad()")
    weights = judge_weights(asked, model, before)
    if weights.ok:
        return verdict
    told = weights.message[0].upper() + weights.message[1:]
    if verdict.misconception == TRANSFORMED:
        return dataclasses.replace(weights, message=f"predict(model, batch, {device}) gave "
                                   f"wrong values. {told}")
    if verdict.ok:
        return dataclasses.replace(weights, message=f"predict(model, batch, {device}) was "
                                   f"right, but the caller's model was left without its "
                                   f"weights. {told}")
    return dataclasses.replace(verdict, misconception=weights.misconception,
                               message=f"{sentence(verdict.message)} {told}")
