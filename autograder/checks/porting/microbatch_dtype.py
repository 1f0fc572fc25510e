"""q2_microbatch: a gradient buffer made in a fixed dtype (blind round za).

``w.grad = torch.zeros(w.shape)``, an accumulator ``torch.zeros(n)``, or ``.float()`` on the
answer are float32 whatever ``w`` is: right for the float32 problems, but for a float64 ``w``
assigning the buffer raises ("attempting to assign a gradient with dtype float to a tensor
with grad_dtype Double"), and an accumulator or a cast returns float32 values. The check asks
last (``check_accumulated_grad``) about a float64 problem, the same draw in float64; an answer
right on all the float32 ones that raises there for a dtype, or returns the right values in
float32, is named. A buffer made from ``w`` (``torch.zeros_like(w)``, ``w.grad = None``) passes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ..result import Verdict
from .common import allclose, sentence

NAME = "grad-dtype-fixed"
#: Words of torch's errors for two dtypes that do not fit (lower case).
DTYPE_WORDS = ("dtype", "scalar type", "double", "float")

ADVICE = ("The inputs were float64 here (w, X and y; the float32 problems before passed): a "
          "gradient buffer made in a fixed dtype, such as torch.zeros(w.shape) or "
          "torch.zeros(n), is float32 whatever w is, so {what}. The gradient has w's dtype and "
          "device: clear with w.grad = None (backward then makes the buffer) or make it from w, "
          "torch.zeros_like(w), and cast nothing (no .float() on the answer).")


def in_float64(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The drawn problem in float64: a float64 leaf ``w`` (with its stale ``.grad`` in
    float64, when it has one), ``X`` and ``y``."""
    w64 = w.detach().double().requires_grad_()
    if w.grad is not None:
        w64.grad = w.grad.double()
    return w64, X.double(), y.double()


def fixed_dtype(verdict: Verdict, got: Any, expected: torch.Tensor, rtol: float,
                atol: float) -> Verdict:
    """``verdict`` on the float64 problem, named ``grad-dtype-fixed`` when the call raised for
    a dtype (``raised`` naming one) or returned float32 values that are the right gradient
    (``wrong-dtype``); other failures as they are."""
    if verdict.ok:
        return verdict
    if verdict.misconception == "raised" and any(
            word in verdict.message.lower() for word in DTYPE_WORDS):
        what = "meeting a float64 gradient it raised"
    elif (verdict.misconception == "wrong-dtype" and isinstance(got, torch.Tensor)
          and got.dtype == torch.float32 and got.shape == expected.shape
          and allclose(got.double(), expected, rtol, atol)):
        what = "the answer came back in float32 (right values, wrong dtype)"
    else:
        return verdict
    return dataclasses.replace(verdict, misconception=NAME,
                               message=f"{sentence(verdict.message)} "
                               f"{ADVICE.format(what=what)}")
