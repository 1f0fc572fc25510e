"""q1_logreg: ``logreg_grads`` computed with autograd, which the contract rules out.

The contract asks for the gradient "in closed form, without autograd". An answer that
differentiates the loss with autograd instead (``torch.autograd.grad`` or ``backward`` on copies
of ``w`` and ``b``) gives the right values, so its values alone cannot tell (red team rt-11).
Asked once more under ``torch.inference_mode()`` (the worker's ``inference_mode``
arrangement), a closed form computes as usual, while autograd records nothing there, so a
gradient taken with it raises (or comes back empty); ``enable_grad()`` does not lift inference
mode. ``torch.func.grad``, whose transforms do not go through the recorded graph, still
passes: it is not caught here.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..context import call_context
from ..result import Evidence, Verdict
from .common import call_named

NAME = "autograd-used"
ADVICE = ("logreg_grads runs autograd (backward or torch.autograd.grad), which the contract "
          "rules out there, even as a check beside a closed form: it asks for the closed form, "
          "the point of porting the NumPy code. Compute X.T @ (sigmoid(X @ w + b) - y) / m for "
          "w and the mean residual for b with plain tensor operations: they need no graph.")


def without_autograd(verdict: Verdict, logreg_grads: Callable, at: tuple[torch.Tensor, ...],
                     judge: Callable[[Any], Verdict]) -> Verdict:
    """``verdict`` (right so far), failed as ``autograd-used`` when ``logreg_grads`` at ``at =
    (X, y, w, b)`` raises, or answers other than ``judge`` accepts, under inference mode."""
    if not verdict.ok:
        return verdict
    with call_context(inference_mode=True):
        got, failure = call_named(logreg_grads, "logreg_grads", (),
                                  *(t.clone() for t in at))
    if failure is None and judge(got).ok:
        return verdict
    first = failure.message.split("\n")[0] if failure is not None else ""
    what = ("it " + first[first.index(" raised ") + 1:] if " raised " in first
            else "it failed" if failure is not None else "it gave other values")
    return Verdict(False, "logreg_grads is right with autograd on, but asked again at the same "
                   "point under torch.inference_mode(), where a closed form computes as usual "
                   f"and autograd records nothing, {what.rstrip('.')}. {ADVICE}", NAME,
                   Evidence({"inference_mode": True}, None, None))
