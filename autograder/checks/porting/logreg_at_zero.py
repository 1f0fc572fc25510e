"""q1_logreg: a hand-written loss that goes wrong where every logit is 0, the first step's
(blind round zzl).

``w`` and ``b`` start at zeros, so the first forward's logits are all exactly 0, where the
logistic loss is log 2 per row and its slope in each logit ``sigmoid(0) - y = 0.5 - y``.

- The numerically stable form written with a kink, ``max(z, 0) - z·y + log1p(exp(-|z|))`` with
  ``z.clamp(min=0)``, ``relu(z)``, ``where(z > 0, z, 0)``: its value is right everywhere, but at
  ``z = 0`` autograd takes one side's slope of ``max`` (clamp 1, relu and where 0) and of
  ``|z|`` (0, so ``log1p(exp(-|z|))`` adds 0 instead of -0.5): the first update uses the slope
  ``s - y`` with ``s`` 1 or 0, not 0.5, and every later step starts from there
  (``loss-kink-at-zero``). ``torch.maximum(z, zeros)`` splits the tie (0.5) and is right.
  Asked again with ``steps=1`` on the same data, b after the one update is ``-lr·(s - mean(y))``:
  ``s`` is read from it, and the name kept only when that one step is the grader's float64
  replay with the slope ``s`` at 0 (w too) and the whole answer is the replay of the run with
  that first slope alone changed, ten times nearer it than the right run.
- The cross-entropy of probabilities given the logits, ``-(y·log(z) + (1 - y)·log(1 - z))``
  (the sigmoid left out): ``log(0)`` at the first step, so the first loss is NaN (``0·log(0)``
  on rows labelled 0) or inf, and every later one NaN. Asked again with ``steps=1`` on the same
  rows all labelled 1, its first loss is ``+inf``, ``-log(0)``: the log of something that is 0
  at logit 0, where the probability is sigmoid(0) = 0.5 (``sigmoid-missing``: q2's form of
  that name, ``wrong-logistic-loss`` there, is its replay; here no replay shows a NaN, the
  probe does). Without that, what the first loss showed is told, unnamed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import torch

from ..closeness import float_list
from ..describing import plain
from ..result import Verdict, with_probe
from .common import allclose
from .logistic_forms import ADVICE
from .logreg_advice import UNEXPLAINED
from .logreg_diagnosis import ATOL, RTOL
from .logreg_runs import kink_mistake, reference_run

NAME = "loss-kink-at-zero"
SIGMOID_MISSING = "sigmoid-missing"
#: How far from sigmoid(0) = 0.5 the first step's slope must be to be a kink's.
MIN_SLOPE_GAP = 0.01


def _again(train_logreg: Callable, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int
           ) -> Any:
    """The student's answer on copies of ``X`` and ``y`` (None when the call failed)."""
    from .logreg import call_train_logreg
    got, failure = call_train_logreg(train_logreg, X.clone(), y.clone(), lr, steps)
    return None if failure is not None else got


def _answer(got: Any) -> tuple[Any, Any, list[float] | None] | None:
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        return None
    w, b, losses = got
    return w, b, (list(losses) if float_list(losses) else None)


def _vector(w: Any, b: Any, n: int) -> torch.Tensor | None:
    if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor)
            and w.numel() + b.numel() == n + 1):
        return None
    return torch.cat([w.detach().cpu().reshape(-1), b.detach().cpu().reshape(-1)]).double()


def _fits(got: torch.Tensor, replay: torch.Tensor, right: torch.Tensor, atol: float
          ) -> bool | None:
    """True: ``got`` is the finite ``replay``, ten times nearer it than ``right``; None: the
    replay is the right one here (no evidence either way) and ``got`` matches it; else False."""
    if got.shape != replay.shape or not bool(torch.isfinite(replay).all()):
        return False
    if not allclose(got, replay, RTOL, atol):
        return False
    if allclose(right, replay, RTOL, atol):
        return None
    apart = float((replay - right).abs().max())
    return float((got - replay).abs().max()) < apart / 10


def _replayed(got: Any, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
              slope: float) -> bool:
    """The answer ``got`` (its losses and final w and b, each at hand) is the grader's run
    with the first step's slope at 0 ``slope``, not the right run, on at least one of them."""
    answer = _answer(got)
    if answer is None:
        return False
    w, b, losses = answer
    w_r, b_r, right = reference_run(X, y, lr, steps)
    w_k, b_k, replay = reference_run(X, y, lr, steps, kink_mistake(slope))
    fits = []
    if losses is not None and len(losses) == steps:
        fits.append(_fits(torch.tensor(losses, dtype=torch.float64),
                          torch.tensor(replay, dtype=torch.float64),
                          torch.tensor(right, dtype=torch.float64), ATOL))
    final = _vector(w, b, X.shape[1])
    if final is not None:
        right_final, replay_final = torch.cat([w_r, b_r]).double(), torch.cat([w_k, b_k]).double()
        atol = max(ATOL, RTOL * float(torch.cat([right_final, replay_final]).abs().max()))
        fits.append(_fits(final, replay_final, right_final, atol))
    return bool(fits) and False not in fits and True in fits


def kink_at_zero(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                 lr: float, steps: int, got: Any) -> Verdict:
    """``verdict``, named ``loss-kink-at-zero`` when it fails unnamed, the first loss is the
    grader's, and one more call (``steps=1`` on the same data) shows the first update made
    with a slope ``s - y`` at logit 0, ``s`` not 0.5, which replayed gives the whole answer."""
    answer = _answer(got)
    if verdict.ok or verdict.misconception is not None or answer is None:
        return verdict
    right = reference_run(X, y, lr, steps)[2]
    if answer[2] is not None and not (answer[2] and allclose(
            torch.tensor(answer[2][:1]), torch.tensor(right[:1]), RTOL, ATOL)):
        return verdict  # the first loss is wrong: not (only) its slope
    again = _again(train_logreg, X, y, lr, 1)
    one = _answer(again)
    if one is None or not isinstance(one[1], torch.Tensor) or one[1].numel() != 1:
        return verdict
    b1 = float(one[1].detach().double().reshape(()))
    slope = float(y.double().mean()) - b1 / lr
    if not math.isfinite(slope) or abs(slope - 0.5) < MIN_SLOPE_GAP:
        return verdict
    if not (_replayed(again, X, y, lr, 1, slope) and _replayed(got, X, y, lr, steps, slope)):
        return verdict
    half = round(slope * 2) / 2  # a kink's slopes are 0, 1 (and -0.5, 1.5 with abs's)
    shown = f"{half:g}" if abs(slope - half) < 1e-4 else f"{slope:.3g}"
    return with_probe(verdict, {
        "id": NAME, "established": f"asked again with steps=1, the update's slope in each logit "
        f"at 0 is {shown} - y, not 0.5 - y; the grader's run with that first slope alone "
        "changed gives the answer", "calls": [
            {"steps": 1, "got": {"w": plain(one[0]), "b": plain(one[1]), "losses": one[2]}}]},
        misconception=NAME, message=(
        f"{verdict.message.replace(UNEXPLAINED, '').rstrip()} At the first step w and b are "
        "zeros, so every logit is exactly 0: asked again with steps=1 on the same data, the "
        f"update shows the loss's slope in each logit at z = 0 as {shown} - y, where the "
        "logistic loss has sigmoid(0) - y = 0.5 - y, and the grader's run with that first slope "
        "alone changed gives your answer (the loss values are right; only the first "
        "gradient is not). The stable form max(z, 0) - z·y + log1p(exp(-|z|)) has a kink at "
        "z = 0 in max and in |z|, and autograd takes one side's slope there: clamp(min=0) 1, "
        "relu or where(z > 0, z, 0) 0, and abs 0 (so log1p(exp(-|z|)) adds 0, not -0.5). The "
        "loss itself is smooth at 0: write it with a smooth function, "
        "F.binary_cross_entropy_with_logits(z, y), F.softplus(z) - y·z or "
        "torch.logaddexp(zeros, z) - y·z."))


def nan_at_start(verdict: Verdict, train_logreg: Callable, X: torch.Tensor, y: torch.Tensor,
                 lr: float, got: Any) -> Verdict:
    """``verdict``, when it fails unnamed and the first loss (every logit 0) is NaN or
    infinite, told so; named ``sigmoid-missing`` when one more call, one step on the same
    rows all labelled 1, gives a first loss of ``+inf`` (``-log(0)``)."""
    answer = _answer(got)
    if verdict.ok or verdict.misconception is not None or answer is None \
            or not answer[2] or math.isfinite(answer[2][0]):
        return verdict
    first = "NaN" if math.isnan(answer[2][0]) else f"{answer[2][0]:g}"
    message = verdict.message.replace(UNEXPLAINED, "").rstrip()
    fact = (f" The first loss is {first}, taken where w and b are the starting zeros and "
            "every logit is exactly 0; the logistic loss there is log 2 = 0.693 for every row.")
    again = _answer(_again(train_logreg, X, torch.ones_like(y), lr, 1))
    if again is None or not again[2] or again[2][0] != math.inf:
        return dataclasses.replace(verdict, message=(
            f"{message}{fact} Something in the loss is undefined at a logit of 0 (a log of 0, "
            f"or 0/0). {ADVICE}"))
    return with_probe(verdict, {
        "id": SIGMOID_MISSING, "established": f"the first loss, at logits 0, is {first}; asked "
        "again with steps=1 on the same rows all labelled 1, it is inf", "calls": [
            {"y": "ones", "steps": 1, "got": again[2]}]}, misconception=SIGMOID_MISSING, message=(
        f"{message}{fact} Asked again with steps=1 on the same rows all labelled 1, the first "
        "loss is inf: -log(0), the log of something that is 0 at logit 0, where the "
        "probability is sigmoid(0) = 0.5. That is the cross-entropy of probabilities, "
        "-(y·log(p) + (1 - y)·log(1 - p)), given the logits themselves: p = z has no log for "
        "z <= 0 (and log(1 - z) none for z >= 1), and 0·log(0) is NaN. The sigmoid is "
        f"missing: p = sigmoid(z). {ADVICE}"))
