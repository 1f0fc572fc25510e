"""q1_logreg: a step scaled by the batch size m.

The NumPy series writes the update as ``w -= lr * dw / m`` with ``dw = X.T @ (p - y)``, a sum
over the examples. Ported literally onto autograd's gradient of the mean loss (which already
has the 1/m), it divides by m a second time: every step is m times too small. The class: the
step of w and b, of w alone or of b alone, divided or multiplied by m (``lr / m``,
``w.grad /= m``...). ``logreg_diagnosis.diagnose`` replays each (``SCALINGS``, in
``logreg_runs``); a name is kept only when the same scaling, by the other m, also gives the
answer on a data set of another m (``confirmed``): a constant that happens to equal the first
m is not m.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

NAME = "update-scaled-by-m"
#: Replay key -> (power of m on w's step, on b's step, which steps).
SCALINGS: dict[str, tuple[int, int, str]] = {
    "step-over-m": (-1, -1, "w's and b's"),
    "w-step-over-m": (-1, 0, "w's"),
    "b-step-over-m": (0, -1, "b's"),
    "step-times-m": (1, 1, "w's and b's"),
    "w-step-times-m": (1, 0, "w's"),
    "b-step-times-m": (0, 1, "b's"),
}
#: The prefixes ``logreg_diagnosis.diagnose`` puts before a replay's advice (its losses, or w
#: and b).
PREFIXES = ("The losses match ", "w and b match ")


def step_factors(mistake: str | None, m: int) -> tuple[float, float] | None:
    """What the replayed ``mistake`` multiplies w's and b's steps by (None: not a scaling)."""
    if mistake not in SCALINGS:
        return None
    w_power, b_power, _ = SCALINGS[mistake]
    return float(m) ** w_power, float(m) ** b_power


def advice(key: str, m: int) -> str:
    """What a run that matches the replay ``key`` on m rows is told."""
    w_power, b_power, which = SCALINGS[key]
    if -1 in (w_power, b_power):
        how = (f"divided by m = {m} (the number of rows), as the NumPy series' w -= lr * dw / m: "
               "divided by m a second time, since the mean loss's gradient already has the 1/m "
               "(w.grad is X.T @ (p - y) / m), so each step is m times too small")
    else:
        how = (f"multiplied by m = {m} (the number of rows): the mean loss's gradient times m is "
               "the summed loss's, so each step is m times too large")
    return (f"The losses match training with {which} step {how}. Update with the gradient "
            "autograd gives: w -= lr * w.grad and b -= lr * b.grad, with no other factor.")


def _told(key: str, m: int) -> str:
    return advice(key, m).removeprefix(PREFIXES[0])


def confirmed(verdict: Any, again: Callable[[torch.Tensor, torch.Tensor], Any],
              diagnose: Callable[..., tuple[str | None, str]], X: torch.Tensor,
              y: torch.Tensor, unexplained: str) -> Any:
    """``verdict`` named ``NAME`` kept when the student's run on the first two thirds of the
    rows (``again(X, y)``: ``(w, b, losses)``, or None when it failed) is the same scaling by
    that m (``diagnose(losses, X, y, params)``); else unnamed, the advice replaced by
    ``unexplained`` (the probes look further)."""
    if verdict.ok or verdict.misconception != NAME:
        return verdict
    m = X.shape[0]
    keys = [k for k in SCALINGS if _told(k, m) in verdict.message]
    m2 = 2 * m // 3
    got = again(X[:m2].clone(), y[:m2].clone()) if keys and m2 < m else None
    if got is not None:
        name, hint = diagnose(got[2], X[:m2], y[:m2], (got[0], got[1]))
        if name == NAME and _told(keys[0], m2) in hint:
            return verdict
    message = verdict.message
    for key in keys:
        for prefix in PREFIXES:
            message = message.replace(prefix + _told(key, m), unexplained)
    return dataclasses.replace(verdict, misconception=None, message=message)
