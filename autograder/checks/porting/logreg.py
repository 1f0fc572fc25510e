"""q1_logreg: logistic regression trained with autograd (its closed-form gradient:
``logreg_grads``).

The grader trains its own model on every drawn data set (float64, the oracle) and, when the
student's loss trajectory is wrong, replays each known mistake on the same data to name it
(``logreg_diagnosis``; the runs: ``logreg_runs``).
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
from . import logreg_rise as rise
from .common import call_named, first_failure, judge_tensor, with_diagnosis
from .logreg_advice import NEVER_UPDATED, RAISE_HINTS, UNEXPLAINED
from .logreg_cached import NAME as CACHED
from .logreg_cached import cached, draw_same_shape
from .logreg_diagnosis import ATOL, RTOL, diagnose
from .logreg_marked import left_marked
from .logreg_reused import draw_again, reused
from .logreg_runs import reference_run

QUESTION = "q1_logreg"


def labelled_data(rng: np.random.Generator, m: int, n: int, noise: float
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """``m`` rows of ``n`` normal features and their labels: a linear rule, weights well away
    from 0 (so the labels carry signal and the losses keep falling), plus noise of that scale."""
    X = torch.tensor(rng.standard_normal((m, n)), dtype=torch.float32)
    true_w = torch.tensor(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n), dtype=torch.float32)
    y = (X @ true_w + torch.tensor(noise * rng.standard_normal(m), dtype=torch.float32) > 0)
    return X, y.float()


def draw_problem(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, float, int]:
    """A small data set like the lesson's, with an lr and a step count unlike the lesson's."""
    m, n = int(rng.integers(40, 121)), int(rng.integers(2, 7))
    X, y = labelled_data(rng, m, n, 0.3)
    lr = float(rng.choice([rng.uniform(0.1, 0.4), rng.uniform(0.6, 1.2)]))
    return X, y, lr, int(rng.integers(20, 81))


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
                 steps: int, params: tuple[Any, Any] | None = None) -> Verdict:
    """Compare the student's loss trajectory with the grader's; name a known mistake.
    ``params``: the ``w`` and ``b`` the same call returned, the only evidence of what the
    parameters did (flat losses may be a run that never updated, or a record that kept the
    first loss); without them no diagnosis claims anything about ``w`` and ``b``."""
    shown = f"train_logreg(X of shape {tuple(X.shape)}, y, lr={fmt(lr)}, steps={steps})"
    expected = reference_run(X, y, lr, steps)[2]
    inputs = {"m": X.shape[0], "n": X.shape[1], "lr": lr, "steps": steps}
    evidence = Evidence(inputs, expected, plain(losses), None, tolerance_text(RTOL, ATOL))
    if not isinstance(losses, list) or not all(is_float(v) for v in losses):
        return Verdict(False, f"{shown} returned losses {describe(losses)}; expected a list of "
                       "Python floats: append loss.item() each step.", "losses-not-floats",
                       evidence)
    if len(losses) != steps:
        name, hint = diagnose(losses, X, y, lr, steps, returned=params)
        told = hint if name or hint != UNEXPLAINED else ""  # what was established, if any
        return Verdict(False, f"{shown} returned {len(losses)} losses; expected one per step, "
                       f"{steps} in all. {told}".rstrip(),
                       name or "wrong-length", evidence)
    err = max_abs_error(losses, expected)
    evidence = Evidence(inputs, expected, list(losses), err, tolerance_text(RTOL, ATOL))
    if close_lists(losses, expected, RTOL, ATOL):
        return Verdict(True, evidence=evidence)
    name, hint = diagnose(losses, X, y, lr, steps, returned=params)
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
    earlier = None
    for i in range(4):
        if i < 3:
            X, y, lr, steps = draw_problem(rng)
        else:  # last: the previous problem's shape, lr and steps, other values (logreg_cached)
            earlier = (X, y, lr, steps)
            X, y = draw_same_shape(seed, X)
        given = (X.clone(), y.clone())  # the caller's tensors, as the call leaves them
        # the first answer is read after a call on another problem (logreg_reused)
        again = draw_again(seed, X.shape[1]) if i == 0 else None
        with call_context(**({"call_again": [wire.encode(a) for a in again]} if again else {})):
            got, verdict = train_beside_reference(train_logreg, X, y, lr, steps, given)
        if verdict is None:
            verdict = (judge_losses(got[2], X, y, lr, steps, (got[0], got[1]))
                       if part == "losses"
                       else judge_params(got, X, y, lr, steps))
        shown = f"train_logreg(X of shape {tuple(X.shape)}, y, lr={fmt(lr)}, steps={steps})"
        if again is not None:
            verdict = reused(verdict, got, part, shown, again)
        if earlier is not None:
            verdict = cached(verdict, got, part, shown, earlier, (X, y, lr, steps))
        if not verdict.ok and verdict.misconception not in ("result-reused", CACHED):
            from .logreg_regimes import explain_training  # it builds on this module
            verdict = explain_training(verdict, train_logreg, X, y, lr, steps, got)
            break
        verdict = left_marked(verdict, shown, dict(zip("Xy", given)))
        if not verdict.ok:
            break
    return finish(QUESTION, f"train_logreg_{part}", verdict, seed=seed, points=points,
                  passed_message=f"train_logreg's {part} matched the grader's training runs.")
