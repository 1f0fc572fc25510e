"""q1_logreg: logistic regression trained with autograd (its closed-form gradient:
``logreg_grads``).

The grader trains its own model on every drawn data set (float64, the oracle) and, when the
student's loss trajectory is wrong, replays each known mistake on the same data to name it
(the runs: ``logreg_runs``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ...worker import wire
from ..calling import alongside
from ..closeness import close_lists, is_float, max_abs_error
from ..context import call_context
from ..describing import describe, error_text, expected_text, fmt, plain, tolerance_text
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from . import logreg_loops as loops
from . import logreg_rise as rise
from . import logreg_scaled as scaled
from .common import allclose, call_named, first_failure, judge_tensor, with_diagnosis
from .logreg_advice import MISTAKES, NEVER_UPDATED, RAISE_HINTS, UNEXPLAINED
from .logreg_marked import left_marked
from .logreg_penalty import penalty_added
from .logreg_recorded import running_statistic
from .logreg_reused import draw_again, reused
from .logreg_rounded import rounded_losses
from .logreg_runs import reference_run, replayed_losses, update_path
from .logreg_unstable import unstable_loss

QUESTION = "q1_logreg"
#: float32 training against a float64 oracle: observed gaps are ~1e-6 after 80 steps.
RTOL, ATOL = 1e-4, 1e-5
#: For recognising a replayed mistake: tight, since a flat trajectory (uninformative data) can
#: sit within 1e-3 of several mistakes at once; float32 replays stay within ~1e-5 relative.
MATCH_RTOL, MATCH_ATOL = 3e-5, 3e-6
LESSON_LR, LESSON_STEPS = 0.5, 300

def draw_problem(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, float, int]:
    """A small data set like the lesson's, with an lr and a step count unlike the lesson's."""
    m, n = int(rng.integers(40, 121)), int(rng.integers(2, 7))
    X = torch.tensor(rng.standard_normal((m, n)), dtype=torch.float32)
    # weights well away from 0, so the labels carry signal and the losses keep falling
    true_w = torch.tensor(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n), dtype=torch.float32)
    noise = torch.tensor(0.3 * rng.standard_normal(m), dtype=torch.float32)
    y = (X @ true_w + noise > 0).float()
    lr = float(rng.choice([rng.uniform(0.1, 0.4), rng.uniform(0.6, 1.2)]))
    return X, y, lr, int(rng.integers(20, 81))


def diagnose(losses: list[float], X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
             params: tuple[Any, Any] | None = None) -> tuple[str | None, str]:
    """Which known mistake reproduces the student's losses on this data (or, with
    ``params``, their final ``w`` and ``b``), if any. A mistake whose replay is the right
    run's here names nothing, however well it matches (with one step, most losses are)."""
    if len(losses) == LESSON_STEPS != steps:
        return "steps-ignored", (f"You returned {LESSON_STEPS} losses but steps was {steps}: "
                                 "loop over range(steps), not the lesson's 300.")
    target = torch.tensor(losses, dtype=torch.float64)
    w_right, b_right, right = reference_run(X, y, lr, steps)
    correct = torch.tensor(right)
    if len(losses) == steps > 1 and _flat(target) and not _flat(correct):
        return "params-never-updated", NEVER_UPDATED.format("w and b")
    final = _vector(*params) if params is not None else None
    if len(losses) < steps:  # a loop that stopped where the loss rose, before a miscount
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
        counted = loops.miscounted_updates(final, update_path(X, y, lr, steps), steps, matches)
    if counted is not None:
        return counted
    if final is None:  # the record rounded: the grader's own losses, to a few decimals
        rounded = rounded_losses(target, correct, MATCH_RTOL, MATCH_ATOL)
        if rounded is not None:
            return rounded

    def close(step: int, loss: float) -> bool:  # as matches compares it, one loss at a time
        return step >= len(target) or allclose(target[step:step + 1], torch.tensor([loss]),
                                               MATCH_RTOL, MATCH_ATOL)

    # b's step scaled by 1/m after b left out, which a few such steps look like
    for name in ("not-cleared", "loss-after-update", "sum-not-mean", "lr-ignored", "sigmoid-log",
                 "logits-clamped", "bias-left-out", *scaled.SCALINGS, *loops.RESCALINGS):
        run_lr = LESSON_LR if name == "lr-ignored" else lr
        replay = None if name == "lr-ignored" else name
        dtype = torch.float32 if name == "sigmoid-log" else torch.float64  # its error is rounding
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
            return name, advice
        if by_final and matches(final, _vector(w_replay, b_replay),
                                          _vector(w_right, b_right)):
            return name, "w and b match " + advice.removeprefix("The losses match ")
    if final is None:  # the record, not the training: transforms of the grader's own losses
        recorded = running_statistic(target, correct, matches)
        if recorded is not None:
            return recorded
    if len(losses) == steps:  # a penalty at a strength of the student's: fitted, then replayed
        penalised = penalty_added(
            target, correct, X, y, lr, final, _vector(w_right, b_right), matches,
            lambda a, b: not allclose(a, b, MATCH_RTOL, MATCH_ATOL))
        if penalised is not None:
            return penalised
    unstable = unstable_loss(target, correct, X, y, lr, steps,
                             lambda k: largest_logit(X, y, lr, steps, k), RTOL, ATOL)
    if unstable is not None:
        return unstable
    # after the replays: a loop that never clears its gradients also matches up to step 1
    changed = rise.changed_losses(target, correct, steps, RTOL, ATOL)
    if changed is not None:
        return changed
    return None, UNEXPLAINED


def _told(replay: str, m: int) -> tuple[str, str]:
    """The name and advice of the replayed mistake ``replay`` (on ``m`` rows)."""
    if replay in loops.RESCALINGS:
        return "features-rescaled", loops.rescaled_advice(replay)
    if replay in scaled.SCALINGS:
        return scaled.NAME, scaled.advice(replay, m)
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


def call_train_logreg(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
                      steps: int, given: tuple[torch.Tensor, torch.Tensor] | None = None
                      ) -> tuple[Any, Verdict | None]:
    """The student's ``train_logreg`` on copies of ``X`` and ``y`` (``given``: the copies to
    hand over, for a check that inspects them after the call): ``(answer, None)``, or
    ``(answer, failure)`` when it raised or did not return a ``(w, b, losses)`` tuple."""
    X_, y_ = given if given is not None else (X.clone(), y.clone())
    got, failure = call_named(train_logreg, "train_logreg", RAISE_HINTS, X_, y_,
                              lr=lr, steps=steps)
    if failure is None and not (isinstance(got, (tuple, list)) and len(got) == 3):
        failure = Verdict(False, f"train_logreg returned {describe(got)}; expected a tuple "
                          "(w, b, losses).", "wrong-type", Evidence(got=plain(got)))
    return got, failure


def train_beside_reference(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
                           steps: int, given: tuple[torch.Tensor, torch.Tensor] | None = None
                           ) -> tuple[Any, Verdict | None]:
    """``call_train_logreg``, with the grader's ``reference_run`` on the same problem computed
    while the student's worker trains (``calling.alongside``): the judgement then finds it
    kept."""
    return alongside(train_logreg,
                     lambda: call_train_logreg(train_logreg, X, y, lr, steps, given),
                     lambda: reference_run(X, y, lr, steps))[0]


def judge_losses(losses: Any, X: torch.Tensor, y: torch.Tensor, lr: float,
                 steps: int) -> Verdict:
    """Compare the student's loss trajectory with the grader's; name a known mistake."""
    shown = f"train_logreg(X of shape {tuple(X.shape)}, y, lr={fmt(lr)}, steps={steps})"
    expected = reference_run(X, y, lr, steps)[2]
    inputs = {"m": X.shape[0], "n": X.shape[1], "lr": lr, "steps": steps}
    evidence = Evidence(inputs, expected, plain(losses), None, tolerance_text(RTOL, ATOL))
    if not isinstance(losses, list) or not all(is_float(v) for v in losses):
        return Verdict(False, f"{shown} returned losses {describe(losses)}; expected a list of "
                       "Python floats: append loss.item() each step.", "losses-not-floats",
                       evidence)
    if len(losses) != steps:
        name, hint = diagnose(losses, X, y, lr, steps)
        return Verdict(False, f"{shown} returned {len(losses)} losses; expected one per step, "
                       f"{steps} in all. {hint if name else ''}".rstrip(),
                       name or "wrong-length", evidence)
    err = max_abs_error(losses, expected)
    evidence = Evidence(inputs, expected, list(losses), err, tolerance_text(RTOL, ATOL))
    if close_lists(losses, expected, RTOL, ATOL):
        return Verdict(True, evidence=evidence)
    name, hint = diagnose(losses, X, y, lr, steps)
    return Verdict(False, f"{shown} returned losses {describe(losses)}; expected "
                   f"{expected_text(expected)} (largest error {error_text(err)}, "
                   f"{tolerance_text(RTOL, ATOL)}). {hint}", name, evidence)


def judge_params(got: Any, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int) -> Verdict:
    """Compare the student's final ``(w, b)`` with the grader's (float32 tolerances)."""
    w_ref, b_ref, _ = reference_run(X, y, lr, steps)
    w, b, losses = got
    shown = f"train_logreg(X of shape {tuple(X.shape)}, y, lr={fmt(lr)}, steps={steps})"
    inputs = {"m": X.shape[0], "n": X.shape[1], "lr": lr, "steps": steps}

    # float32 rounding drifts through w and b together over hundreds of steps: both are held
    # to the run's own scale, so a b near 0 beside a large w gets w's absolute slack
    atol = max(ATOL, RTOL * float(torch.cat([w_ref.reshape(-1), b_ref.reshape(-1)]).abs().max()))
    # still at the starting zeros where the grader's run moved: whatever the losses say
    stuck = [name for name, t, ref in (("w", w, w_ref), ("b", b, b_ref))
             if isinstance(t, torch.Tensor) and not t.detach().cpu().any() and ref.any()]
    floats = isinstance(losses, list) and all(is_float(v) for v in losses)

    def stuck_cause() -> tuple[str | None, str]:
        # only b at 0, after a run long enough that w shows whether b ever took part
        if stuck == ["b"] and steps > 1 and floats:
            found = diagnose(losses, X, y, lr, steps, (w, b))
            if found[0] == "bias-left-out":
                return found
        # both at 0 after the grader's losses: the updates happened, and were given back
        # (the starting zeros kept as the best weights of a run whose loss only rose)
        if len(stuck) == 2 and floats and len(losses) == steps > 1:
            found = diagnose(losses, X, y, lr, steps, (w, b))
            if found[0] == rise.NAME:
                return found
        return "params-never-updated", NEVER_UPDATED.format(" and ".join(stuck))

    def rediagnose(verdict: Verdict) -> Verdict:
        if stuck:
            return with_diagnosis(verdict, stuck_cause)
        if floats:
            return with_diagnosis(verdict, lambda: diagnose(losses, X, y, lr, steps, (w, b)))
        return with_diagnosis(verdict, lambda: (None, ""))  # nothing to compare: no guess

    return first_failure([
        lambda: rediagnose(judge_tensor(w, w_ref, f"w from {shown}", dtype=X.dtype, rtol=RTOL,
                                        atol=atol, inputs=inputs)),
        lambda: rediagnose(judge_tensor(b, b_ref, f"b from {shown}", dtype=X.dtype, rtol=RTOL,
                                        atol=atol, inputs=inputs, shapes=((1,), ()))),
    ])


def check_train_logreg(train_logreg: Callable, rng: np.random.Generator, *, part: str,
                       points: float = 1.0) -> CheckResult:
    """Train on fresh data sets; judge the ``"losses"`` or the final ``"params"``.

    Args:
        train_logreg: the student's function.
        rng: a generator seeded with the grading seed.
        part: ``"losses"`` or ``"params"``.
        points: what the check is worth.
    """
    seed = seed_of(rng)
    verdict = PASS
    for i in range(3):
        X, y, lr, steps = draw_problem(rng)
        given = (X.clone(), y.clone())  # the caller's tensors, as the call leaves them
        # the first answer is read after a call on another problem (logreg_reused)
        again = draw_again(seed, X.shape[1]) if i == 0 else None
        with call_context(**({"call_again": [wire.encode(a) for a in again]} if again else {})):
            got, verdict = train_beside_reference(train_logreg, X, y, lr, steps, given)
        if verdict is None:
            verdict = (judge_losses(got[2], X, y, lr, steps) if part == "losses"
                       else judge_params(got, X, y, lr, steps))
        if again is not None:
            verdict = reused(verdict, got, part, f"train_logreg(X of shape {tuple(X.shape)}, y, "
                             f"lr={fmt(lr)}, steps={steps})", again)
        if not verdict.ok and verdict.misconception != "result-reused":
            from .logreg_regimes import explain_training  # it builds on this module
            verdict = explain_training(verdict, train_logreg, X, y, lr, steps, got)
            break
        verdict = left_marked(verdict, f"train_logreg(X of shape {tuple(X.shape)}, y, lr="
                              f"{fmt(lr)}, steps={steps})", dict(zip("Xy", given)))
        if not verdict.ok:
            break
    return finish(QUESTION, f"train_logreg_{part}", verdict, seed=seed, points=points,
                  passed_message=f"train_logreg's {part} matched the grader's training runs.")
