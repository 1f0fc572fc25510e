"""q4_device, measured through the answer: did ``predict``'s forward run with recording on?

The contract says ``predict`` runs the model "without recording a graph". A forward that
records and a ``detach()`` afterwards return the same values from an ordinary model, so the
test model here ends with a ``RecordingMark`` (``worker/wire/limits.py``): the identity, except
while autograd records a graph through it, when it adds ``RECORDING_MARK`` to every output.
The returned values themselves then say how the forward ran, wherever the student's code runs:
``torch.no_grad()`` and ``torch.inference_mode()`` leave them as the grader's reference,
recording shifts them by the mark. A cell that patches the layer or ``torch.is_grad_enabled``
is tampering in plain sight (docs/security.md), like digging in the stand-ins' closures.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn as nn

from ...worker.wire import RECORDING_MARK, RecordingMark
from ..probes import side_effects
from ..result import PASS, CheckResult, Verdict, finish
from ..seeding import seed_of
from .common import allclose, max_error
from .device import QUESTION, changed_device, draw_model, drawn_again, evaluated, grading_device
from .device_batch import left_unchanged, through_to
from .device_model import flags, flags_kept
from .device_predict import ATOL, RTOL, explain_prediction, judge_prediction, run_predict
from .device_transform import ADVICE, fitting, said


def draw_marked_model(rng: np.random.Generator) -> tuple[nn.Module, torch.Tensor]:
    """``draw_model``'s MLP with dropout, in training mode, ending with a ``RecordingMark``."""
    model, batch = draw_model(rng)
    return nn.Sequential(*model, RecordingMark()).train(), batch


def marked_again(state: dict) -> nn.Module:
    """``draw_marked_model``'s model drawn again from the bit generator's ``state`` before the
    draw (``device.drawn_again``)."""
    return nn.Sequential(*drawn_again(state), RecordingMark()).train()


def recorded(got: object, expected: torch.Tensor) -> bool:
    """Whether ``got`` is the reference shifted by the mark: the forward recorded a graph."""
    return (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and got.device.type != "meta"
            and allclose(got.detach().cpu(), expected + RECORDING_MARK, RTOL, ATOL))


#: What a recording with a batch that requires grad adds to the advice
FROZEN = (", nor do parameters set not to require grad: the batch given here requires grad, "
          "and the graph runs through it")


def judge_recording(got: object, packed: int, model: nn.Module, expected: torch.Tensor,
                    device: torch.device, batch_grad: bool = False) -> Verdict:
    """``judge_prediction``, with an answer shifted by the mark named ``graph-recorded``
    (``batch_grad``: the batch required grad)."""
    if recorded(got, expected):
        shown = f"predict(model, batch, {device})"
        return Verdict(False, f"{shown} returned the model's output plus "
                       f"{RECORDING_MARK:g}, which this test model adds only while autograd "
                       "records a graph through it (largest difference from the output without "
                       f"recording: {max_error(got, expected):.3g}): the forward ran with "
                       "recording on. Run it inside `with torch.no_grad():` (or "
                       "`torch.inference_mode()`); detach() afterwards does not avoid the "
                       f"recording{FROZEN if batch_grad else ''}.", "graph-recorded")
    # a transform of the shifted output (sigmoid, tanh...: not softmax, which a shift leaves
    # alone) is both mistakes at once; one of the unshifted output is judge_prediction's
    both = fitting(got, expected + RECORDING_MARK, unlike=expected)
    if both:
        shown = f"predict(model, batch, {device})"
        return Verdict(False, f"{shown} returned {said(both)}, with output = model(batch) + "
                       f"{RECORDING_MARK:g}: this test model adds {RECORDING_MARK:g} only while "
                       "autograd records a graph through it, so the forward ran with recording "
                       "on. Run it "
                       "inside `with torch.no_grad():` (or `torch.inference_mode()`); detach() "
                       f"afterwards does not avoid the recording{FROZEN if batch_grad else ''}. "
                       "And the output passed through a final transform: " + ADVICE,
                       "graph-recorded")
    return judge_prediction(got, packed, model, expected, device)


def batch_changes(predict: Callable, model: nn.Module, before: dict,
                  device: torch.device) -> tuple[list[str] | None, str]:
    """What ``predict(model, batch, device)`` changed on a fresh batch made from ``before``
    (``side_effects.snapshot`` of the batch as it came), or None when the call failed; and
    the failure's message (``""`` when none)."""
    batch = before["values"].clone().requires_grad_(before["requires_grad"])
    fresh = side_effects.snapshot(batch)
    failure = run_predict(predict, model, batch, device).failure
    if failure is not None:
        return None, failure.message
    return side_effects.changes(fresh, batch, "batch"), ""


def on_device(verdict: Verdict, predict: Callable, model: nn.Module, before: dict,
              device: torch.device) -> Verdict:
    """``verdict`` (every call right, each batch on the CPU) judged once more where ``device``
    is not the CPU: a batch that requires grad, already on ``device``, must come back as it
    came. An in-place call on what ``batch.to(device)`` returned changes it there only (the
    batches on the CPU were copied by ``.to``): ``in-place-on-to-result``. One more call,
    whose answer was judged on the CPU already; a failure of it is the other checks' to tell."""
    if not verdict.ok or device.type == "cpu":
        return verdict
    batch = before["values"].to(device).requires_grad_(before["requires_grad"])
    snapped = side_effects.snapshot(batch)
    if run_predict(predict, model, batch, device).failure is not None:
        return verdict
    shown = f"predict(model, batch on {device}, {device})"
    return through_to(left_unchanged(verdict, shown, snapped, batch), True,
                      f"Called with a batch on the cpu and device={device}", lambda: ([], ""))


def check_predict_no_graph(predict: Callable, rng: np.random.Generator, *,
                           points: float = 1.0) -> CheckResult:
    """``predict`` on the grading machine's device with a model whose output says whether the
    forward recorded a graph: no recording, or points lost as ``graph-recorded``."""
    seed = seed_of(rng)
    device = grading_device()
    verdict, frozen_seen = PASS, PASS
    # the third batch requires grad (drawn last, so that the first two stay those of earlier
    # runs with the same seed): the contract's output requires no grad whatever the batch, so
    # only no_grad or inference_mode, not parameters set not to require grad, stop the
    # recording there
    for i in range(3):
        state = rng.bit_generator.state  # the model as it arrived, drawn again for the probes
        model, batch = draw_marked_model(rng)
        batch.requires_grad_(i == 2)
        expected = evaluated(model, batch)
        before, frozen = side_effects.snapshot(batch), flags(model)
        got, failure, packed, *_ = run_predict(predict, model, batch, device)
        verdict = failure or judge_recording(got, packed, model, expected, device,
                                             before["requires_grad"])
        verdict = left_unchanged(verdict, f"predict(model, batch, {device})", before, batch)
        other = changed_device()
        verdict = through_to(verdict, batch.device == device, f"Asked again on a fresh copy "
                             f"with device={other}, a device the batch is not on",
                             lambda: batch_changes(predict, marked_again(state), before, other))
        # a frozen model is told only when nothing else failed: a predict that freezes it
        # *instead of* no_grad records through the batch that requires grad, and is told that
        kept = flags_kept(verdict, f"predict(model, batch, {device})", frozen, model)
        frozen_seen = kept if frozen_seen.ok else frozen_seen
        if not verdict.ok:
            verdict = explain_prediction(verdict, predict, marked_again(state), batch, device,
                                         got)
            break
    verdict = frozen_seen if verdict.ok else verdict
    verdict = on_device(verdict, predict, marked_again(state), before, device)
    return finish(QUESTION, "predict_no_graph", verdict, seed=seed, points=points,
                  passed_message="predict ran the forward without recording a graph.")
