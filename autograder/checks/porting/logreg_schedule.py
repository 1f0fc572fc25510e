"""q1_logreg: a loop that changes after a fixed number of steps (``changed-after-steps``).

A learning-rate schedule (``StepLR``, a decay every k steps, the end of a warm-up) or any other
change keyed on the step's index gives the grader's losses, step for step, until it acts, then
parts from them. Such a run matches every problem shorter than its step and fails only the long
ones (the separable regime's 600-700 steps), where the probes would tell it apart from short
runs alone ("long-run") and ask whether the loop changes once the loss is small. Keyed on the
step, not on the loss, it parts at the same index at another rate: asked again on the same data
with ``lr`` halved (its loss falls more slowly), a change keyed on the loss parts later or not
at all, one keyed on the step parts at the same step. Only on the failing path, only for an
unnamed verdict whose run is the grader's for at least ``FIRST`` steps and has every loss.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..closeness import float_list
from ..result import Verdict
from .logreg_runs import reference_run

NAME = "changed-after-steps"
#: The fewest steps a run must match before it parts (a momentum or an optimizer's own state
#: parts at the second or third loss; those are other mistakes).
FIRST = 5
#: How far a loss may be from the float64 run before it counts as parted: twice the losses'
#: tolerance (a float32 run drifts up to about 5e-5 from it over 500 separable steps).
PART_RTOL, PART_ATOL = 2e-4, 1e-6
#: How many steps apart the two runs may part and count as parting at the same step: the
#: difference grows more slowly at half the rate, so it crosses ``PART_RTOL`` a step or two
#: later; a change keyed on the loss parts tens or hundreds of steps later.
SAME_STEP = 2


def parted_at(losses: list[float], reference: list[float]) -> int | None:
    """The first index where ``losses`` leave ``reference`` (None when they never do)."""
    for k, (got, want) in enumerate(zip(losses, reference)):
        if abs(got - want) > PART_ATOL + PART_RTOL * abs(want):
            return k
    return None


def changed_after_steps(verdict: Verdict, train: Callable[[float], Any], X, y, lr: float,
                        steps: int, got: Any) -> Verdict:
    """``verdict`` named ``NAME`` when ``got``'s losses are the grader's for ``FIRST`` or more
    steps, then part, and ``train(lr / 2)`` (the student's run on the same data at half the
    rate, or None when it failed) parts at the same step, within ``SAME_STEP``; else
    ``verdict`` as it was."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    if not (isinstance(got, (tuple, list)) and len(got) == 3 and float_list(got[2])
            and len(got[2]) == steps):
        return verdict
    k = parted_at(got[2], reference_run(X, y, lr, steps)[2])
    if k is None or k < FIRST:
        return verdict
    again = train(lr / 2)
    if again is None or not float_list(again[2]) or len(again[2]) != steps:
        return verdict
    k2 = parted_at(again[2], reference_run(X, y, lr / 2, steps)[2])
    if k2 is None or abs(k2 - k) > SAME_STEP:
        return verdict
    return dataclasses.replace(
        verdict, misconception=NAME,
        message=(f"{verdict.message} Your losses were the grader's for about the first {k} steps "
                 f"and then parted from them, and at half the rate on the same data they part "
                 f"at the same step: something in the loop changes after a fixed number of "
                 f"steps (a learning-rate schedule such as StepLR, a decay, the end of a "
                 f"warm-up), not when the loss is small. The contract's loop makes the same "
                 f"update, lr times the gradient, on every one of the `steps` steps."))
