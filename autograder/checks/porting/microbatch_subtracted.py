"""q2_microbatch: the stale grad still in ``w.grad`` after the call, on top of the answer.

The contract clears ``w.grad`` when the window starts and returns ``w.grad`` (or a clone). A
function that never clears it, accumulates the window on top of the stale grad and takes its
answer from somewhere else (``w.grad - stale``, the ``.grad`` of a clone of ``w`` with
``retain_grad()`` (blind round zzj), ``torch.autograd.grad`` added into ``w.grad`` too, ...)
can answer right, but leaves ``w.grad`` holding stale + window for whoever steps with it.
Named ``stale-grad-kept`` (the answer that returns stale + window has the same name) when
``w.grad`` after the call is not the returned gradient but the stale grad plus it; a ``w.grad``
left as it arrived or cleared to None names nothing here. Only that is established: how the
answer was taken is not, so the message names no one way (no "subtracted").
"""

from __future__ import annotations

from typing import Any

import torch

from ..result import Verdict
from .common import allclose

NAME = "stale-grad-kept"

ADVICE = ("After the call w.grad held the .grad that w arrived with plus the gradient "
          "returned: the stale grad is still in w.grad, for whoever steps an optimizer with it "
          "next, and the answer was not w.grad itself but taken from elsewhere (however it was "
          "taken: the .grad of a copy of w, w.grad with the stale grad taken away, "
          "torch.autograd.grad, ...). Clear it when the window starts (w.grad = None), "
          "accumulate, and return w.grad (or a clone).")
#: Added where the answer also failed: a fact about float32, not a guess at what was done.
CANCELS = (" Taking a large stale grad away from w.grad afterwards would also lose float32 "
           "digits of the answer; clearing first loses none.")


def stale_kept(verdict: Verdict, got: Any, w: torch.Tensor, stale: torch.Tensor | None,
               rtol: float, atol: float) -> Verdict:
    """``verdict``, failed and named when ``w.grad`` is ``stale + got`` and not ``got``: the
    stale grad kept in ``w.grad``, the answer taken from elsewhere. A named failure stays."""
    grad = w.grad
    if stale is None or not isinstance(got, torch.Tensor) or not isinstance(grad, torch.Tensor) \
            or grad.shape != got.shape or verdict.misconception is not None:
        return verdict
    if allclose(grad, got, rtol, atol) or allclose(stale, torch.zeros_like(stale), rtol, atol) \
            or not allclose(grad.double(), stale.double() + got.double(), rtol, atol):
        return verdict
    said = ("accumulated_grad returned the right gradient here, but not the one left in "
            "w.grad." if verdict.ok else verdict.message.rstrip())
    also = "" if verdict.ok else CANCELS
    return Verdict(False, f"{said} {ADVICE}{also}", NAME, verdict.evidence, verdict.traceback)
