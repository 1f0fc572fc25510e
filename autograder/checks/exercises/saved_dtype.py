"""q2_saved: counts kept per architecture and batch shape, blind to the dtype.

``count_saved`` memoised by ``(repr(net), inputs.shape, track)`` (or ``str(net)``, the layer
sizes, the batch's size): ``repr`` of a network shows its layers, not its dtype, so a float64
copy of a float32 network, on a batch of the same shape, gets the float32 counts (the same
number of tensors, half the bytes) (blind round zj). The check's networks are all drawn anew,
so no earlier case shows it: a hidden case, drawn last, asks one of the first two networks in
the other dtype, on a batch of the same shape, right after that network and its own batch, in
the same request (``call_first``, as ``saved_cached`` does). Named ``counts-cached`` when the
answer is the earlier network's counts.
"""

from __future__ import annotations

import copy
from typing import Callable

import numpy as np
import torch
from torch import nn

from ...worker import wire
from ..calling import call
from ..context import call_context
from ..describing import plain
from ..result import PASS, Evidence, Verdict
from .saved_cached import CACHED, count_pair, mode_counts
from .saved_reference import layout_copy, predict


def draw_other_dtype(rng: np.random.Generator, cases: list
                     ) -> tuple[nn.Module, torch.Tensor, nn.Module, torch.Tensor]:
    """One of the first two cases' network and batch, then that network converted to the other
    dtype (float32 <-> float64) with a fresh batch of the same shape in that dtype."""
    net, inputs = cases[int(rng.integers(2))][:2]
    other = torch.float64 if inputs.dtype == torch.float32 else torch.float32
    batch = torch.from_numpy(rng.standard_normal(tuple(inputs.shape))).to(other)
    return net, inputs, copy.deepcopy(net).to(other), batch


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def judge_other_dtype(count_saved: Callable, net: nn.Module, first: torch.Tensor,
                      converted: nn.Module, inputs: torch.Tensor, track: bool,
                      shown: str) -> Verdict:
    """``count_saved(converted, inputs, track)`` asked right after ``count_saved(net, first,
    track)``: the counts must be the converted network's own."""
    request = {"args": [wire.encode(net), wire.encode(layout_copy(first)), wire.encode(track)],
               "same": []}
    with call_context(call_first=request):
        got, failure = call(count_saved, "count_saved", converted, layout_copy(inputs), track)
    if failure is not None:
        return failure
    expected = mode_counts(predict(converted, inputs), track)
    answer = count_pair(got)
    if answer == expected:
        return PASS
    was, now = _name(first.dtype), _name(inputs.dtype)
    evidence = Evidence(inputs={"call": shown}, expected=list(expected), got=plain(got))
    message = (f"{shown} returned {answer if answer else plain(got)} right after a call with "
               f"the same architecture in {was} on a batch of the same shape; expected "
               f"{expected} from the grader's own hook run on this {now} network.")
    earlier = mode_counts(predict(net, first), track)
    if answer != earlier:
        return Verdict(False, message, None if answer else "wrong-type", evidence)
    return Verdict(False, f"{message} These are the {was} network's counts {earlier}, "
                   f"returned again: the answer was kept per network and batch shape, and the "
                   f"cache key (e.g. repr/str of the network, the layer sizes, the input shape) "
                   f"does not see the dtype. A {now} copy of the same layers saves the same "
                   f"tensors with {inputs.element_size()} bytes per element instead of "
                   f"{first.element_size()}. Run the forward and count on every call (or put "
                   "inputs.dtype in the key).", CACHED, evidence)
