"""q2_saved: what an answer must be (two ints) and what the probes need to explain a wrong
``count_saved`` (``subject``: the grader's reference, how two answers compare, and the input
classes a probe can step out of: a batch of one, a batch that requires grad, a strided view,
the other dtype)."""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
from torch import nn

from ..describing import describe
from ..probes import InputClass, Subject
from .common import is_int
from .saved_reference import predict


def pair_problem(got: Any) -> str | None:
    """Why ``got`` is not ``(count, bytes)`` as two ints; ``None`` when it is."""
    if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"returned {describe(got)}; expected a tuple of two ints (pack calls, bytes)."
    if not all(is_int(v) for v in got):
        return (f"returned {describe(list(got))}; both entries must be Python ints: the number "
                "of pack calls and the sum of numel() * element_size().")
    return None


def _reference(net: nn.Module, inputs: torch.Tensor, track: bool) -> tuple[int, int]:
    pred = predict(net, inputs)
    return pred.tracked if track else pred.untracked


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(net, inputs, track)`` a probe can step out of."""
    net, inputs, track = args
    classes = []
    if inputs.shape[0] == 1:
        classes.append(InputClass("batch-of-one", (net, inputs.repeat(2, 1), track),
                                  "Does a batch of one take another path (.squeeze(), a shape "
                                  "test)?"))
    if inputs.requires_grad:
        classes.append(InputClass("requires-grad", (net, inputs.detach(), track),
                                  "Does an input that requires grad change what is counted?"))
    if not inputs.is_contiguous():
        classes.append(InputClass("strided-view", (net, inputs.contiguous(), track),
                                  "Does a batch that is a view of a larger tensor (every other "
                                  "row) change what is counted?"))
    other = torch.float32 if inputs.dtype == torch.float64 else torch.float64
    classes.append(InputClass(str(inputs.dtype).replace("torch.", ""),
                              (copy.deepcopy(net).to(other), inputs.detach().to(other)
                               .requires_grad_(inputs.requires_grad), track),
                              "Does the count assume a dtype (a fixed number of bytes)?"))
    return classes


def subject(count_saved: Callable, net: nn.Module, inputs: torch.Tensor, track: bool) -> Subject:
    """What the probes need to explain a wrong ``count_saved``."""
    def same(got: Any, expected: Any) -> bool:
        return pair_problem(got) is None and tuple(int(v) for v in got) == tuple(expected)

    def numbers(x: Any) -> list[float] | None:
        return None if pair_problem(x) else [float(v) for v in x]

    return Subject("count_saved", count_saved, (net, inputs, track), ("net", "inputs", "track"),
                   _reference, same, numbers,
                   variations={1: lambda x: [torch.cat([x.detach(), x.detach()])
                                             .requires_grad_(x.requires_grad)]},
                   classes=input_classes)
