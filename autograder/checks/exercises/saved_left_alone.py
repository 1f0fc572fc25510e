"""q2_saved: ``count_saved`` must leave the caller's network and inputs as it found them (no
``requires_grad``, mode, hook or ``.grad`` left set): what a call changed, and what it is told.
"""

from __future__ import annotations

import torch
from torch import nn

from ..probes import changes
from ..result import PASS, Evidence, Verdict
from .saved_backward import ran_backward

#: What count_saved must leave as it found it: the caller's network and inputs.
MODIFIED_HINT = ("count_saved must only count: leave the network and the inputs as they were "
                 "(no requires_grad, mode or hook left set on them).")


def judge_left_alone(net: nn.Module, inputs: torch.Tensor, before: tuple[dict, dict],
                     shown: str) -> Verdict:
    """The caller's network and inputs after one call, against their snapshot before it."""
    changed = changes(before[0], net, "net") + changes(before[1], inputs, "inputs")
    if not changed:
        return PASS
    what = "modified-network" if changes(before[0], net, "net") else "modified-input"
    return Verdict(False, f"{shown} changed what it was given: {'; '.join(changed)}. "
                   f"{ran_backward(changed) or MODIFIED_HINT}", what,
                   Evidence(inputs={"call": shown}, got=changed))
