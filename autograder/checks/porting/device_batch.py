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

from typing import NamedTuple

import torch

from ..result import Evidence, Verdict

NAME = "modified-input"


class BatchState(NamedTuple):
    """What the caller can see of a batch: its flag, values and ``.grad``."""

    requires_grad: bool
    values: torch.Tensor
    grad: torch.Tensor | None


def state_of(batch: torch.Tensor) -> BatchState:
    """The batch's state, copied (taken before the call)."""
    grad = batch.grad if batch.is_leaf else None
    return BatchState(batch.requires_grad, batch.detach().clone(),
                      None if grad is None else grad.detach().clone())


def changes(before: BatchState, batch: torch.Tensor) -> list[str]:
    """What the call changed of the caller's ``batch``, in words (nothing: ``[]``)."""
    after = state_of(batch)
    found = []
    if before.requires_grad and not after.requires_grad:
        found.append("the batch no longer requires grad")
    elif after.requires_grad and not before.requires_grad:
        found.append("the batch now requires grad")
    if (after.values.shape != before.values.shape or after.values.dtype != before.values.dtype
            or not torch.equal(after.values, before.values)):
        found.append("the batch's values changed")
    if (before.grad is None) != (after.grad is None) or (
            before.grad is not None and not torch.equal(before.grad, after.grad)):
        found.append("the batch's .grad changed")
    return found


def left_unchanged(verdict: Verdict, shown: str, before: BatchState,
                   batch: torch.Tensor) -> Verdict:
    """``verdict`` (an answer already judged right), or ``modified-input`` when the call
    changed the caller's batch."""
    if not verdict.ok:
        return verdict
    found = changes(before, batch)
    if not found:
        return verdict
    return Verdict(False, f"{shown} changed the caller's batch: {'; '.join(found)} (the output "
                   "you returned is right): predict must not change its arguments. "
                   "batch.requires_grad_(False), batch.requires_grad = False and "
                   "batch.detach_() change the caller's tensor itself (and raise for a batch "
                   "that is not a leaf); no_grad/inference_mode stop the graph without touching "
                   "the batch (or rebind a name of your own: batch = batch.detach()).", NAME,
                   Evidence(inputs={"batch": found}))
