"""q1_logreg: what a training loop trains on and how often it updates, as
``logreg_diagnosis.diagnose`` replays them.

- Features rescaled inside ``train_logreg`` (standardised, centred, min-max...): the grader
  trains on the same transform of ``X`` (``rescaled``); losses or final ``w`` and ``b`` that
  match one name it (``features-rescaled``). The contract trains on ``X`` as given.
- A count of updates off by a few (a break before the last step's update, ``range(steps - 1)``,
  an update after the loop): the grader's parameters after every update up to ``steps +
  SLACK`` (``logreg_runs.update_path``); final ``w`` and ``b`` equal to those after another
  count name it (``updates-miscounted``), and so do losses that are the grader's first few
  (``steps-miscounted``).
"""

from __future__ import annotations

from typing import Callable

import torch

#: How far from ``steps`` a count of updates or losses is recognised as miscounted.
SLACK = 3

#: Transform name -> (how it is told to the student, the transform of X, float64).
RESCALINGS: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "standardised": ("standardised ((X - mean) / std per column)",
                     lambda X: (X - X.mean(0)) / X.std(0)),
    "standardised-population": ("standardised ((X - mean) / std per column, the population "
                                "std)", lambda X: (X - X.mean(0)) / X.std(0, correction=0)),
    "centred": ("centred (the column means subtracted)", lambda X: X - X.mean(0)),
    "min-max": ("min-max scaled ((X - min) / (max - min) per column)",
                lambda X: (X - X.amin(0)) / (X.amax(0) - X.amin(0))),
    "std-scaled": ("divided by each column's std", lambda X: X / X.std(0)),
    "max-abs": ("divided by each column's largest absolute value",
                lambda X: X / X.abs().amax(0)),
}


def rescaled(X: torch.Tensor, name: str | None) -> torch.Tensor:
    """``X`` as the replayed mistake ``name`` trains on it (unchanged for other names)."""
    return RESCALINGS[name][1](X) if name in RESCALINGS else X


def rescaled_advice(name: str) -> str:
    """What features rescaled as ``name`` are told (``MISTAKES``' form: "The losses match ...")."""
    return (f"The losses match training on X {RESCALINGS[name][0]} inside train_logreg: w and b "
            "then fit those rescaled features, not the X you were given, so X @ w + b on the "
            "caller's X is wrong. Train on X exactly as it arrives: the contract leaves any "
            "rescaling to the caller, before the call.")


def miscounted_updates(final: torch.Tensor, path: list[torch.Tensor], steps: int,
                       matches: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], bool],
                       fewer: int = SLACK) -> tuple[str, str] | None:
    """Final ``w`` and ``b`` (one vector) that are the grader's after a count of updates other
    than ``steps`` (``path[k]``: after ``k`` updates; ``matches(got, replay, right)``), at most
    ``fewer`` short: beside all ``steps`` of the grader's losses only the last update can have
    been skipped (the last loss was taken after all the others), so ``1`` there; an earlier
    iterate is ``logreg_not_final``'s."""
    for offset in (-1, 1, -2, 2, -3, 3):
        count = steps + offset
        if offset < -fewer:
            continue
        if 1 <= count < len(path) and matches(final, path[count], path[steps]):
            return "updates-miscounted", _count_advice(count, steps)
    return None


def _count_advice(count: int, steps: int) -> str:
    off = abs(count - steps)
    updates = "update" if off == 1 else f"{off} updates"
    if count < steps:
        how = (f"the loop skipped its last {updates} (a break before the final step's update, "
               "or range(steps - 1)), so they lag behind the losses it recorded")
    else:
        how = (f"the loop made {updates} more than asked (range(steps + 1), or an update after "
               "the loop)")
    return (f"w and b are the grader's after {count} updates, not the {steps} asked for: {how}. "
            "Each of the `steps` iterations records its loss, then does backward and one update: "
            "exactly `steps` updates.")


def miscounted_losses(losses: torch.Tensor, first: Callable[[int], list[float]], steps: int,
                      close: Callable[[torch.Tensor, torch.Tensor], bool]
                      ) -> tuple[str, str] | None:
    """Losses of another length that are the grader's first ``len(losses)`` losses
    (``first(n)``): the loop ran that many iterations."""
    count = len(losses)
    if not 1 <= abs(count - steps) <= SLACK or count < 1:
        return None
    if not close(losses, torch.tensor(first(count), dtype=torch.float64)):
        return None
    fix = "range(steps - 1)" if count < steps else "range(steps + 1)"
    return "steps-miscounted", (f"Your {count} losses are the grader's first {count}: the loop "
                                f"ran {count} iterations, not steps = {steps} (as {fix} does). "
                                "Loop `for _ in range(steps)`: one loss and one update each.")
