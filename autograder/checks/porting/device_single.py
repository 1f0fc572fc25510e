"""q4_device: a one-output model's output squeezed (blind round zr).

``predict`` returns the model's output as it is: a model ending in ``Linear(k, 1)`` gives
``(n, 1)``. A ``predict`` that drops the size-1 dimension (``.squeeze(-1)``, ``.squeeze()``,
``.flatten()``, ``.view(-1)``, ``out[:, 0]``: "one value per row") is right for models with
several outputs, which the other draws are. Last in each ``predict`` check (after every other
draw, which stay the seed's own) the grader therefore draws a model whose last layer has one
output (``one_output``); an answer of shape ``(n,)`` where ``(n, 1)`` is expected, with the
expected values where the device holds any, is ``output-squeezed``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ..result import Verdict
from .common import allclose

NAME = "output-squeezed"

ADVICE = ("Return the model's output as it is: squeeze(-1) drops the output dimension of a "
          "one-output model, (n, 1) becomes (n,).")


def squeezed(verdict: Verdict, got: Any, expected: torch.Tensor, rtol: float,
             atol: float) -> Verdict:
    """``verdict``, named ``output-squeezed`` when it failed on shape and ``got`` is
    ``expected`` (``(n, 1)``) with its last dimension dropped (values compared where the device
    holds them)."""
    if verdict.ok or verdict.misconception != "wrong-shape" or not isinstance(got, torch.Tensor) \
            or expected.shape[-1:] != (1,) or tuple(got.shape) != tuple(expected.shape[:-1]):
        return verdict
    if got.device.type != "meta" and expected.device.type != "meta" and not allclose(
            got.detach().cpu().double(), expected.detach().cpu().double()[..., 0], rtol, atol):
        return verdict
    return dataclasses.replace(verdict, message=f"{verdict.message.rstrip()} {ADVICE}",
                               misconception=NAME)
