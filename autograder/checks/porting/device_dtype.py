"""q4_device: ``predict`` that casts the batch (blind round za).

``batch.to(device).float()`` ("models want float32"), ``batch.to(torch.float32)`` or
``batch.type(torch.FloatTensor)`` is right for a float32 model, but a float64 model then gets a
float32 batch and its first Linear raises ("mat1 and mat2 must have the same dtype"). The check
asks last (``check_predict``) about a float64 model with a float64 batch; where that raises for
a dtype, ``predict`` is asked once more, on the float32 model with the same float64 batch: an
answer that casts the batch gives the float32 model's output there (where a predict that only
moves the batch raises), which establishes the cast. Casting the batch to the model's own
parameter dtype passes. On ``meta`` the forward does not check dtypes: nothing shows there.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch
import torch.nn as nn

from ..calling import call
from ..result import Verdict
from .common import allclose, sentence

NAME = "batch-dtype-changed"
#: Words of torch's errors for two dtypes that do not fit (lower case).
DTYPE_WORDS = ("dtype", "scalar type", "double", "float")

ADVICE = ("The model and the batch were float64 here (the float32 ones before passed), and "
          "asked again with a float32 model and the same float64 batch, predict returned the "
          "float32 model's output: it casts the batch to float32 (.float(), "
          ".to(torch.float32), .type(torch.FloatTensor)), which fits only a float32 model. "
          "Move the batch, don't cast it: batch.to(device). The model decides the dtype (if a "
          "batch must be converted, convert it to the model's own, "
          "next(model.parameters()).dtype).")


def in_float64(model: nn.Module, batch: torch.Tensor) -> tuple[nn.Module, torch.Tensor]:
    """The drawn model and batch in float64 (the model converted in place, as ``double()``
    does)."""
    return model.double(), batch.double()


def cast_batch(verdict: Verdict, predict: Callable, model32: Callable[[], nn.Module],
               batch: torch.Tensor, device: torch.device, rtol: float, atol: float,
               evaluated: Callable[[nn.Module, torch.Tensor], torch.Tensor]) -> Verdict:
    """``verdict`` on the float64 problem, named ``batch-dtype-changed`` when it raised for a
    dtype and ``predict`` on the float32 model ``model32()`` draws (the same weights, as drawn
    at first; drawn only here, on the failing path) with the float64 ``batch`` gives that
    model's output on the batch in float32."""
    if verdict.ok or verdict.misconception != "raised" or device.type == "meta" \
            or not any(word in verdict.message.lower() for word in DTYPE_WORDS):
        return verdict
    model = model32()
    expected = evaluated(model, batch.float())
    got, failure = call(predict, "predict", model, batch.clone(), device)
    if not (failure is None and _same(got, expected, rtol, atol)):
        return verdict
    return dataclasses.replace(verdict, misconception=NAME,
                               message=f"{sentence(verdict.message)} {ADVICE}")


def _same(got: Any, expected: torch.Tensor, rtol: float, atol: float) -> bool:
    return (isinstance(got, torch.Tensor) and got.dtype == torch.float32
            and got.shape == expected.shape and got.device.type != "meta"
            and allclose(got, expected, rtol, atol))


MODEL_NAME = "model-dtype-changed"

MODEL_ADVICE = ("The model was float64 here (the float32 ones before passed), and after the call "
                "its parameters were {now}: predict converted the caller's model "
                "(model.to(dtype=...), .float(), .half() convert it in place), so a float64 "
                "batch no longer fits it, and the caller is left with a model of another "
                "dtype. Move the model with model.to(device) only: the model decides the dtype.")


def cast_model(verdict: Verdict, model: nn.Module) -> Verdict:
    """``verdict`` on the float64 problem, failed and named ``model-dtype-changed`` when the
    float64 ``model`` (the caller's, as the call left it) has parameters of another floating
    dtype after the call; only on the failing path, where it costs nothing."""
    if verdict.ok or verdict.misconception == NAME:
        return verdict
    now = sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()
                  if p.dtype != torch.float64 and p.dtype.is_floating_point})
    if not now:
        return verdict
    advice = MODEL_ADVICE.format(now=" and ".join(now))
    return dataclasses.replace(verdict, misconception=MODEL_NAME,
                               message=f"{sentence(verdict.message)} {advice}")
