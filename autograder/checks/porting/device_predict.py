"""q4_device: ``predict`` on a device, the model's forward in eval mode without a graph.

What the judge measures and what it only hears (docs/security.md): points go on ``predict``'s
answer, the tensor it returns (type, device, shape, values against the grader's own forward,
``requires_grad``). Whether the forward *recorded* a graph before a ``detach()`` leaves no
trace in that answer, and the count of tensors saved for backward is taken inside the
student's process, where a cell can replace the counter: it is heard, not measured, so a
positive count adds advice to a passing result (misconception ``graph-recorded``) and never
costs a point.

On ``meta``, which holds no values, the answer cannot show that the model's forward made it:
an empty tensor made to the output's shape after moving the model has the right type, shape,
dtype and device. There the worker also says where the model's forwards took their inputs
(forward hooks, heard); an answer on ``meta`` when it says no forward ran there fails as
``forward-not-on-device``. That word can only cost: a forged one buys back what such an answer
earned before it was heard, and an honest forward is always heard where it ran. The answer on
``meta`` and where the caller's model is after the call are judged in ``device_placement``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, NamedTuple

import numpy as np
import torch
import torch.nn as nn

from ..calling import call_observed, meta_answers
from ..context import call_context
from ..describing import plain, sentence
from ..probes import InputClass, Subject, explain, numbers_of
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import judge_tensor, name_raised, with_diagnosis
from .device import QUESTION, changed_device, draw_model, drawn_again, evaluated, grading_device
from .device_data import data_moved
from .device_dtype import cast_batch, cast_model, in_float64
from .device_hooks import hooks_kept, model_hooks
from .device_norm import norm_in_training
from .device_placement import (
    MODEL_NOT_MOVED,
    after_forward,
    heard_moves,
    judge_on_meta,
    kept_on_device,
    moved_back_advice,
    moved_off,
    on_meta,
)
from .device_single import squeezed
from .device_transform import transformed
from .device_weights import kept, predict_weights

RTOL, ATOL = 1e-5, 1e-6
#: What a batch left off the device is told: whether ``.to`` was never called on it or its
#: result was dropped is not observed (only the device mismatch is), so both are said.
NOT_MOVED = ("The model was moved but the batch was not (never moved, or batch.to(device) "
             "called without keeping its result: Tensor.to returns a new tensor and leaves "
             "batch where it was), so assign it: batch = batch.to(device).")
DEVICE_MISMATCH = (
    ("is not on the expected device", "batch-not-moved", NOT_MOVED),
    ("Expected all tensors to be on the same device", "batch-not-moved", NOT_MOVED),
    *((needle, "output-not-on-device",
       "predict copied a tensor off the device it was given (.cpu(), .item(), .numpy(), "
       ".tolist() or .to('cpu')): on the 'meta' device, which holds no values, that raises. "
       "Return the output on the device it was computed on, as it is.")
      for needle in ("Cannot copy out of meta tensor", "cannot be called on meta tensors",
                     "can't convert meta device type tensor")),
)


class Prediction(NamedTuple):
    """One call of ``predict``: its answer or failure, and what was heard of it."""

    got: Any
    failure: Verdict | None
    packed: int  #: tensors saved for backward during the call (heard)
    tf32: bool  #: TF32 matmuls on after the call (heard)
    #: device types the model's forwards took their inputs on (heard; asked only on meta,
    #: ``None`` when not heard)
    forward_devices: tuple[str, ...] | None = None
    #: each move of the model itself during the call, ``(before, after)``: the device types
    #: of its parameters and buffers, ``after`` "raised" when the move raised (heard; asked
    #: off the CPU only, ``None`` when not heard)
    moves: tuple[tuple[str, str], ...] | None = None


def run_predict(predict: Callable, model: nn.Module, batch: torch.Tensor,
                device: torch.device) -> Prediction:
    """Call ``predict`` while counting tensors saved for backward (a recorded graph), and
    whether TF32 matmuls were on after it, and on ``meta`` where the model's forwards ran
    (``forward_devices``). All are taken where the student's code runs, so they are only
    heard: advice and a named cause; only an answer on ``meta`` no forward there made loses
    points on what is heard (module docstring)."""
    observe = ({"observe_forward": 0} if device.type == "meta" else {}) | (
        {"observe_moves": 0} if device.type != "cpu" else {})
    with call_context(count_saved_tensors=True, observe_tf32=True, **observe), \
            torch.random.fork_rng(devices=[]), \
            meta_answers() if device.type == "meta" else contextlib.nullcontext():
        # fork_rng: a train-mode dropout must not shift torch's rng
        got, observed, failure = call_observed(predict, "predict", model, batch, device)
    tf32 = observed.get("tf32") is True
    forward = observed.get("forward_devices")
    forward = tuple(forward) if isinstance(forward, list) else None
    moves = heard_moves(observed.get("module_moves"))
    if failure is not None:
        failure = left_behind(name_raised(failure, DEVICE_MISMATCH), model, device)
        if observed.get("raised_by_move") is True:
            failure = raised_moving_back(failure, moves, forward, device)
        return Prediction(None, failure, 0, tf32, forward, moves)
    return Prediction(got, None, int(observed.get("saved_tensors", 0)), tf32, forward, moves)


def raised_moving_back(failure: Verdict, moves: tuple[tuple[str, str], ...] | None,
                       forward: tuple[str, ...] | None, device: torch.device) -> Verdict:
    """``failure``, told ``model-moved-back`` when it is torch's copy-out-of-meta error
    (``output-not-on-device`` by its text) and the worker says the error that ended the call
    is the one a move of the model raised while its parameters were on ``device``: the model
    moved back, not the output copied off."""
    move = moved_off(moves, device)
    if (failure.misconception != "output-not-on-device" or move is None
            or move[1] != "raised"):
        return failure
    said = sentence(failure.message.replace(DEVICE_MISMATCH[2][2], "").rstrip())
    return dataclasses.replace(failure, misconception="model-moved-back", message=(
        f"{said} The error came from moving the model itself off {device} (a Module.to or "
        f".cpu() on the model raised while its parameters were on {device}"
        f"{after_forward(forward, device)}, as your process reported), not from the output: "
        f"predict moved the model back where it came from. {moved_back_advice(device)}"))


def left_behind(failure: Verdict, model: nn.Module, device: torch.device) -> Verdict:
    """A device mismatch names what stayed behind: the batch (``batch-not-moved``), or the
    model, when its parameters are still off ``device`` after the call (``Module.to`` moves
    the caller's model in place, so a predict that moved it leaves it there)."""
    if failure.misconception != "batch-not-moved" or all(
            p.device.type == device.type for p in model.parameters()):
        return failure
    return dataclasses.replace(
        failure, misconception="model-not-moved",
        message=failure.message.replace(DEVICE_MISMATCH[0][2], MODEL_NOT_MOVED))


def tf32_cause(tf32: bool, device: torch.device) -> tuple[str | None, str]:
    """The cause of values off by more than the tolerance on CUDA when the student's process
    had TF32 matmuls on (its inputs rounded to 10 mantissa bits: ~1e-3 relative error)."""
    if not (tf32 and device.type == "cuda"):
        return None, ""
    return ("tf32-enabled", "Your notebook turned on TF32 matmuls (torch.backends.cuda.matmul."
            "allow_tf32 = True or torch.set_float32_matmul_precision('high'/'medium')), which "
            "round float32 products on the GPU to about 3 decimal digits: leave float32 "
            "matmuls at full precision.")


def judge_prediction(got: Any, packed: int, model: nn.Module, expected: torch.Tensor,
                     device: torch.device, tf32: bool = False,
                     forward: tuple[str, ...] | None = None,
                     moves: tuple[tuple[str, str], ...] | None = None) -> Verdict:
    """Type → shape → device → no graph → values (values only on a device that has them).

    ``packed`` (the heard count) only words the message of an answer that requires grad; the
    verdict is the answer's own. ``forward``: where the model's forwards ran, as heard
    (``judge_on_meta``); ``moves``: how the model itself was moved, as heard."""
    shown = f"predict(model, batch, {device})"
    if isinstance(got, torch.Tensor) and got.device.type != device.type:
        return Verdict(False, f"{shown} returned a tensor on {got.device}; expected it on "
                       f"{device}: move the model and the batch there, and return the output "
                       "as it is.", "output-not-on-device", Evidence(got=plain(got)))
    if isinstance(got, torch.Tensor) and got.requires_grad:
        return Verdict(False, f"{shown} recorded a graph ({packed} tensors saved for backward, "
                       f"requires_grad={got.requires_grad}): run the forward inside "
                       "`with torch.no_grad():`; detach() afterwards does not avoid the "
                       "recording.", "graph-recorded", Evidence(got=plain(got)))
    if device.type == "meta" and isinstance(got, torch.Tensor):
        return judge_on_meta(got, model, expected, shown, forward, moves)
    verdict = judge_tensor(got, expected, shown, dtype=expected.dtype, rtol=RTOL, atol=ATOL)
    # a softmax, sigmoid, argmax... of the grader's own output: output-transformed
    verdict = transformed(verdict, got, expected, shown)
    # no guessed cause when the model is in eval mode after the call: check_predict probes
    return with_diagnosis(verdict, lambda: (
        ("eval-missing", in_training(model)) if in_training(model)
        else tf32_cause(tf32, device)))


def _training_layers(model: nn.Module) -> tuple[str, str]:
    """The layers of ``model`` that act otherwise in training mode and are in it (``"1
    (BatchNorm1d), 3 (Dropout)"``) and what that did to the forward; ``("", "")`` for none."""
    kinds = ((nn.modules.dropout._DropoutNd, "dropout zeroed some units"),
             (nn.modules.batchnorm._BatchNorm, "batch normalisation used the batch's own "
                                               "statistics"))
    still = [(name, m) for name, m in model.named_modules() if name and m.training
             and isinstance(m, tuple(kind for kind, _ in kinds))
             and not (isinstance(m, nn.modules.dropout._DropoutNd) and m.p == 0)]
    effects = [effect for kind, effect in kinds if any(isinstance(m, kind) for _, m in still)]
    return (", ".join(f"{name} ({type(m).__name__})" for name, m in still),
            " and ".join(effects))


def in_training(model: nn.Module) -> str:
    """What to tell of a model left (partly) in training mode, or ``""``: the outer flag still
    set, or cleared by hand (``model.training = False`` reaches no layer, red team rt-10),
    or dropout alone put in eval mode."""
    shown, effects = _training_layers(model)
    if model.training:
        effects = effects or "dropout zeroed some units and batch normalisation used the " \
                             "batch's own statistics"
        return (f"The model is still in training mode, so {effects}: call model.eval() before "
                "the forward, with its parentheses (`model.eval` alone names the method and "
                "changes nothing).")
    if not shown:
        return ""
    return (f"The model's own flag says eval mode, but its layers {shown} are still in training "
            f"mode, so {effects}: setting model.training = False, or eval() on some layers, "
            "does not reach the rest. Call model.eval(), which sets every layer's mode, before "
            "the forward.")


def subject(predict: Callable, model: nn.Module, batch: torch.Tensor,
            device: torch.device) -> Subject:
    """What the probes need to explain a wrong ``predict`` (the model as it arrived: training
    mode)."""
    def reference(m: nn.Module, b: torch.Tensor, d: torch.device) -> torch.Tensor:
        return evaluated(m, b)

    def same(got: Any, expected: torch.Tensor) -> bool:
        return judge_tensor(got, expected, "", dtype=expected.dtype, rtol=RTOL, atol=ATOL).ok

    def batch_classes(args: tuple) -> list[InputClass]:
        m, b, d = args
        if b.shape[0] != 1:
            return []
        return [InputClass("batch-of-one", (m, b.repeat(2, 1), d),
                           "Does a batch of one take another path (.squeeze(), a shape test)?")]

    return Subject("predict", predict, (model, batch, device), ("model", "batch", "device"),
                   reference, same, numbers_of,
                   variations={1: lambda b: [b * 2 + 1]}, classes=batch_classes)


def explain_prediction(verdict: Verdict, predict: Callable, model: nn.Module,
                       batch: torch.Tensor, device: torch.device, got: Any,
                       after: nn.Module | None = None) -> Verdict:
    """Probe an unexplained wrong ``predict``. Answers that differ between two calls on copies
    of the same model and batch, and agree with torch seeded alike, come from dropout, the
    model's only random part: the forward ran in training mode, whatever mode it was left in
    (``eval()`` called after the forward), so that is the contract's ``eval-missing``
    (``after``: the caller's model after the call, whose layers may say more)."""
    if device.type == "meta" or verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    probed = explain(verdict, subject(predict, model.train(), batch, device), got)
    if probed.misconception != "probe.nondeterministic":
        return probed
    if after is not None and in_training(after):
        return dataclasses.replace(probed, misconception="eval-missing", message=(
            f"{verdict.message.rstrip()} {in_training(after)}"))
    return dataclasses.replace(probed, misconception="eval-missing", message=(
        f"{verdict.message.rstrip()} Two calls on copies of the same model and batch returned "
        "different outputs, and equal ones with torch's generator seeded alike: dropout, the "
        "model's only random part, was active during the forward, even though the model is in "
        "eval mode after the call. Call model.eval() before the forward, not after it."))


def check_predict(predict: Callable, rng: np.random.Generator, *, moved: bool,
                  points: float = 1.0) -> CheckResult:
    """``predict`` on the grading machine's device (``moved=False``: values against a CPU
    reference) or across a real device change (``moved=True``).

    Args:
        predict: the student's function.
        rng: a generator seeded with the grading seed.
        moved: whether to move from the CPU to another device (CUDA, else meta).
        points: what the check is worth.
    """
    seed = seed_of(rng)
    verdict = PASS
    device = changed_device() if moved else grading_device()
    heard = 0
    # the third model gets a batch of one row (an input class the contract allows), drawn
    # last so that the first two stay those of earlier runs with the same seed
    # the fourth: a float64 model and batch (device_dtype); the fifth, drawn last, a model
    # with one output (device_single)
    for i in range(5):
        state = rng.bit_generator.state  # the model as it arrived, drawn again for the probes
        n_out = 1 if i == 4 else None
        model, batch = draw_model(rng, n_out)
        batch = batch[:1].clone() if i == 2 else batch
        model, batch = in_float64(model, batch) if i == 3 else (model, batch)
        expected = evaluated(model, batch)
        if device.type == "meta":  # the grader's own forward there: its shape and dtype
            expected = on_meta(expected)
        values = kept(model)  # the caller's weights, to be there after the call
        rates, hooks = dropout_rates(model), model_hooks(model)
        got, failure, packed, tf32, forward, moves = run_predict(predict, model, batch,
                                                                 device)
        verdict = failure or judge_prediction(got, packed, model, expected, device, tf32,
                                              forward, moves)
        verdict = rates_kept(verdict, model, rates, device)
        verdict = hooks_kept(verdict, model, hooks, f"predict(model, batch, {device})")
        if moved and device.type != "meta" and verdict.ok:  # meta: judge_on_meta
            verdict = kept_on_device(model, device, moves)
        heard = max(heard, packed)
        verdict = squeezed(verdict, got, expected, RTOL, ATOL)
        if i == 3:
            verdict = cast_model(verdict, model)
            verdict = cast_batch(verdict, predict, lambda: drawn_again(state), batch, device,
                                 RTOL, ATOL, evaluated)
        # the model as it arrived, drawn again (for the probes, within this iteration)
        fresh = (lambda: drawn_again(state).double()) if i == 3 else (
            lambda: drawn_again(state, n_out))
        verdict = data_moved(verdict, predict, fresh, batch, device, run_predict,
                             lambda again, on: judge_prediction(
                                 again.got, again.packed, on, expected, device, again.tf32,
                                 again.forward_devices, again.moves))
        verdict = norm_in_training(verdict, got, model, fresh, batch, RTOL, ATOL)
        verdict = predict_weights(verdict, predict, model, batch, values, fresh, device)
        if not verdict.ok:
            arrived = drawn_again(state, n_out)
            verdict = explain_prediction(verdict, predict, arrived.double() if i == 3
                                         else arrived, batch, device, got, model)
            break
    name = "predict_after_move" if moved else "predict_values"
    result = finish(QUESTION, name, verdict, seed=seed, points=points,
                    passed_message=f"predict was right on {device} for every model and batch it "
                                   "was given.")
    return with_graph_advice(result, heard, device)


def dropout_rates(model: nn.Module) -> dict[str, float]:
    """Each Dropout layer's ``p``, by its name in ``model``."""
    return {name: float(m.p) for name, m in model.named_modules() if isinstance(m, nn.Dropout)}


def rates_kept(verdict: Verdict, model: nn.Module, before: dict[str, float],
               device: torch.device) -> Verdict:
    """``verdict``, failed as ``modified-input`` when the call changed a Dropout layer's ``p``
    on the caller's model (red team rt-5: ``p = 0`` set by hand instead of ``eval()``, the
    model left in training mode, kept 6/6). Its answer is wrong too where the model's batch
    norm ran in training mode: a wrong answer with no other cause than training mode is
    told both."""
    changed = {name: (p, rate) for name, rate in dropout_rates(model).items()
               if (p := before.get(name)) is not None and p != rate}
    if not changed or not (verdict.ok or verdict.misconception in (None, "eval-missing")):
        return verdict
    name, (was, now) = next(iter(changed.items()))
    wrong = "" if verdict.ok else f"{verdict.message.rstrip()} "
    return Verdict(False, f"{wrong}predict(model, batch, {device}) changed the caller's model: "
                   f"its Dropout layer {name} has p={now:g} now (it was {was:g}). predict must "
                   "leave the model's layers as they were: model.eval() turns dropout off for "
                   "the forward without touching p, and puts every other layer in eval mode "
                   "too.", "modified-input", Evidence(inputs={"dropout": dict(before)}))


def with_graph_advice(result: CheckResult, heard: int, device: torch.device) -> CheckResult:
    """A passing ``result`` with the advice a recorded graph deserves, when the worker said
    ``predict`` saved tensors for backward. Advice only: the count comes from the student's
    process, so it may not decide points (a cell can make it say 0, or anything)."""
    if not result.passed or heard <= 0:
        return result
    return dataclasses.replace(result, misconception="graph-recorded", message=(
        f"{result.message} Advice, not scored: predict(model, batch, {device}) recorded a "
        f"graph ({heard} tensors saved for backward, as your process reported): run the "
        "forward inside `with torch.no_grad():`; detach() afterwards does not avoid the "
        "recording."))
