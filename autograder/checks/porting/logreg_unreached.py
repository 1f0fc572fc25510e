"""q1_logreg: a ``train_logreg`` that raised on a gradient that was None, asked once more to
tell a parameter the loss never reached from an update outside ``no_grad``.

``w = w - lr * w.grad`` outside ``torch.no_grad()`` empties ``.grad`` from the second step
on, so it runs one step without raising. A gradient that is already None at the first update
belongs to a parameter the first backward never reached: one the loss does not depend on, as
``b`` when the logits are ``X @ w`` (the NumPy series had no bias), or one made without
``requires_grad``. The call is made again with ``steps=1`` (unless it had one step already);
raising the same there names ``param-not-in-loss``.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from ..calling import call
from ..result import Verdict
from .logreg_advice import RAISE_HINTS

#: The advice ``RAISE_HINTS`` gives for a None gradient: replaced when the probe names more.
_NONE_HINT = next(advice for needle, _, advice in RAISE_HINTS if needle == "NoneType")
#: Arithmetic on a None gradient (an update), not ``.zero_()`` on one (a clearing).
_NONE_UPDATE = "unsupported operand type(s)"

NOT_IN_LOSS = ("It raises the same with steps=1: a gradient was already None at the first "
               "update, so the first backward never reached that parameter and the loss does "
               "not depend on it. Logits X @ w leave b out that way (the NumPy series had no "
               "bias), as does a b made without requires_grad=True: compute the logits as "
               "X @ w + b, from w and b made with requires_grad=True.")


def explain_none_gradient(verdict: Verdict, train_logreg: Callable, X: torch.Tensor,
                          y: torch.Tensor, lr: float, steps: int) -> Verdict:
    """``verdict`` (an update that met a None gradient) named ``param-not-in-loss`` when the
    first update already met it."""
    if not (verdict.misconception == "update-outside-no-grad" and _NONE_HINT in verdict.message
            and _NONE_UPDATE in verdict.message):
        return verdict
    if steps > 1:
        with torch.random.fork_rng(devices=[]):
            _, failure = call(train_logreg, "train_logreg", X.clone(), y.clone(), lr=lr,
                              steps=1)
        if failure is None or _NONE_UPDATE not in failure.message \
                or "NoneType" not in failure.message:
            return verdict
    message = verdict.message.replace(_NONE_HINT, NOT_IN_LOSS)
    return dataclasses.replace(verdict, message=message, misconception="param-not-in-loss")
