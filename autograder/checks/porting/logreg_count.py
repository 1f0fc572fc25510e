"""q1_logreg: the loss divided by a constant count, not by this X's rows (blind round zh).

The NumPy series writes ``J = (1/m) * sum(...)`` with ``m`` the data cell's row count. Ported
as ``F.binary_cross_entropy_with_logits(z, y, reduction='sum') / m``, that ``m`` resolves to
the notebook's global (200 rows), not ``len(X)``: right on 200 rows, every loss and every step
scaled by ``len(X) / M`` on any other data. A summed loss divided by ``M`` is the mean loss
times ``m / M``: its run is the right run at ``lr * m / M``, each loss times ``m / M``. At the
starting zeros every example's loss is ln 2, so ``M = m ln 2 / losses[0]``; the name is given
when ``M`` is a whole number (neither ``m`` nor 1, ``sum-not-mean``'s) and the replay at that
``M`` gives the student's later losses, or final ``w`` and ``b``, where the right run does not.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import torch

from ..result import Verdict

NAME = "loss-divided-by-wrong-count"
#: How close ``m ln 2 / losses[0]`` must be to a whole number (float32 losses: ~1e-7 relative).
COUNT_RTOL = 1e-4
#: A larger step (M below m) can turn chaotic, where float32 rounding decides the tail: the
#: first losses are then the evidence, as for ``sum-not-mean``.
CHAOTIC_KEEP = 3

Run = Callable[[float], tuple[torch.Tensor, torch.Tensor, list[float]]]
Matches = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], bool]


def fitted_count(first: float, m: int) -> int | None:
    """The whole ``M`` with ``first == m ln 2 / M`` (None: no such count, or m or 1)."""
    if not (math.isfinite(first) and first > 0):
        return None
    count = m * math.log(2) / first
    if not math.isfinite(count):  # a first loss of 1e-310 overflows it (red-team round rt-1)
        return None
    k = round(count)
    if k < 2 or k == m or abs(count - k) > COUNT_RTOL * count:
        return None
    return k


def divided_by_count(target: torch.Tensor, correct: torch.Tensor, X: torch.Tensor, lr: float,
                     steps: int, final: torch.Tensor | None, right_final: torch.Tensor | None,
                     run_at: Run, matches: Matches,
                     contradicted: Callable[[torch.Tensor, torch.Tensor], bool] | None = None
                     ) -> tuple[str, str] | None:
    """``(NAME, advice)`` when the student's ``target`` losses (or ``final`` w and b) are the
    replay of training with the loss divided by a fitted count ``M``; ``run_at(lr)``: the
    grader's right run at another lr (``logreg_runs.reference_run``); ``contradicted(w, b)``:
    whether the replay's final ``w`` and ``b`` are ruled out by what the call returned."""
    m = X.shape[0]
    k = fitted_count(float(target[0]), m) if len(target) == steps else None
    if k is None:
        return None
    factor = m / k
    w, b, losses = run_at(lr * factor)
    if contradicted is not None and contradicted(w, b):
        return None
    replay = torch.tensor(losses, dtype=torch.float64) * factor
    keep = steps if k > m else CHAOTIC_KEEP
    if steps >= 3 and matches(target[:keep], replay[:keep], correct[:keep]):
        return NAME, advice(k, X)
    if final is not None and right_final is not None and k > m:
        replayed = torch.cat([w.reshape(-1), b.reshape(-1)]).double()
        if matches(final, replayed, right_final):
            return NAME, "w and b match " + advice(k, X).removeprefix("The losses match ")
    return None


def advice(k: int, X: torch.Tensor) -> str:
    """What a run whose loss was divided by ``k`` on this ``X`` is told."""
    m, n = X.shape
    source = (f"X.shape[1], the number of columns (n = {n})" if k == n else
              "a count from outside the call: a global from the notebook (its m, or its own "
              "data's X.shape[0]) or a number written into the code")
    return (f"The losses match training with the loss divided by M = {k}, not by the number of "
            f"rows len(X) = {m}: {source}. Every loss and every step is then {m}/{k} times the "
            "right one (right only on data with exactly M rows). Divide the summed loss by "
            "len(X) of the X you are given (X.shape[0]), or use the mean loss "
            "(reduction='mean').")


def confirmed(verdict: Verdict, losses: Any, X: torch.Tensor, steps: int,
              again: Callable[[int, int], tuple[str | None, str] | None],
              unexplained: str) -> Verdict:
    """``verdict`` named ``NAME`` kept only when the student's run on the first two thirds of
    the rows (``again(rows, steps)``: the diagnosis of that run, or None when it failed) is the
    loss divided by the same ``M``: a constant count, not a factor on the mean loss (``loss *
    0.5`` gives ``M = 2m``), else unnamed. A run too short to confirm its ``M`` by the replay
    (under 3 steps), left unnamed, is named when that second run, of 3 steps at least, is."""
    m = X.shape[0]
    first = losses[0] if isinstance(losses, list) and losses else None
    k = fitted_count(float(first), m) if isinstance(first, float) else None
    if verdict.ok or k is None or 2 * m // 3 in (k, m) or not (
            verdict.misconception == NAME or (verdict.misconception is None and steps < 3)):
        return verdict
    found = again(2 * m // 3, max(steps, 3))
    same = found is not None and found[0] == NAME and f"M = {k}," in found[1]
    told = advice(k, X)
    if verdict.misconception == NAME:
        if same:
            return verdict
        message = verdict.message.replace(told, unexplained).replace(
            "w and b match " + told.removeprefix("The losses match "), unexplained)
        return dataclasses.replace(verdict, misconception=None, message=message)
    if not same:
        return verdict
    message = (verdict.message.replace(unexplained, told.replace("The losses match", "The loss "
                                                                 "matches"))
               if unexplained in verdict.message else f"{verdict.message.rstrip()} {told}")
    return dataclasses.replace(verdict, misconception=NAME, message=message)
