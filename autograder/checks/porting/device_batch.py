"""q4_device: ``predict`` must leave the caller's batch as it came (blind round zb).

``batch.requires_grad_(False)``, ``batch.requires_grad = False`` or ``batch.detach_()`` inside
``predict`` ("no graph may flow from the batch") gives the right output, but switches off the
caller's flag on a leaf batch that required grad (and raises for a non-leaf one): a modified
input (docs/assignments.md, "Inputs are the caller's"). ``batch = batch.detach()`` rebinds a
name to a new tensor and leaves the caller's alone; ``torch.no_grad()`` and
``torch.inference_mode()`` stop the graph without touching the batch: both are legal.

The judge holds the batch as the call left it (in a worker: mirrored from ``args_after``).
"""

from __future__ import annotations

import torch

from ..probes import side_effects
from ..result import Evidence, Verdict

NAME = "modified-input"
#: ``side_effects.changes``' phrase for a flipped flag, as the message says it.
FLAG = {"batch.requires_grad became False": "the batch no longer requires grad",
        "batch.requires_grad became True": "the batch now requires grad"}


def left_unchanged(verdict: Verdict, shown: str, before: dict, batch: torch.Tensor) -> Verdict:
    """``verdict`` (an answer already judged right), or ``modified-input`` when the call
    changed the caller's batch (``before``: ``side_effects.snapshot`` of it)."""
    if not verdict.ok:
        return verdict
    found = [FLAG.get(c, c) for c in side_effects.changes(before, batch, "batch")]
    if not found:
        return verdict
    return Verdict(False, f"{shown} changed the caller's batch: {'; '.join(found)} (the output "
                   "you returned is right): predict must not change its arguments. "
                   "batch.requires_grad_(False), batch.requires_grad = False and "
                   "batch.detach_() change the caller's tensor itself (and raise for a batch "
                   "that is not a leaf); no_grad/inference_mode stop the graph without touching "
                   "the batch (or rebind a name of your own: batch = batch.detach()).", NAME,
                   Evidence(inputs={"batch": found}))
