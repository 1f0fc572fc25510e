"""q2_saved: a pack hook that counts only contiguous tensors (``if t.is_contiguous()``,
``try: t.view(-1)``), as if a non-contiguous saved tensor were a transposed weight and no
activation (``non-contiguous-left-out``).

A Linear saves ``weight.t()`` for its input's gradient, a view that is contiguous only for a
Linear with one output, and a strided batch is saved as it is: such a filter drops both. On
the check's networks with contiguous batches it gives the counts without the saved weights, and
was told ``weights-left-out``; it is told apart on a network of the grader's own (``NET``, fixed
so that feedback is the same every run) where leaving out the non-contiguous tensors gives
other counts than leaving out the weights, the leaves or both. Named only on the failing path:
a wrong tracked answer, unnamed or named ``weights-left-out``, that is the counts without the
non-contiguous saved tensors on its network, and on ``NET`` (one call) too.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..result import Verdict
from .saved_patterns import EVERY_PACK, LEFT_OUT
from .saved_reference import Predictions, layout_copy, predict

CONTIGUOUS_ONLY = "non-contiguous-left-out"
WEIGHTS = "weights-left-out"
#: The seed of the confirming network's values.
CONFIRM_SEED = 20263
HINT = ("These are the counts without every non-contiguous saved tensor: a filter on "
        "is_contiguous() (or on whether view succeeds) drops each Linear's saved weight.t(), a "
        "transposed view of its weight that is contiguous only for a Linear with one output, "
        "and a strided batch (every other row of a larger tensor), which autograd saves all the "
        "same. A non-contiguous tensor is not a kind of tensor autograd leaves alone: it is "
        "saved and kept for backward like any other.")


def contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """What ``is_contiguous()`` says of a tensor of this shape and stride."""
    if 0 in shape:
        return True
    step = 1
    for n, s in reversed(list(zip(shape, stride))):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def left_out(pred: Predictions) -> tuple[int, int]:
    """The tracked count without the packed tensors that are not contiguous."""
    kept = [(shape, size) for shape, size, _, stride in pred.packed if contiguous(shape, stride)]
    return len(kept), sum(math.prod(shape) * size for shape, size in kept)


def _confirming() -> tuple[nn.Module, torch.Tensor, Predictions]:
    """Linear(3, 4), Tanh, Linear(4, 2), Tanh, Linear(2, 1) on every other row of a batch:
    a non-contiguous weight.t(), a contiguous one (one output) and a strided leaf, so that
    each kind left out gives its own counts."""
    rng = np.random.default_rng(CONFIRM_SEED)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.Tanh(), nn.Linear(2, 1))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    inputs = torch.from_numpy(rng.standard_normal((9, 3))).float()[::2]
    return net, inputs, predict(net, inputs)


def named(verdict: Verdict, count_saved: Callable, pred: Predictions, earlier: list[Predictions],
          got: Any, track: bool) -> Verdict:
    """``verdict`` (a wrong tracked ``got`` on the network ``pred`` predicts, the networks of
    ``earlier`` answered right) named ``CONTIGUOUS_ONLY`` when ``got`` is the counts without the
    non-contiguous saved tensors there, as it is on each earlier network, and one call on
    ``NET`` answers that too; else ``verdict`` as it was."""
    if (verdict.ok or not track or verdict.misconception not in (None, WEIGHTS)
            or not isinstance(got, (tuple, list)) or len(got) != 2):
        return verdict
    try:
        got = tuple(int(v) for v in got)
    except (TypeError, ValueError):
        return verdict
    if got != left_out(pred) or any(left_out(p) != p.tracked for p in earlier):
        return verdict
    net, inputs, other = _confirming()
    answer, failure = call(count_saved, "count_saved", net, layout_copy(inputs), True)
    if failure is not None or not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return verdict
    try:
        answer = tuple(int(v) for v in answer)
    except (TypeError, ValueError):
        return verdict
    if answer != left_out(other):
        return verdict
    weights_hint = dict((name, hint) for name, _, hint in LEFT_OUT)[WEIGHTS]
    base = verdict.message.partition(weights_hint)[0].rstrip()
    return dataclasses.replace(
        verdict, misconception=CONTIGUOUS_ONLY,
        message=(f"{base} {HINT} On a network of the grader's own, Sequential(Linear(3, 4), "
                 f"Tanh(), Linear(4, 2), Tanh(), Linear(2, 1)) on a strided batch "
                 f"{tuple(inputs.shape)} (strides {tuple(inputs.stride())}), it returned "
                 f"{answer}: again without the non-contiguous tensors, not {other.tracked}, "
                 f"nor {other.no_weights} without the weights. {EVERY_PACK}"))
