"""q1_logreg: a hand-written logistic loss that is wrong for some logits or labels
(``wrong-logistic-loss``, q2's class: ``logistic_forms``, ``microbatch_lossform``).

A ``train_logreg`` whose loss is one of ``logistic_forms.FORMS`` (the stable form without its
abs, the labels ignored, the ±1-label form given 0/1 labels, the sigmoid applied twice...)
trains the grader's loop on another loss: the grader replays each form as a mistake of its own
run (``logreg_runs``: the same float64 trainer, the loss the mean of the form's per-row loss).
The first step's logits are all exactly 0 (``w`` and ``b`` start at zeros), where the stable
form's ``max(z, 0)`` has the slope its spelling gives it (``clamp(min=0)`` 1, ``relu`` or
``where(z > 0, ...)`` 0, ``torch.maximum`` 0.5), so the abs-dropped form is replayed with each.
An unnamed failure is named when the student's losses and final ``w`` and ``b`` (each that is
at hand) match one form's replay, ten times nearer it than the right run, where the replay is
not the right run (the form acts on these rows), and no other form fits. The mirror forms
(the labels ignored, the label term dropped) give the same losses with ``w`` and ``b``
negated: told apart by ``w`` and ``b`` only. Only a failing unnamed answer gets here; the
replays are the grader's own, no call is made.
"""

from __future__ import annotations

from typing import Any

import torch

from ..closeness import float_list
from ..result import Verdict, with_probe
from .common import allclose
from .logistic_forms import ADVICE, FORMS, NAME, told
from .logreg_diagnosis import ATOL, RTOL
from .logreg_epsilon import epsilon_in_log
from .logreg_runs import form_mistake, reference_run

#: The replays: each form, and the abs-dropped form's max(z, 0) with relu's and maximum's slope
REPLAYS = [*((key, None) for key in FORMS), ("abs-dropped", 0.0), ("abs-dropped", 0.5)]


def _fits(got: torch.Tensor, replay: torch.Tensor, right: torch.Tensor, atol: float) -> bool:
    """``got`` is the finite ``replay``, which the right run is not, ten times nearer it than
    the right run is."""
    if got.shape != replay.shape or not bool(torch.isfinite(replay).all()) \
            or allclose(right, replay, RTOL, atol):
        return False
    apart = float((replay - right).abs().max())
    return allclose(got, replay, RTOL, atol) and float((got - replay).abs().max()) < apart / 10


def _vector(w: Any, b: Any) -> torch.Tensor | None:
    if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None
    return torch.cat([w.detach().cpu().reshape(-1), b.detach().cpu().reshape(-1)]).double()


def loss_form(verdict: Verdict, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
              got: Any) -> Verdict:
    """``verdict``, named ``wrong-logistic-loss`` when it fails unnamed and the answer ``got``
    (``(w, b, losses)`` on ``X``, ``y``, ``lr``, ``steps``) is one form's replay alone."""
    if verdict.ok or verdict.misconception is not None \
            or not (isinstance(got, (tuple, list)) and len(got) == 3):
        return verdict
    w, b, losses = got
    target = (torch.tensor(losses, dtype=torch.float64)
              if float_list(losses) and len(losses) == steps else None)
    final = _vector(w, b)
    if final is not None and final.numel() != X.shape[1] + 1:
        final = None
    if target is None and final is None:
        return verdict
    w_right, b_right, right = reference_run(X, y, lr, steps)
    right_final = torch.cat([w_right, b_right]).double()
    right_losses = torch.tensor(right, dtype=torch.float64)
    # w and b held as judge_params holds them: float32 drift at the run's scale
    final_atol = max(ATOL, RTOL * float(right_final.abs().max()))
    found: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for key, kink in REPLAYS:
        w_f, b_f, replay = reference_run(X, y, lr, steps, form_mistake(key, kink))
        replay_final = torch.cat([w_f, b_f]).double()
        by_losses = target is None or _fits(target, torch.tensor(replay, dtype=torch.float64),
                                            right_losses, ATOL)
        by_final = final is None or _fits(final, replay_final, right_final,
                                          max(final_atol, RTOL * float(replay_final.abs().max())))
        if by_losses and by_final:
            found.setdefault(key, (w_f, b_f))
    if len(found) != 1:  # no form of logistic_forms: an epsilon inside the log?
        return epsilon_in_log(verdict, X, y, lr, steps, got) if not found else verdict
    key, (w_f, b_f) = found.popitem()
    shown = " and ".join(what for what, there in (("the losses", target is not None),
                                                   ("the final w and b", final is not None))
                         if there)
    X1 = torch.cat([X.detach().double(), torch.ones(X.shape[0], 1, dtype=torch.float64)], 1)
    return with_probe(verdict, {
        "id": NAME, "established": f"{shown} of the grader's run with the loss form {key}, "
                                   "replayed on the same data",
        "calls": []}, misconception=NAME, message=(
        f"{verdict.message.rstrip()} Each update follows a hand-written loss, not the binary "
        f"cross-entropy with logits: {shown} match the grader's run on this data with the mean "
        f"of that loss, and not its right run. {told(key, torch.cat([w_f, b_f]), X1, y)} "
        f"(The rows and logits are those of that run's final w and b.) {ADVICE}"))
