"""q1_logreg: a run whose ``w`` and ``b`` never moved from the starting zeros
(``params-never-updated``), asked once more to find out why.

The call is made again with the optimizers observed (``call_context(observe_optimizers=True)``,
``worker/arrangements.py``): steps taken by an optimizer built before the call mean one kept
from an earlier call (a module-level variable, a default argument, an attribute), which still
holds that call's ``w`` and ``b`` (``optimizer-kept``). The worker reports those steps, so they
only name a mistake that already cost the points (docs/security.md). With ``steps=1`` the call
is made with ``PROBE_STEPS`` steps instead: ``w`` and ``b`` that are then the grader's after
one update fewer show a loop that skips its last update (``updates-miscounted``).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from ..calling import call_observed
from ..context import call_context
from ..result import Verdict
from .logreg_advice import NEVER_UPDATED_QUESTIONS
from .logreg_diagnosis import MATCH_ATOL, MATCH_RTOL
from .logreg_loops import miscounted_updates
from .logreg_runs import update_path

#: The step count of the second call when the failing one had a single step.
PROBE_STEPS = 3

KEPT = ("Asked again, the optimizer that stepped during the call had been built before it: "
        "one optimizer kept from an earlier "
        "call (a module-level variable, a default argument, an attribute) still holds that "
        "call's w and b, so its step() updates those and never this call's. Build the optimizer "
        "inside train_logreg, over this call's w and b, on every call.")


def explain_stuck(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                  lr: float, steps: int) -> Verdict:
    """``verdict`` (``params-never-updated``) with its cause, when one more call shows it."""
    if verdict.misconception != "params-never-updated":
        return verdict
    asked = PROBE_STEPS if steps == 1 else steps
    with torch.random.fork_rng(devices=[]), call_context(observe_optimizers=True):
        got, observed, failure = call_observed(train_logreg, "train_logreg", X.clone(),
                                               y.clone(), lr=lr, steps=asked)
    if failure is not None:
        return verdict
    if observed.get("optimizer_steps", {}).get("kept", 0) > 0:
        return _named(verdict, "optimizer-kept", KEPT)
    final = _final(got)
    if steps == 1 and final is not None:
        found = miscounted_updates(final, update_path(X, y, lr, asked), asked,
                                   lambda g, r, right: _close(g, r) and not _close(right, r))
        if found is not None:
            return _named(verdict, found[0], f"Asked again with steps={asked}, {found[1]}")
    return verdict


def _final(got: object) -> torch.Tensor | None:
    if not (isinstance(got, (tuple, list)) and len(got) == 3
            and all(isinstance(t, torch.Tensor) for t in got[:2])):
        return None
    return torch.cat([t.detach().cpu().reshape(-1).double() for t in got[:2]])


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    return got.shape == expected.shape and bool(
        ((got - expected).abs() <= MATCH_ATOL + MATCH_RTOL * expected.abs()).all())


def _named(verdict: Verdict, misconception: str, advice: str) -> Verdict:
    """``verdict``'s facts, with the never-updated questions replaced by what was found."""
    message = verdict.message.replace(NEVER_UPDATED_QUESTIONS, advice)
    return dataclasses.replace(verdict, message=message, misconception=misconception)
