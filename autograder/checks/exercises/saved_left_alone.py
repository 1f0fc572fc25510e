"""q2_saved: ``count_saved`` must leave the caller's network and inputs as it found them (no
``requires_grad``, mode, hook or ``.grad`` left set, no dtype changed): what a call changed, and
what it is told.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from ..probes import changes
from ..result import PASS, Evidence, Verdict
from .saved_backward import ran_backward

#: What count_saved must leave as it found it: the caller's network and inputs.
MODIFIED_HINT = ("count_saved must only count: leave the network and the inputs as they were "
                 "(no requires_grad, mode or hook left set on them).")
#: A parameter's dtype changed by the call (blind round zr: ``net = net.float()``).
_RETYPED = re.compile(r"^net\.[\w.]+ became \w+ \(it was \w+\)$")
RETYPED_HINT = ("Module.float(), .double() and .to(dtype) convert the caller's network in place "
                "(net = net.float() makes no copy): the network stays converted after the "
                "call, and the bytes counted are those of the other dtype. To count another "
                "dtype, work on a copy (copy.deepcopy(net)); better, do not convert at all: "
                "count the forward as it runs, in the dtype it was given.")


def _hint(changed: list[str]) -> str:
    if any(_RETYPED.match(c) for c in changed):
        return RETYPED_HINT
    return ran_backward(changed) or MODIFIED_HINT


def judge_left_alone(net: nn.Module, inputs: torch.Tensor, before: tuple[dict, dict],
                     shown: str) -> Verdict:
    """The caller's network and inputs after one call, against their snapshot before it."""
    changed = changes(before[0], net, "net") + changes(before[1], inputs, "inputs")
    if not changed:
        return PASS
    what = "modified-network" if changes(before[0], net, "net") else "modified-input"
    return Verdict(False, f"{shown} changed what it was given: {'; '.join(changed)}. "
                   f"{_hint(changed)}", what,
                   Evidence(inputs={"call": shown}, got=changed))
