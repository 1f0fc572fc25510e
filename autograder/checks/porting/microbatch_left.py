"""q2_microbatch: the stale grad left in ``w.grad`` (blind round zr).

The contract's window clears ``w.grad`` when it starts and accumulates into it: after the
call ``w.grad`` holds the gradient returned. A function that sums ``torch.autograd.grad``'s
results in an accumulator of its own (or works on a detached copy of ``w``) returns the right
gradient but never touches ``w.grad``: a stale ``.grad`` on arrival is still there after the
call, and a caller that steps an optimizer next steps with it. Named ``stale-grad-left`` on
the stale-grad problems when ``w.grad`` after the call is the stale grad as it arrived (and
that is not the answer). A ``w.grad`` cleared to None, or filled with the answer, names
nothing here; neither does an answer that already failed with a name.
"""

from __future__ import annotations

from typing import Any

import torch

from ..result import Verdict
from .common import allclose

NAME = "stale-grad-left"

ADVICE = ("The window clears w.grad and accumulates into it: a caller that steps an optimizer "
          "after the call uses w.grad, which here still holds the gradient from before. Use "
          "backward() (which accumulates into w.grad) after clearing it (w.grad = None), or "
          "copy the result into w.grad.")


def stale_left(verdict: Verdict, got: Any, w: torch.Tensor, stale: torch.Tensor | None,
               rtol: float, atol: float) -> Verdict:
    """``verdict``, failed and named when ``w.grad`` after the call is still ``stale`` (the
    grad ``w`` arrived with) and not the returned ``got``. A named failure stays."""
    grad = w.grad
    if stale is None or not isinstance(grad, torch.Tensor) or grad.shape != stale.shape \
            or verdict.misconception is not None:
        return verdict
    if not torch.equal(grad.detach().cpu(), stale.detach().cpu()) or (
            isinstance(got, torch.Tensor) and got.shape == grad.shape
            and allclose(grad, got, rtol, atol)):
        return verdict
    said = ("accumulated_grad returned the right gradient, but w.grad after the call is "
            "the stale .grad w arrived with." if verdict.ok else
            f"{verdict.message.rstrip()} Also, w.grad after the call is the stale .grad w "
            "arrived with.")
    return Verdict(False, f"{said} {ADVICE}", NAME, verdict.evidence, verdict.traceback)
