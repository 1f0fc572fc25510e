"""q1_logreg: which known mistake reproduces a wrong training run (``diagnose``), and the
tolerances the student's float32 run is held to against the grader's float64 one.

Each known mistake is replayed on the student's data (``logreg_runs``) and named when the
replay, and not the right run, matches the student's losses or final ``w`` and ``b``.
"""

from __future__ import annotations

from typing import Any

import torch

from . import logreg_kept as kept_losses
from . import logreg_loops as loops
from . import logreg_rise as rise
from . import logreg_scaled as scaled
from .common import allclose
from .logreg_advice import MISTAKES, NEVER_UPDATED, UNEXPLAINED
from .logreg_count import divided_by_count
from .logreg_not_final import not_final
from .logreg_penalty import penalty_added
from .logreg_recorded import ADVICE as RECORD_ADVICE
from .logreg_recorded import running_statistic
from .logreg_rounded import rounded_losses
from .logreg_runs import SIGMOID_BCE, reference_run, replayed_losses, update_path
from .logreg_unstable import unstable_loss

#: float32 training against a float64 oracle: observed gaps are ~1e-6 after 80 steps.
RTOL, ATOL = 1e-4, 1e-5
#: For recognising a replayed mistake: tight, since a flat trajectory (uninformative data) can
#: sit within 1e-3 of several mistakes at once; float32 replays stay within ~1e-5 relative.
MATCH_RTOL, MATCH_ATOL = 3e-5, 3e-6
LESSON_LR, LESSON_STEPS = 0.5, 300


def diagnose(losses: list[float], X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
             params: tuple[Any, Any] | None = None, returned: tuple[Any, Any] | None = None
             ) -> tuple[str | None, str]:
    """Which known mistake reproduces the student's losses on this data (or, with
    ``params``, their final ``w`` and ``b``), if any. A mistake whose replay is the right
    run's here names nothing, however well it matches (with one step, most losses are).
    ``returned``: the ``w`` and ``b`` the call returned, where only the losses are judged:
    read for what they show of the parameters (left at the zeros, or the grader's, which rule
    out a mistake in the training whose own run ends elsewhere), never to name a mistake by."""
    target = torch.tensor(losses, dtype=torch.float64)
    final = _vector(*params) if params is not None else None
    shown = final if params is not None else _vector(*returned) if returned else None
    # fewer losses: what the returned w and b and the losses' place in the grader's sequence
    # show (a short record beside a run that made every update, or a loop that stopped)
    short = None
    if len(losses) < steps and torch.isfinite(target).all():
        short = kept_losses.explained(target, reference_run(X, y, lr, steps + 1)[2], steps,
                                      shown, update_path(X, y, lr, steps), _trained_right)
    if short is not None and short[0] in kept_losses.RECORDS:
        return short
    if len(losses) == LESSON_STEPS != steps:
        return "steps-ignored", (f"You returned {LESSON_STEPS} losses but steps was {steps}: "
                                 "loop over range(steps), not the lesson's 300.")
    w_right, b_right, right = reference_run(X, y, lr, steps)
    correct = torch.tensor(right)
    right_final = _vector(w_right, b_right)
    if len(losses) == steps > 1 and _flat(target) and not _flat(correct):
        flat = _flat_losses(target, correct, shown, right_final)
        if flat is not None:
            return flat
    # the call returned the grader's w and b: its updates were the contract's, so a mistake in
    # the training whose own run ends elsewhere is ruled out, however well its losses match
    trained_right = shown is not None and right_final is not None \
        and _trained_right(shown, right_final)

    def contradicted(w_replay: torch.Tensor, b_replay: torch.Tensor | None = None) -> bool:
        replayed = w_replay if b_replay is None else _vector(w_replay, b_replay)
        return trained_right and not _trained_right(replayed.double(), right_final)

    if len(losses) < steps and not trained_right:  # a loop that stopped where the loss rose
        stopped = rise.changed_losses(target, correct, steps, RTOL, ATOL)
        if stopped is not None:
            return stopped
    if final is not None and len(losses) == steps and allclose(target, correct, RTOL, ATOL):
        kept = rise.kept_earlier_params(final, correct, update_path(X, y, lr, steps), steps,
                                        lambda got, at: matches(got, at, _vector(w_right,
                                                                                  b_right)))
        if kept is not None:
            return kept
    counted = (loops.miscounted_losses(target, lambda n: reference_run(X, y, lr, n)[2], steps,
                                 lambda got, first: allclose(got, first, MATCH_RTOL, MATCH_ATOL))
               if len(losses) != steps else None)
    if counted is None and final is not None and len(losses) == steps \
            and allclose(target, correct, RTOL, ATOL):
        counted = loops.miscounted_updates(final, update_path(X, y, lr, steps), steps, matches,
                                           fewer=1)
        if counted is None:  # the right run, other w and b than its last: an average, ...
            counted = not_final(final, correct, update_path(X, y, lr, steps), steps,
                                MATCH_RTOL, (RTOL, ATOL))
    if counted is not None:
        return counted
    if short is not None and short[0] is not None:  # a loop that stopped, the loss still falling
        return short
    if final is None:  # the record rounded: the grader's own losses, to a few decimals
        rounded = rounded_losses(target, correct, MATCH_RTOL, MATCH_ATOL)
        if rounded is not None:
            return rounded

    def close(step: int, loss: float) -> bool:  # as matches compares it, one loss at a time
        return step >= len(target) or allclose(target[step:step + 1], torch.tensor([loss]),
                                               MATCH_RTOL, MATCH_ATOL)

    # b's step scaled by 1/m after b left out, which a few such steps look like
    for name in ("not-cleared", "w-not-cleared", "b-not-cleared", "loss-after-update", "sum-not-mean", "lr-ignored", "sigmoid-log",
                 SIGMOID_BCE, "logits-clamped", "bias-left-out", *scaled.SCALINGS,
                 *loops.RESCALINGS):
        run_lr = LESSON_LR if name == "lr-ignored" else lr
        replay = None if name == "lr-ignored" else name
        # their error is rounding
        dtype = torch.float32 if name in ("sigmoid-log", SIGMOID_BCE) else torch.float64
        # A summed loss multiplies the step size by m and often turns chaotic, so float32
        # rounding decides the tail: its first steps are the evidence.
        keep = 3 if name == "sum-not-mean" or name.endswith("times-m") else steps
        if final is None:  # only the losses can match: the replay ends where it parts from them
            replayed = replayed_losses(X, y, run_lr, steps, replay, dtype, keep, close)
        else:
            w_replay, b_replay, replayed = reference_run(X, y, run_lr, steps, replay, dtype)
        pattern = torch.tensor(replayed)
        # the step times m ends where the summed loss does: its losses alone tell it
        by_final = final is not None and name != "step-times-m"
        name, advice = _told(name, X.shape[0])
        if matches(target[:keep], pattern[:keep], correct[:keep]):
            if trained_right and contradicted(*reference_run(X, y, run_lr, steps, replay,
                                                             dtype)[:2]):
                continue
            return name, advice
        if by_final and matches(final, _vector(w_replay, b_replay),
                                          _vector(w_right, b_right)):
            return name, "w and b match " + advice.removeprefix("The losses match ")
    # the loss divided by a count not this X's rows (a global m): its M fitted, then replayed
    divided = divided_by_count(target, correct, X, lr, steps, final, _vector(w_right, b_right),
                               lambda at: reference_run(X, y, at, steps), matches,
                               contradicted)
    if divided is not None:
        return divided
    if final is None:  # the record, not the training: transforms of the grader's own losses
        recorded = running_statistic(target, correct, matches)
        if recorded is not None:
            return recorded
    if len(losses) == steps:  # a penalty at a strength of the student's: fitted, then replayed
        penalised = penalty_added(
            target, correct, X, y, lr, final, _vector(w_right, b_right), matches,
            lambda a, b: not allclose(a, b, MATCH_RTOL, MATCH_ATOL), contradicted)
        if penalised is not None:
            return penalised
    unstable = unstable_loss(target, correct, X, y, lr, steps,
                             lambda k: largest_logit(X, y, lr, steps, k), RTOL, ATOL)
    if unstable is not None:
        return unstable
    # after the replays: a loop that never clears its gradients also matches up to step 1; a
    # loop that changed once the loss rose ends elsewhere than the grader's w and b
    changed = None if trained_right else rise.changed_losses(target, correct, steps, RTOL, ATOL)
    if changed is not None:
        return changed
    if short is not None:  # the losses placed, beside w and b that say no more
        return None, short[1] if trained_right else f"{short[1]} {UNEXPLAINED}"
    if trained_right:  # what is established: the training is right, the record is not
        return None, ("w and b are the grader's, so the updates follow the contract; the "
                      "losses recorded are not its per-step losses (each step's mean binary "
                      f"cross-entropy, before that step's update). {RECORD_ADVICE}")
    return None, UNEXPLAINED


def _flat_losses(target: torch.Tensor, correct: torch.Tensor, shown: torch.Tensor | None,
                 right: torch.Tensor | None) -> tuple[str | None, str] | None:
    """Losses that all stay at the first one where the grader's change: what the returned
    ``w`` and ``b`` (``shown``, one vector; None when not at hand) show. At the starting zeros,
    they never changed (``params-never-updated``). The grader's: the training was right and
    only the record is not, the running minimum where the grader's loss never falls below its
    first (it rose from step 1 on, a large lr: ``losses-running-min``), else said as found.
    Moved elsewhere: left to the replays (None). Not at hand: what the losses alone establish
    is said, and nothing of ``w`` and ``b``."""
    if shown is not None and not shown.any():
        return "params-never-updated", NEVER_UPDATED.format("w and b")
    first = f"{float(target[0]):.6g}"
    if shown is None:
        either = (" (or each recorded as the lowest loss so far, which on this run is the first "
                  "one)" if running_statistic(target, correct, matches) is not None else "")
        return None, (f"Every loss is the first one, {first}, where the grader's change from "
                      f"step 1 on{either}: the loss of each step is its own forward pass on that "
                      "step's w and b, computed before the update, and w and b move every step.")
    if right is None or not _trained_right(shown, right):
        return None
    recorded = running_statistic(target, correct, matches)
    if recorded is not None:
        return recorded
    return None, (f"w and b are the grader's, but every loss recorded is the first one, {first}, "
                  "where the grader's change from step 1 on: the training is right, the list "
                  f"holds something other than each step's own loss. {RECORD_ADVICE}")


def _trained_right(shown: torch.Tensor, right: torch.Tensor) -> bool:
    """The returned ``w`` and ``b`` (one vector) are the grader's ``right`` ones, held as
    ``judge_params`` holds them (float32 drift at the run's scale)."""
    return shown.shape == right.shape and allclose(
        shown, right, RTOL, max(ATOL, RTOL * float(right.abs().max())))


def _told(replay: str, m: int) -> tuple[str, str]:
    """The name and advice of the replayed mistake ``replay`` (on ``m`` rows)."""
    if replay in loops.RESCALINGS:
        return "features-rescaled", loops.rescaled_advice(replay)
    if replay in scaled.SCALINGS:
        return scaled.NAME, scaled.advice(replay, m)
    if replay == SIGMOID_BCE:  # the same mistake as a sigmoid then log, by torch's own BCE
        return "sigmoid-log", MISTAKES[SIGMOID_BCE]
    return replay, MISTAKES[replay]


def largest_logit(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int, k: int) -> float:
    """The largest |logit| of the grader's run before update ``k`` (0 past its end)."""
    path = update_path(X, y, lr, steps)
    if k >= len(path):
        return 0.0
    return float((X.double() @ path[k][:-1] + path[k][-1]).abs().max())


def matches(got: torch.Tensor, replay: torch.Tensor, right: torch.Tensor) -> bool:
    """``got`` is the mistake's ``replay``, which the right run's values are not."""
    return (got.shape == replay.shape and allclose(got, replay, MATCH_RTOL, MATCH_ATOL)
            and not allclose(right, replay, MATCH_RTOL, MATCH_ATOL))


def _vector(w: Any, b: Any) -> torch.Tensor | None:
    """``w`` and ``b`` as one float64 vector (None unless both are tensors)."""
    if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None
    return torch.cat([w.detach().cpu().reshape(-1), b.detach().cpu().reshape(-1)]).double()


def _flat(losses: torch.Tensor) -> bool:
    return allclose(losses, losses[:1].expand_as(losses), MATCH_RTOL, MATCH_ATOL)
