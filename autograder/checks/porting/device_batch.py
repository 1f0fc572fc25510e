"""q4_device: ``predict`` must leave the caller's batch as it came (blind round zb).

``batch.requires_grad_(False)``, ``batch.requires_grad = False`` or ``batch.detach_()`` inside
``predict`` ("no graph may flow from the batch") gives the right output, but switches off the
caller's flag on a leaf batch that required grad (and raises for a non-leaf one): a modified
input (docs/assignments.md, "Inputs are the caller's"). ``batch = batch.detach()`` rebinds a
name to a new tensor and leaves the caller's alone; ``torch.no_grad()`` and
``torch.inference_mode()`` stop the graph without touching the batch: both are legal.

The judge holds the batch as the call left it (in a worker: mirrored from ``args_after``).

``batch.to(device).detach_()`` (or ``.requires_grad_(False)`` on it) is the same mistake
through ``Tensor.to``, which returns the caller's own tensor when it is already on ``device``:
named ``in-place-on-to-result`` when the call asked for another device leaves a fresh copy of
the batch as it came (``through_to``).
"""

from __future__ import annotations

from typing import Callable

import torch

from ..probes import side_effects
from ..result import Evidence, Verdict, with_probe

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


THROUGH_TO = "in-place-on-to-result"
#: torch's refusal to flip the flag of a tensor an operation made (on ``meta``: ``.to``'s copy)
NOT_A_LEAF = "only change requires_grad flags of leaf variables"
#: What ``through_to``'s probe saw on the other device, by what the call did there.
SEEN = {"left": "left the batch as it came",
        "refused": "raised torch's refusal to change requires_grad of a tensor that is not a "
                   "leaf, the copy .to made there"}
#: What ``through_to``'s probe establishes, and what to do instead.
THROUGH_TO_HINT = (
    "{asked}, predict {seen}: the in-place call (.detach_(), .requires_grad_(False)) is made on what "
    "batch.to(device) returned, and when the batch is already on that device, Tensor.to "
    "returns the very same tensor, not a copy, so the caller's batch is changed. Keep it out "
    "of place: batch = batch.to(device) and run the model under torch.no_grad() (or "
    ".detach(), which makes a new tensor).")


def through_to(verdict: Verdict, on_device: bool, asked: str,
               elsewhere: Callable[[], tuple[list[str] | None, str]]) -> Verdict:
    """``verdict`` (``modified-input`` on a batch already on the asked device:
    ``on_device``) named ``in-place-on-to-result`` when the same call with the batch off the
    asked device (``asked``, told: another device asked, or the batch on another) changes
    nothing of its batch, or raises ``NOT_A_LEAF`` (``elsewhere``: that call, the changes it
    made to its batch, None when it failed, and the failure's message): the change went
    through the tensor ``.to`` returned, which is the caller's only on its own device."""
    if verdict.misconception != NAME or not on_device:
        return verdict
    changed, failed = elsewhere()
    seen = "left" if changed == [] else "refused" if NOT_A_LEAF in failed else None
    if seen is None:
        return verdict
    probe = {"id": THROUGH_TO, "established": f"{asked}: {SEEN[seen]}", "calls": []}
    told = THROUGH_TO_HINT.format(asked=asked, seen=SEEN[seen])
    return with_probe(verdict, probe, misconception=THROUGH_TO,
                      message=f"{verdict.message.rstrip()} {told}")
