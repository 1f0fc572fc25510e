"""q4_device: ``predict`` that moves the caller's batch through ``.data`` (blind round zf).

``batch.data = batch.data.to(device)`` ("move the batch in place, like the model") swaps the
storage of the caller's own tensor: on a GPU the caller's batch comes back on the GPU (a
modified input, docs/assignments.md, "Inputs are the caller's"); on the CPU, where
``.to(device)`` returns the tensor itself, nothing shows; on ``meta`` torch refuses the swap
("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have incompatible
tensor type"), so the check heard only that predict raised.

The same error comes from a model moved by hand through its parameters' ``.data``
(``p.data = p.data.to(device)``, legal on a GPU), so the error alone names nothing. Asked again
with the batch already on the device and the model as it arrived, that call raises again
(its parameters still move), while a call whose swap was on the batch now runs (``.to`` of a
tensor already there returns it): only then is it ``modified-input``. When that call raises
too, a third is asked with the model already on the device and the batch as given: a model
moved through ``p.data`` swaps nothing there, so the call runs and is judged as the first
would have been on a GPU (a right one passes: ``meta`` refuses a swap that CUDA takes); a
batch swapped as well still raises, and is ``modified-input``. A failing call only: one or
two more calls, on a path that already lost its points.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch
import torch.nn as nn

from ..result import Verdict
from .device_batch import NAME

#: The start of torch's error for ``x.data = y`` with ``y`` of another device's tensor type.
SET_DATA = "Attempted to call `variable.set_data(tensor)`"

ADVICE = ("predict swaps the data of the caller's batch (batch.data = batch.data.to(device)): "
          "assigning .data changes the caller's tensor in place, so on a GPU it moves the "
          "batch the caller still holds (on the CPU nothing shows: .to returns the tensor "
          "itself), and on the 'meta' device used here torch refuses the swap. predict must "
          "not change its arguments: move a copy and use it, batch = batch.to(device) "
          "(Tensor.to returns a new tensor and leaves the caller's alone); only the model is "
          "moved in place, by model.to(device).")


def data_moved(verdict: Verdict, predict: Callable, arrived: Callable[[], nn.Module],
               batch: torch.Tensor, device: torch.device, call: Callable,
               judge: Callable[..., Verdict]) -> Verdict:
    """``verdict``, or ``modified-input`` when it is torch's set_data error on ``meta`` and
    ``predict`` runs with the batch already on ``device`` (``arrived()``: a fresh copy of the
    model as it arrived; ``call``: ``device_predict.run_predict``), or the verdict of a call
    with the model already there (``judge(prediction, model)``) when only the model's
    parameters were swapped."""
    if (verdict.ok or verdict.misconception != "raised" or device.type != "meta"
            or SET_DATA not in verdict.message):
        return verdict
    got, failure, *_ = call(predict, arrived(), batch.detach().to(device), device)
    if failure is not None and SET_DATA in failure.message:
        return params_moved(verdict, predict, arrived, batch, device, call, judge)
    if failure is not None or not isinstance(got, torch.Tensor):
        return verdict
    return batch_swapped(verdict, device, (
        "the set_data error only while the batch was off the device: with the batch already on "
        "meta the call ran", f"a tensor of shape {tuple(got.shape)}"),
        f"Asked again with the batch already on {device} (the model as it arrived), the same "
        "call ran: the swap was on the batch.")


def params_moved(verdict: Verdict, predict: Callable, arrived: Callable[[], nn.Module],
                 batch: torch.Tensor, device: torch.device, call: Callable,
                 judge: Callable[..., Verdict]) -> Verdict:
    """The call with the model already on ``device`` and the batch as given: judged when it
    runs (the swaps were the model's own), ``modified-input`` when it raises set_data again
    (the batch too), else ``verdict``."""
    model = arrived().to(device)
    prediction = call(predict, model, batch.detach().clone(), device)
    if prediction.failure is None:
        return judge(prediction, model)
    if SET_DATA not in prediction.failure.message:
        return verdict
    return batch_swapped(verdict, device, (
        "the set_data error again with the model already on meta and the batch as given",
        "raised"), f"Asked again with the model already on {device} (a model moved through "
        "p.data = p.data.to(device) swaps nothing there, which a GPU would take), the same "
        "call raised again: the batch was swapped too.")


def batch_swapped(verdict: Verdict, device: torch.device, found: tuple[str, str],
                  said: str) -> Verdict:
    """``verdict`` named ``modified-input``: the batch's data swapped (``found``: what the
    extra call established and returned; ``said``: what the student is told it showed)."""
    established, answer = found
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": established,
        "calls": [{"batch": f"on {device}", "got": answer}]}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{verdict.message.rstrip()} {said} {ADVICE}"))
