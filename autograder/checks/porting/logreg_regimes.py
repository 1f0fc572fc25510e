"""q1_logreg in the regimes a training loop can be wrong in.

The contract's loop is plain gradient descent for exactly ``steps`` steps at rate ``lr``: no
clipping, no early stop, no schedule. A loop that clips the gradient's norm or stops once the
loss looks good enough reproduces the lesson's trajectory and every ordinary draw; it parts from
the grader's run only where the gradient is large (unscaled features, a large lr), where the
loss falls far (separable data, many steps), or at the ends (a single step).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..closeness import close_lists, float_list
from ..describing import describe, expected_text
from ..probes import Subject, explain, numbers_of
from ..result import PASS, CheckResult, Verdict, finish, with_probe
from ..seeding import seed_of
from . import logreg_count as counted
from . import logreg_kept as kept
from . import logreg_recorded as recorded
from . import logreg_scaled as scaled
from . import logreg_unstable as unstable
from .common import allclose
from .logreg import QUESTION, call_train_logreg, judge_losses, judge_params, train_beside_reference
from .logreg_advice import UNEXPLAINED
from .logreg_at_zero import kink_at_zero, nan_at_start
from .logreg_batched import batched
from .logreg_bias_step import bias_step
from .logreg_clipped import clipped
from .logreg_diagnosis import ATOL, RTOL, diagnose, matches
from .logreg_lossform import loss_form
from .logreg_not_final import asked_again
from .logreg_regime_draws import REGIMES, draw_regime, first_logits, regime_classes
from .logreg_runs import reference_run
from .logreg_schedule import changed_after_steps
from .logreg_stuck import explain_stuck
from .logreg_unreached import explain_none_gradient


def subject(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
            steps: int) -> Subject:
    """What the probes need to explain a wrong ``train_logreg`` (called positionally)."""
    def same(got: Any, expected: Any) -> bool:
        w_ref, b_ref, losses_ref = expected
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            return False
        w, b, losses = got
        return (float_list(losses) and len(losses) == len(losses_ref)
                and close_lists(losses, losses_ref, RTOL, ATOL)
                and all(isinstance(t, torch.Tensor) and t.numel() == r.numel()
                        and allclose(t.reshape(-1), r.reshape(-1), RTOL, ATOL)
                        for t, r in ((w, w_ref), (b, b_ref))))

    return Subject("train_logreg", train_logreg, (X, y, lr, steps), ("X", "y", "lr", "steps"),
                   reference_run, same, numbers_of, variations={2: lambda v: [v / 2]},
                   classes=regime_classes)


def explain_training(verdict: Verdict, train_logreg: Callable, X: torch.Tensor,
                     y: torch.Tensor, lr: float, steps: int, got: Any) -> Verdict:
    """Probe a wrong ``train_logreg``: one whose ``w`` and ``b`` never moved
    (``logreg_stuck``), one that met a None gradient (``logreg_unreached``), or one that no
    replayed mistake explained; one trained on mini-batches or a row subset
    (``logreg_batched``); one that steps b by another rate than w (``logreg_bias_step``); one
    that changes after a fixed number of steps (``logreg_schedule``); a single step whose w
    and b are not the final ones (``logreg_not_final``); a hand-written loss wrong for some
    logits or labels (``logreg_lossform``) or at the first step's logits 0 (``..._at_zero``)."""
    verdict = batched(verdict, got, X, y, lr, steps, reference_run(X, y, lr, steps)[2])
    verdict = scaled.confirmed(
        verdict, lambda X2, y2: _trained(train_logreg, X2, y2, lr, steps),
        lambda losses, X2, y2, params: diagnose(losses, X2, y2, lr, steps, params), X, y,
        UNEXPLAINED)
    verdict = counted.confirmed(verdict, got[2] if isinstance(got, (tuple, list)) and len(got)
                                == 3 else None, X, steps, lambda rows, n: _diagnosed(
                                    train_logreg, X[:rows], y[:rows], lr, n), UNEXPLAINED)
    verdict = tell_unstable_apart(verdict, train_logreg, X, y, lr, got)
    verdict = explain_stuck(verdict, train_logreg, X, y, lr, steps)
    verdict = asked_again(verdict, lambda n: _trained(train_logreg, X.clone(), y.clone(), lr, n),
                          X, y, lr, steps)
    verdict = explain_none_gradient(verdict, train_logreg, X, y, lr, steps)
    verdict = recorded_again(verdict, train_logreg, X, y, lr, steps, got)
    verdict = window_or_start(verdict, train_logreg, X, y, lr, steps, got)
    verdict = short_again(verdict, train_logreg, X, y, lr, steps, got)
    verdict = bias_step(verdict, lambda X2, y2, n: _trained(train_logreg, X2, y2, lr, n), X, y,
                        lr)
    verdict = changed_after_steps(
        verdict, lambda lr2: _trained(train_logreg, X.clone(), y.clone(), lr2, steps), X, y, lr,
        steps, got)
    verdict = nan_at_start(verdict, train_logreg, X, y, lr, got)
    verdict = loss_form(verdict, X, y, lr, steps, got)
    verdict = kink_at_zero(verdict, train_logreg, X, y, lr, steps, got)
    verdict = clipped(verdict, lambda: _trained(train_logreg, X.clone(), y.clone(), lr, 1), X,
                      y, lr, steps, got)  # after the replays: a cap read from the first step
    return explain(verdict, subject(train_logreg, X, y, lr, steps), got)


def _diagnosed(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
               steps: int) -> tuple[str | None, str] | None:
    """The diagnosis of the student's run on another problem (None when it failed)."""
    got = _trained(train_logreg, X.clone(), y.clone(), lr, steps)
    return None if got is None else diagnose(got[2], X, y, lr, steps, (got[0], got[1]))


def _trained(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
             steps: int) -> Any:
    """The student's ``(w, b, losses)`` on another problem, or None unless it is one whose
    losses are Python floats."""
    got, failure = call_train_logreg(train_logreg, X, y, lr, steps)
    if failure is not None or not float_list(got[2]):
        return None
    return got


def recorded_again(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                   lr: float, steps: int, got: Any) -> Verdict:
    """Losses of a run too short to tell a running statistic (the single step: a moving
    average started at 0 records a fraction of the first loss), unnamed: asked again on the
    same data with ``recorded.PROBE_STEPS`` steps, named when those losses are a running
    statistic of the grader's (``logreg_recorded``)."""
    if verdict.ok or verdict.misconception is not None or steps >= recorded.PROBE_STEPS \
            or not (isinstance(got, (tuple, list)) and len(got) == 3):
        return verdict
    losses = got[2]
    if not (float_list(losses) and len(losses) == steps):
        return verdict
    again, failure = call_train_logreg(train_logreg, X, y, lr, recorded.PROBE_STEPS)
    if failure is not None or not float_list(again[2]):
        return verdict
    right = reference_run(X, y, lr, recorded.PROBE_STEPS)[2]
    found = recorded.running_statistic(torch.tensor(again[2], dtype=torch.float64),
                                       torch.tensor(right, dtype=torch.float64), matches)
    if found is None:
        return verdict
    name, advice = found
    return with_probe(verdict, {
        "id": "recorded-again", "established": f"asked again with {recorded.PROBE_STEPS} steps, "
        "the losses are a running statistic of the grader's", "calls": [
            {"steps": recorded.PROBE_STEPS, "got": again[2], "expected": right}]},
        misconception=name, message=(
        f"{verdict.message.rstrip()} Asked again on the same data with steps="
        f"{recorded.PROBE_STEPS}, it returned losses {describe(again[2])}, the grader's being "
        f"{expected_text(right)}. {advice}"))


def window_or_start(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                    lr: float, steps: int, got: Any) -> Verdict:
    """The last ``N`` losses of a run that made every update (``losses-window-kept``), asked
    again on the same data with ``kept.PROBE_EXTRA`` steps more: the last ``N`` again is a
    list that holds at most ``N`` (a ``deque(maxlen=N)``, ``losses[-N:]``), said so; those
    from the same step on is a record that starts there whatever ``steps`` is, renamed
    ``losses-start-skipped``; anything else leaves the verdict as it is (both forms said)."""
    if verdict.misconception != kept.WINDOW or not (isinstance(got, (tuple, list))
                                                    and len(got) == 3 and float_list(got[2])):
        return verdict
    count = len(got[2])
    start = steps - count
    more = steps + kept.PROBE_EXTRA
    again, failure = call_train_logreg(train_logreg, X, y, lr, more)
    if failure is not None or not float_list(again[2]) or not 0 < len(again[2]) < more:
        return verdict
    found = diagnose(again[2], X, y, lr, more, returned=(again[0], again[1]))
    if found[0] != kept.WINDOW:
        return verdict
    if len(again[2]) == count:
        name, why = kept.WINDOW, (f"the list keeps at most {count}: a deque(maxlen={count}) or "
                                  f"losses[-{count}:]")
        how = f"the same number again, the newest {count}"
    elif more - len(again[2]) == start:
        name, why = kept.START, f"the record starts at step {start}"
        how = (f"from step {start} on again: the record starts there whatever `steps` is (a "
               "warm-up left out of it)")
    else:
        return verdict
    message = verdict.message.replace(f"({kept.window_how(count, start)})", f"({why})")
    return with_probe(verdict, {
        "id": "losses-kept-again", "established": f"asked again with {more} steps: {how}",
        "calls": [{"steps": more, "got": again[2],
                   "expected": reference_run(X, y, lr, more)[2]}]}, misconception=name, message=(
        f"{message.rstrip()} Asked again on the same data with steps={more}, it returned "
        f"{len(again[2])} losses, the grader's for steps {more - len(again[2])} to {more - 1}: "
        f"{how}."))


def short_again(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                lr: float, steps: int, got: Any) -> Verdict:
    """Fewer losses than a short run's steps (none, at the single step: a record started at a
    later step, a log every k steps) beside the grader's ``w`` and ``b``, unnamed: too few to
    place. Asked again on the same data with ``kept.PROBE_STEPS`` steps, named when that run's
    losses are a short record of its own (then told apart as ``window_or_start`` does)."""
    if verdict.ok or verdict.misconception not in (None, "wrong-length") \
            or steps >= kept.PROBE_STEPS or not (isinstance(got, (tuple, list)) and len(got) == 3
                                                  and float_list(got[2]) and len(got[2]) < steps):
        return verdict
    if not judge_params(got, X, y, lr, steps).ok:  # the loop's updates are not established
        return verdict
    more = kept.PROBE_STEPS
    again, failure = call_train_logreg(train_logreg, X, y, lr, more)
    if failure is not None or not float_list(again[2]):
        return verdict
    name, advice = diagnose(again[2], X, y, lr, more, returned=(again[0], again[1]))
    if name not in kept.RECORDS:
        return verdict
    contract = kept.CONTRACT.format(steps=steps)
    named = with_probe(verdict, {
        "id": "losses-short-again", "established": f"asked again with {more} steps, the losses "
        f"are a short record ({name})", "calls": [
            {"steps": more, "got": again[2], "expected": reference_run(X, y, lr, more)[2]}]},
        misconception=name, message=(
        f"{verdict.message.replace(contract, '').rstrip()} Asked again on the same data with "
        f"steps={more}, it returned {len(again[2])} losses: {advice}"))
    return window_or_start(named, train_logreg, X, y, lr, more, again)


def tell_unstable_apart(verdict: Verdict, train_logreg: Callable, X: torch.Tensor,
                        y: torch.Tensor, lr: float, got: Any) -> Verdict:
    """A loss named unstable whose run matched both families of unstable forms (exp-based
    and a sigmoid then log): asked again on the same data with an lr that takes the logits
    to about 40 in one step (a sigmoid rounds there, exp does not overflow), and named for a
    family only when the forms that match both runs are all of it."""
    if verdict.misconception != unstable.CLASS or not (isinstance(got, (tuple, list))
                                                       and len(got) == 3):
        return verdict
    losses = got[2]
    probe = unstable.probe_lr(first_logits(X, y))
    if probe is None or not float_list(losses):
        return verdict
    forms = unstable.matching_forms(torch.tensor(losses, dtype=torch.float64), X, y, lr,
                                    RTOL, ATOL)
    again, failure = call_train_logreg(train_logreg, X, y, probe, 2)
    if failure is not None or not float_list(again[2]):
        return verdict
    forms &= unstable.matching_forms(torch.tensor(again[2], dtype=torch.float64), X, y, probe,
                                     RTOL, ATOL)
    name = unstable.family(forms)
    if name is None or name == unstable.CLASS:
        return verdict
    told = unstable.ADVICE[unstable.CLASS]
    message = verdict.message.replace(told, unstable.ADVICE[name]) if told in verdict.message \
        else f"{verdict.message} {unstable.ADVICE[name]}"
    return with_probe(verdict, {
        "id": "unstable-forms", "established": f"the forms whose float32 replays match both "
        f"runs are all {name}'s", "calls": [{"lr": probe, "steps": 2, "got": again[2]}]},
        misconception=name, message=(
        f"{message} (Asked again with lr={probe:.4g} and steps=2, where the logits reach "
        f"about {unstable.PROBE_REACH:g}, the losses were {describe(again[2])}.)"))


def check_train_logreg_regimes(train_logreg: Callable, rng: np.random.Generator, *,
                               points: float = 1.0) -> CheckResult:
    """One step, separable data whose loss falls far over many steps, unscaled features with
    large gradients, logits far past ±30, a gradient whose norm is in the thousands, a loss
    that settles before the last step, more rows than a mini-batch of 1024: the losses and the
    final ``w`` and ``b`` against the grader's run (``logreg_regime_draws``)."""
    seed = seed_of(rng)
    verdict = PASS
    for kind in REGIMES:
        X, y, lr, steps = draw_regime(rng, kind)
        got, verdict = train_beside_reference(train_logreg, X, y, lr, steps)
        if verdict is None:
            verdict = judge_losses(got[2], X, y, lr, steps, (got[0], got[1]))
            verdict = judge_params(got, X, y, lr, steps) if verdict.ok else verdict
        if not verdict.ok:
            verdict = explain_training(verdict, train_logreg, X, y, lr, steps, got)
            break
    return finish(QUESTION, "train_logreg_regimes", verdict, seed=seed, points=points,
                  passed_message="train_logreg matched the grader's runs with one step, on "
                                 "separable data, with large gradients, with logits far past "
                                 "±30, with a loss that settles early and with many rows.")
