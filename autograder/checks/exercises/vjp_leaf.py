"""q4_vjp: a leaf copied from x (``x.clone()``, ``torch.empty_like(x).copy_(x)``, ``x * 1``, ...)
then ``requires_grad_()``, without ``detach``.

For an x that does not require grad the copy is a fresh leaf and the answer is right; for an
x that requires grad (a hidden input class) the copy is a non-leaf in x's graph: backward
runs through it into x, so the copy's ``.grad`` is not kept (``None``, with torch's warning)
and the pullback lands in the caller's ``x.grad`` (blind rounds zk, zzj). The message names
the class of copies, not one spelling: only the effect is observed. Named
``leaf-not-detached`` when x requires grad, the answer is ``None``, and x's ``.grad`` gained
exactly the pullback ``2 * x * weights`` in the call.
"""

from __future__ import annotations

import torch

from ..result import Verdict
from .common import arrays_close

NOT_DETACHED = "leaf-not-detached"
#: What a leaf copied from x without detach is told. Only the effect is observed (None, and
#: the pullback in x.grad, after the calls on an x that does not require grad went through),
#: not how the copy was spelled: the class is named, no one spelling as if seen (blind round
#: zzj's ``torch.empty_like(x).copy_(x)`` was told "clone()").
HINT = ("x requires grad, and a copy made from x while x requires grad (x.clone(), copy_(x) "
        "into a new tensor, x * 1, x + 0, x.to(..., copy=True), ...) is recorded in x's "
        "graph: the copy is a non-leaf (its .grad is not kept, so it is None) and backward "
        "runs through it into x: the caller's x.grad got the pullback instead. Detach first, "
        "so that the copy is a leaf of its own: leaf = x.detach().clone().requires_grad_(True).")


def pullback_in_x(got: object, x: torch.Tensor, grad_before: torch.Tensor | None,
                  expected: object, tolerances: dict) -> bool:
    """Whether ``got`` is ``None`` while the caller's ``x`` (requiring grad) had the pullback
    ``expected`` added to its ``.grad`` in the call (from ``grad_before``)."""
    if got is not None or not x.requires_grad or not x.is_leaf or x.grad is None:
        return False
    gained = x.grad.detach().double()
    if grad_before is not None:
        gained = gained - grad_before.detach().double()
    rtol, atol = tolerances.get(x.dtype, tolerances[torch.float32])
    return tuple(gained.shape) == tuple(x.shape) and arrays_close(gained.numpy(), expected,
                                                                  rtol, atol)


def named(verdict: Verdict, got: object, x: torch.Tensor, grad_before: torch.Tensor | None,
          expected: object, tolerances: dict) -> Verdict:
    """``verdict`` named ``leaf-not-detached`` where ``pullback_in_x`` holds; else as it is."""
    if verdict.ok or verdict.misconception not in (None, "wrong-type") or not pullback_in_x(
            got, x, grad_before, expected, tolerances):
        return verdict
    return Verdict(False, f"{verdict.message} {HINT}", NOT_DETACHED, verdict.evidence,
                   verdict.traceback)
