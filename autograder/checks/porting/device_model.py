"""q4_device: ``predict`` must leave the caller's model's ``requires_grad`` flags as they came
(blind round zg).

``model.requires_grad_(False)``, ``p.requires_grad = False`` or ``p.requires_grad_(False)``
over the parameters ("no grads needed for inference") gives the right output, but the caller's
model comes back frozen: training it afterwards computes no gradient for those parameters and
an optimizer steps nothing. The contract lets ``predict`` move the model (``model.to``) and put
it in eval mode, not switch off tracking on it (docs/assignments.md q4): a modified input.
``torch.no_grad()`` and ``torch.inference_mode()`` stop the graph without touching the model,
and a predict that restores the flags it changed (try/finally) leaves them as they were.

The judge holds the model as the call left it (in a worker: each parameter's flag mirrored
from ``args_after``, ``running/judge/remote.py``).
"""

from __future__ import annotations

import torch.nn as nn

from ..result import Evidence, Verdict
from .device_batch import NAME


def flags(model: nn.Module) -> dict[str, bool]:
    """Each parameter's ``requires_grad``, by name."""
    return {name: p.requires_grad for name, p in model.named_parameters()}


def flags_kept(verdict: Verdict, shown: str, before: dict[str, bool],
               model: nn.Module) -> Verdict:
    """``verdict`` (an answer already judged right), or ``modified-input`` when the call
    switched off the ``requires_grad`` of parameters of the caller's model (``before``:
    ``flags`` of it before the call)."""
    if not verdict.ok:
        return verdict
    after = flags(model)
    off = [n for n, flag in before.items() if flag and after.get(n) is False]
    if not off:
        return verdict
    which = ("every parameter" if len(off) == len(before)
             else f"{len(off)} of its {len(before)} parameters ({', '.join(off)})")
    return Verdict(False, f"{shown} set the model's parameters to requires_grad=False "
                   f"({which}; the output you returned is right): the caller's model comes "
                   "back frozen, so training it afterwards computes no gradient for them and "
                   "an optimizer steps nothing. predict may move the model (model.to) and put "
                   "it in eval mode, but must leave its parameters' requires_grad as they "
                   "were: use torch.no_grad()/inference_mode, which stop the graph without "
                   "touching the model.", NAME, Evidence(inputs={"model": off}))
