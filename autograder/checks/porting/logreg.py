"""q1_logreg: logistic regression trained with autograd, and its closed-form gradient.

The grader trains its own model on every drawn data set (float64, the oracle) and, when the
student's loss trajectory is wrong, replays each known mistake on the same data to name it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from ..closeness import close_lists, is_float, max_abs_error
from ..describing import describe, error_text, expected_text, fmt, plain, tolerance_text
from ..probes import explain
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import allclose, call_named, first_failure, judge_tensor, with_diagnosis

QUESTION = "q1_logreg"
#: float32 training against a float64 oracle: observed gaps are ~1e-6 after 80 steps.
RTOL, ATOL = 1e-4, 1e-5
#: For recognising a replayed mistake: tight, since a flat trajectory (uninformative data) can
#: sit within 1e-3 of several mistakes at once; float32 replays stay within ~1e-5 relative.
MATCH_RTOL, MATCH_ATOL = 3e-5, 3e-6
LESSON_LR, LESSON_STEPS = 0.5, 300

RAISE_HINTS = (
    ("leaf Variable that requires grad is being used in an in-place operation",
     "update-outside-no-grad",
     "The in-place update of w or b ran while autograd was recording: put the two updates "
     "inside `with torch.no_grad():`."),
    ("NoneType", "update-outside-no-grad",
     "A gradient was None: `w = w - lr * w.grad` outside torch.no_grad() makes w a non-leaf, so "
     "the next backward leaves w.grad empty. Update in place under `with torch.no_grad():`."),
)

MISTAKES = {
    "not-cleared": "The losses match training whose gradients were never cleared: each backward "
                   "added to the previous w.grad and b.grad. Set w.grad = None and b.grad = None "
                   "(or call zero_()) before each backward.",
    "loss-after-update": "The losses match the loss measured after each update: record the loss "
                         "of the forward pass that the update uses, before changing w and b.",
    "sum-not-mean": "The losses match a summed loss: the binary cross-entropy must be averaged "
                    "over the m examples (the default reduction='mean').",
    "lr-ignored": "The losses match training with the lesson's lr=0.5, not the lr argument: use "
                  "the lr parameter in the update.",
    "sigmoid-log": "The losses match sigmoid followed by log, which loses precision when "
                   "probabilities round to 0 or 1: use F.binary_cross_entropy_with_logits on the "
                   "raw logits.",
}


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


def _loss(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
          mistake: str | None) -> torch.Tensor:
    logits = X @ w + b
    if mistake == "sigmoid-log":
        p = torch.sigmoid(logits)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    reduction = "sum" if mistake == "sum-not-mean" else "mean"
    return F.binary_cross_entropy_with_logits(logits, y, reduction=reduction)


_RUNS = threading.local()  # the judge grades submissions on threads of one process


def reference_run(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
                  mistake: str | None = None, dtype: torch.dtype = torch.float64,
                  ) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
    """The grader's training run, correct or with one known ``mistake`` replayed. A check
    asks for the same run more than once (the losses, then the parameters, then the probes):
    the runs of the thread's current data set are kept, keyed by the data's values.

    Returns:
        ``(w, b, losses)``: final parameters (detached, ``dtype``) and the per-step losses.
    """
    data = (tuple(X.shape), X.dtype, X.detach().numpy().tobytes(), y.detach().numpy().tobytes())
    runs = _RUNS.__dict__
    if runs.get("data") != data:
        runs.clear()
        runs["data"] = data
    key = (lr, steps, mistake, dtype)
    if key not in runs:
        runs[key] = _train(X, y, lr, steps, mistake, dtype)
    w, b, losses = runs[key]
    return w.clone(), b.clone(), list(losses)


def _train(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int, mistake: str | None,
           dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
    X, y = X.to(dtype), y.to(dtype)
    w = torch.zeros(X.shape[1], dtype=dtype, requires_grad=True)
    b = torch.zeros(1, dtype=dtype, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = _loss(X, y, w, b, mistake)
        if mistake != "not-cleared":
            w.grad, b.grad = None, None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            if mistake == "loss-after-update":
                loss = _loss(X, y, w, b, None)
        losses.append(loss.item())
    return w.detach(), b.detach(), losses


def diagnose(losses: list[float], X: torch.Tensor, y: torch.Tensor, lr: float,
             steps: int) -> tuple[str | None, str]:
    """Which known mistake reproduces the student's losses on this data, if any."""
    if len(losses) == LESSON_STEPS != steps:
        return "steps-ignored", (f"You returned {LESSON_STEPS} losses but steps was {steps}: "
                                 "loop over range(steps), not the lesson's 300.")
    target = torch.tensor(losses, dtype=torch.float64)
    for name in ("not-cleared", "loss-after-update", "sum-not-mean", "lr-ignored", "sigmoid-log"):
        run_lr = LESSON_LR if name == "lr-ignored" else lr
        replay = None if name == "lr-ignored" else name
        dtype = torch.float32 if name == "sigmoid-log" else torch.float64  # its error is rounding
        pattern = torch.tensor(reference_run(X, y, run_lr, steps, replay, dtype)[2])
        # A summed loss multiplies the step size by m and often turns chaotic, so float32
        # rounding decides the tail: its first steps are the evidence.
        keep = 3 if name == "sum-not-mean" else steps
        if allclose(target[:keep], pattern[:keep], MATCH_RTOL, MATCH_ATOL):
            return name, MISTAKES[name]
    if not torch.isfinite(target).all():
        return "sigmoid-log", MISTAKES["sigmoid-log"]
    return None, ("Compare your loop with the contract: zeros for w and b, the mean loss on "
                  "X @ w + b, clear, backward, update under no_grad, record the loss before it.")


def call_train_logreg(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float,
                      steps: int) -> tuple[Any, Verdict | None]:
    """The student's ``train_logreg`` on copies of ``X`` and ``y``: ``(answer, None)``, or
    ``(answer, failure)`` when it raised or did not return a ``(w, b, losses)`` tuple."""
    got, failure = call_named(train_logreg, "train_logreg", RAISE_HINTS, X.clone(), y.clone(),
                              lr=lr, steps=steps)
    if failure is None and not (isinstance(got, (tuple, list)) and len(got) == 3):
        failure = Verdict(False, f"train_logreg returned {describe(got)}; expected a tuple "
                          "(w, b, losses).", "wrong-type", Evidence(got=plain(got)))
    return got, failure


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

    def rediagnose(verdict: Verdict) -> Verdict:
        if isinstance(losses, list) and all(is_float(v) for v in losses):
            return with_diagnosis(verdict, lambda: diagnose(losses, X, y, lr, steps))
        return with_diagnosis(verdict, lambda: (None, ""))  # nothing to compare: no guess

    return first_failure([
        lambda: rediagnose(judge_tensor(w, w_ref, f"w from {shown}", dtype=X.dtype, rtol=RTOL,
                                        atol=ATOL, inputs=inputs)),
        lambda: rediagnose(judge_tensor(b, b_ref, f"b from {shown}", dtype=X.dtype, rtol=RTOL,
                                        atol=ATOL, inputs=inputs, shapes=((1,), ()))),
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
    for _ in range(3):
        X, y, lr, steps = draw_problem(rng)
        got, verdict = call_train_logreg(train_logreg, X, y, lr, steps)
        if verdict is None:
            verdict = (judge_losses(got[2], X, y, lr, steps) if part == "losses"
                       else judge_params(got, X, y, lr, steps))
        if not verdict.ok:
            from .logreg_regimes import explain_training  # it builds on this module
            verdict = explain_training(verdict, train_logreg, X, y, lr, steps, got)
            break
    return finish(QUESTION, f"train_logreg_{part}", verdict, seed=seed, points=points,
                  passed_message=f"train_logreg's {part} matched the grader's training runs.")


def reference_grads(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
                    b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradient of the mean loss by autograd in float64: the oracle for the closed form."""
    w64 = w.detach().double().requires_grad_()
    b64 = b.detach().double().requires_grad_()
    F.binary_cross_entropy_with_logits(X.double() @ w64 + b64, y.double()).backward()
    return w64.grad, b64.grad


def diagnose_grads(got_w: torch.Tensor, ref_w: torch.Tensor, m: int) -> tuple[str | None, str]:
    """Name a wrong closed-form gradient by how it relates to the reference."""
    got = got_w.detach().double()
    if allclose(got, m * ref_w, MATCH_RTOL, MATCH_ATOL):
        return "grad-not-divided-by-m", ("It is m times too large: divide X.T @ (sigmoid(X @ w "
                                         "+ b) - y) by m, the number of examples.")
    if allclose(got, -ref_w, MATCH_RTOL, MATCH_ATOL):
        return "grad-sign-flipped", ("It has the wrong sign: the residual is sigmoid(X @ w + b) "
                                     "- y, prediction minus label.")
    return None, "Write it as X.T @ (sigmoid(X @ w + b) - y) / m, the bias part as the mean."


def check_logreg_grads(logreg_grads: Callable, rng: np.random.Generator, *,
                       points: float = 1.0) -> CheckResult:
    """Compare the closed-form gradient with autograd at random points of random problems."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(3):
        X, y, _, _ = draw_problem(rng)
        w = torch.tensor(rng.normal(0.0, 1.0, X.shape[1]), dtype=torch.float32)
        b = torch.tensor([rng.normal(0.0, 1.0)], dtype=torch.float32)
        ref_w, ref_b = reference_grads(X, y, w, b)
        got, verdict = call_named(logreg_grads, "logreg_grads", (), X.clone(), y.clone(),
                                  w.clone(), b.clone())
        if verdict is None:
            verdict = judge_grads(got, ref_w, ref_b, X.shape[0])
        if not verdict.ok:
            from .logreg_regimes import grads_subject  # it builds on this module
            verdict = explain(verdict, grads_subject(logreg_grads, X, y, w, b), got)
            break
    return finish(QUESTION, "logreg_grads", verdict, seed=seed, points=points,
                  passed_message="logreg_grads matched autograd at random points.")


def judge_grads(got: Any, ref_w: torch.Tensor, ref_b: torch.Tensor, m: int) -> Verdict:
    """Judge ``logreg_grads``'s ``(grad_w, grad_b)``; b's gradient may be ``(1,)`` or 0-d."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return Verdict(False, f"logreg_grads returned {describe(got)}; expected a tuple "
                       "(grad_w, grad_b).", "wrong-type", Evidence(got=plain(got)))
    inputs = {"m": m, "n": int(ref_w.numel())}
    grad_w, grad_b = got
    return first_failure([
        lambda: with_diagnosis(
            judge_tensor(grad_w, ref_w, "the gradient of w", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs), lambda: diagnose_grads(grad_w, ref_w, m)),
        lambda: with_diagnosis(
            judge_tensor(grad_b, ref_b, "the gradient of b", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs, shapes=((1,), ())),
            lambda: (None, "The bias gradient is the mean residual, "
                           "(sigmoid(X @ w + b) - y).mean().")),
    ])
