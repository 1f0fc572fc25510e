"""q2_microbatch: the stale grad kept in ``w.grad`` and subtracted from the answer.

The contract clears ``w.grad`` when the window starts and returns ``w.grad`` (or a clone). A
function that keeps the stale grad ("don't throw away the caller's gradient"), accumulates the
window on top of it and returns ``w.grad - stale`` answers right to float32 rounding while the
stale grad is small, but leaves ``w.grad`` holding stale + window, and a large stale grad
cancels digits of the answer. Named ``stale-grad-kept`` (the answer that returns stale +
window has the same name) when ``w.grad`` after the call is not the returned gradient but the
stale grad plus it; a ``w.grad`` left as it arrived or cleared to None names nothing here.
"""

from __future__ import annotations

from typing import Any

import torch

from ..result import Verdict
from .common import allclose

NAME = "stale-grad-kept"

ADVICE = ("After the call w.grad held the .grad that w arrived with plus the window's gradient: "
          "the stale grad was kept and subtracted from the answer instead of cleared. "
          "Subtracting loses float32 digits where the stale grad is large, and leaves the stale "
          "grad in w.grad for whoever steps with it. Clear it when the window starts "
          "(w.grad = None), accumulate, and return w.grad (or a clone).")


def stale_kept(verdict: Verdict, got: Any, w: torch.Tensor, stale: torch.Tensor | None,
               rtol: float, atol: float) -> Verdict:
    """``verdict``, failed and named when ``w.grad`` is ``stale + got`` and not ``got``: the
    stale grad kept in ``w.grad`` and taken out of the answer. A named failure stays."""
    grad = w.grad
    if stale is None or not isinstance(got, torch.Tensor) or not isinstance(grad, torch.Tensor) \
            or grad.shape != got.shape or verdict.misconception is not None:
        return verdict
    if allclose(grad, got, rtol, atol) or allclose(stale, torch.zeros_like(stale), rtol, atol) \
            or not allclose(grad.double(), stale.double() + got.double(), rtol, atol):
        return verdict
    said = ("accumulated_grad returned the right gradient here, but not the one left in "
            "w.grad." if verdict.ok else verdict.message.rstrip())
    return Verdict(False, f"{said} {ADVICE}", NAME, verdict.evidence, verdict.traceback)
