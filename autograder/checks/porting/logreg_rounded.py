"""q1_logreg: losses recorded rounded to a few decimals (``round(loss.item(), 4)``).

The contract's ``losses[k]`` is step ``k``'s loss as computed. A loop that trains right but
records each loss rounded, as the lesson prints them (``round(loss.item(), 4)``, an f-string
read back with ``float``, ``torch.round(loss, decimals=4)``), returns the grader's ``w`` and
``b`` and a trajectory off by up to half a unit in the last kept decimal. Named
(``rounded_losses``) when every loss has ``k`` decimals at most (``k`` in 2..6, the fewest
that fit, to float32 precision for a rounding done on the tensor) and is the grader's own loss
rounded to ``k`` decimals; a loss at a rounding boundary may round either way.
"""

from __future__ import annotations

import torch

NAME = "losses-rounded"
#: The decimals a rounded record is looked for with.
DECIMALS = range(2, 7)
#: A rounding done in float32 (``torch.round`` on the loss) is off its decimal by this much.
FLOAT32_REL = 2.0**-23
#: Losses enough to tell a rounding from a coincidence.
EVIDENCE = 3


def _decimals(target: torch.Tensor) -> int | None:
    """The fewest decimals (in ``DECIMALS``) every value of ``target`` has, or None."""
    slack = FLOAT32_REL * target.abs().clamp(min=1.0)
    for k in DECIMALS:
        if bool(((target - torch.round(target, decimals=k)).abs() <= slack).all()):
            return k
    return None


def rounded_losses(target: torch.Tensor, correct: torch.Tensor, rtol: float, atol: float
                   ) -> tuple[str, str] | None:
    """``(name, advice)`` when the student's losses ``target`` are the grader's ``correct``
    losses rounded to some decimals, and not the right values (within ``rtol``/``atol``)."""
    if len(target) != len(correct) or len(target) < EVIDENCE \
            or not torch.isfinite(target).all():
        return None
    target, correct = target.double(), correct.double()
    if torch.allclose(target, correct, rtol=rtol, atol=atol):
        return None
    k = _decimals(target)
    if k is None:
        return None
    unit, slack = 10.0**-k, FLOAT32_REL * target.abs().clamp(min=1.0)
    tol = rtol * correct.abs() + atol
    off = (target - torch.round(correct, decimals=k)).abs()
    # the student's float32 loss and the grader's float64 one may straddle a boundary
    boundary = ((correct / unit) - (correct / unit).floor() - 0.5).abs() * unit <= tol
    if not bool(((off <= slack) | (boundary & (off <= unit + slack))).all()):
        return None
    err = float((target - correct).abs().max())
    return NAME, (f"Your losses are the grader's per-step losses rounded to {k} decimals (off by "
                  f"up to {err:.2g}): the training is right, only the record is rounded. "
                  "Rounding is for printing: record loss.item() as is, and round where you "
                  f"print (print(round(losses[k], {k})) or f\"{{loss:.{k}f}}\").")
