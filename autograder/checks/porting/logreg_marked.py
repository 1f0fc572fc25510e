"""q1_logreg: the caller's data made to require grad (blind round za).

``X.requires_grad_()`` (or ``X.requires_grad = True``, or the same on ``y``) inside
``train_logreg`` or ``logreg_grads`` leaves the values right, since autograd follows the data
too, but the caller's tensor comes back requiring grad and carrying a ``.grad`` that every
backward through it added to: a modified input (docs/assignments.md, "Inputs are the
caller's"). A copy of the student's own (``X.detach().requires_grad_()``,
``X.clone().requires_grad_()``) leaves the caller's tensor alone and is legal.

The checks hand over tensors that arrive without ``requires_grad`` and without a ``.grad``;
after the call the judge holds their state as the call left it (in a worker: mirrored from
the worker's ``args_after``, ``running/judge/remote.py``).
"""

from __future__ import annotations

from typing import Mapping

import torch

from ..result import Evidence, Verdict

NAME = "modified-input"


def marked(given: Mapping[str, torch.Tensor]) -> dict[str, list[str]]:
    """For each data tensor in ``given`` (name -> the tensor handed over, which arrived without
    ``requires_grad`` and ``.grad``), what the call left on it: ``"requires grad"``, ``"a
    .grad"``; only those the call marked."""
    out = {}
    for name, t in given.items():
        if not isinstance(t, torch.Tensor):
            continue
        left = []
        if t.requires_grad:
            left.append("requires grad")
        if t.is_leaf and t.grad is not None:
            left.append("a .grad")
        if left:
            out[name] = left
    return out


def told(name: str, left: list[str]) -> str:
    """``X now requires grad and carries a .grad``, or the one of the two that holds."""
    parts = []
    if "requires grad" in left:
        parts.append("now requires grad")
    if "a .grad" in left:
        parts.append("carries a .grad" if parts else "now carries a .grad")
    return f"{name} {' and '.join(parts)}"


def left_marked(verdict: Verdict, shown: str, given: Mapping[str, torch.Tensor]) -> Verdict:
    """``verdict`` (an answer already judged right), or ``modified-input`` when the call left
    one of the caller's data tensors requiring grad or carrying a ``.grad``."""
    if not verdict.ok:
        return verdict
    found = marked(given)
    if not found:
        return verdict
    what = "; ".join(told(name, left) for name, left in found.items())
    return Verdict(False, f"{shown} changed the caller's data: {what} (the values you returned "
                   "are right). requires_grad_() marks the tensor itself, not a copy, so the "
                   "caller's tensor is changed and every backward through it adds into its "
                   ".grad. Only the parameters are learned: mark w and b, not the data; X and y "
                   "are constants of the loss and need no gradient. If you want a tensor of "
                   "your own that requires grad, make a copy first "
                   "(X.detach().clone().requires_grad_()).", NAME,
                   Evidence(inputs={name: left for name, left in found.items()}))
