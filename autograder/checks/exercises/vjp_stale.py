"""q4_vjp: a leaf kept between calls whose values are never refilled (``stale-leaf-values``).

A leaf made from the first x with a shape and dtype and kept (a dict, a global, a default
argument), its grad cleared or never used (``torch.autograd.grad``) but its values never
replaced by the next x's: every later call with that key returns ``2 * x0 * weights`` with the
first call's x0, right for its weights, wrong for its x. Named by ``vjp_repeat.confirmed``
only when the failing answer and two more calls with fresh inputs all fit one same x0.
"""

from __future__ import annotations

import numpy as np
import torch

from .common import arrays_close, short

STALE = "stale-leaf-values"
HINT = ("The leaf is kept between calls (in a dict, a global or a default argument) and made "
        "from the x of an earlier call with this shape and dtype; its values are never "
        "replaced by the new x, so each call differentiates at that old x: the answer follows "
        "the new weights but not the new x. Make a new leaf from each call's x: "
        "leaf = x.detach().clone().requires_grad_().")


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    scale = float(max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0)))
    return arrays_close(a, b, rtol, atol + rtol * scale)


def stale(failing: np.ndarray, weights: torch.Tensor,
          inputs: list[tuple[torch.Tensor, torch.Tensor]], answers: list[np.ndarray],
          earlier: list[tuple[torch.Tensor, torch.Tensor]], rtol: float,
          atol: float) -> str | None:
    """A sentence when ``failing`` (on ``weights``) and ``answers`` (on ``inputs``, fresh x and
    weights of one shape and dtype, each answer already wrong) are all ``2 * x0 * w`` for one
    same x0 read off the first answer; ``None`` otherwise.

    Args:
        earlier: the check's calls before the failing one with its shape and dtype; an x0
            that is one of their x's is said so.
    """
    (x1, w1), (x2, w2) = inputs
    w1s = w1.detach().double().numpy()
    if not np.all(w1s != 0.0):
        return None
    x0 = answers[0] / (2.0 * w1s)
    if not (_close(answers[1], 2.0 * x0 * w2.detach().double().numpy(), rtol, atol)
            and _close(failing, 2.0 * x0 * weights.detach().double().numpy(), rtol, atol)):
        return None
    if any(_close(x0, xi.detach().double().numpy(), rtol, atol) for xi in (x1, x2)):
        return None
    which = next((f"x0 is the x of the check's call {i + 1} with this shape and dtype"
                  for i, (xe, _) in enumerate(earlier)
                  if _close(x0, xe.detach().double().numpy(), rtol, atol)),
                 "x0 is no x the check gave: one from a call before the check's, such as the "
                 "notebook's own")
    return (f"Two more calls with fresh x and weights of shape {tuple(x1.shape)} returned "
            f"{short(answers[0])} and then {short(answers[1])}: these answers and the failing "
            f"one are each 2 * x0 * weights for the same x0 {short(x0)}, whatever the x given "
            f"({which}). {HINT}")
