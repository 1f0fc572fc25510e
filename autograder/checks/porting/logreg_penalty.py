"""q1_logreg: a penalty added to the loss (``penalty-added``), at a strength the grader fits.

A habit from regularised fits: ``loss + lam * ||w||²`` (or on ``w`` and ``b``, or ``lam *
sum|w|``), or the optimizer's ``weight_decay``, which shrinks the parameters in every update
while the recorded losses leave the penalty out. Every member of that family starts where the
contract's run starts (the penalty's gradient is 0 at the starting zeros) and parts from it by
an amount set by ``lam``, which the student chose: so ``lam`` is fitted to the student's
losses, and the mistake is named only when the whole trajectory is that penalised run's within
the tolerance that names replayed mistakes (and only when one kind of penalty fits).

The runs are gradient descent in closed form (NumPy, float64): ``X.T @ (sigmoid(X @ w + b) -
y) / m`` and the mean residual, plus the penalty's gradient (``sign`` for L1, 0 at 0 as
``abs``'s backward gives).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

#: Where the fit starts its search: the first step where the student's losses part from the
#: grader's is matched by scaling this strength's effect there.
PROBE_STRENGTH = 1e-3
#: Gauss-Newton iterations refining the strength against the losses' first steps.
ITERATIONS = 6
#: How many of the first losses the strength is fitted to (more where they part later).
FIT_STEPS = 100


@dataclass(frozen=True)
class Penalty:
    """One member of the family.

    Attributes:
        norm: ``"L2"`` (``lam * sum(p**2)``) or ``"L1"`` (``lam * sum(|p|)``).
        on_b: whether ``b`` is penalised as well as ``w``.
        shown: whether the recorded losses include the penalty (``False``: weight decay, whose
            strength is the coefficient of ``p`` in the gradient, ``2 * lam`` for L2).
    """

    norm: str
    on_b: bool
    shown: bool

    def grad(self, p: np.ndarray, lam: float) -> np.ndarray:
        if not self.shown:  # weight decay: lam * p added to the gradient
            return lam * p
        return 2 * lam * p if self.norm == "L2" else lam * np.sign(p)

    def value(self, p: np.ndarray, lam: float) -> float:
        if not self.shown:
            return 0.0
        return lam * float((p ** 2).sum() if self.norm == "L2" else np.abs(p).sum())

    def told(self, lam: float) -> str:
        """What the run matches, ``lam`` the fitted strength: "gradient descent with ..."."""
        if not self.shown:
            which = "w and b" if self.on_b else "w"
            return (f"weight decay of about {lam:.2g} on {which} (each update also subtracts "
                    f"lr * {lam:.2g} * {which}, as torch.optim.SGD's weight_decay does; the "
                    "recorded losses leave it out)")
        terms = [f"||{p}||²" if self.norm == "L2" else f"sum(|{p}|)"
                 for p in ("w", "b")[:1 + self.on_b]]
        shown = f"({' + '.join(terms)})" if self.on_b else terms[0]
        return f"an {self.norm} penalty of about {lam:.2g} * {shown} added to the loss"


FAMILY = tuple(Penalty(norm, on_b, shown) for shown in (True, False)
               for norm in (("L2", "L1") if shown else ("L2",)) for on_b in (False, True))


def penalised_run(X: np.ndarray, y: np.ndarray, lr: float, steps: int, penalty: Penalty,
                  lam: float) -> tuple[np.ndarray, list[float]]:
    """The final ``(w, b)`` as one vector and the recorded losses of ``steps`` updates."""
    with np.errstate(all="ignore"):  # a strength tried on the way may make a run diverge
        return _run(X, y, lr, steps, penalty, lam)


def _run(X: np.ndarray, y: np.ndarray, lr: float, steps: int, penalty: Penalty,
         lam: float) -> tuple[np.ndarray, list[float]]:
    m, n = X.shape
    w, b = np.zeros(n), 0.0
    losses = []
    for _ in range(steps):
        z = X @ w + b
        bce = float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))
        params = np.append(w, b) if penalty.on_b else w
        losses.append(bce + penalty.value(params, lam))
        r = 0.5 * (1 + np.tanh(z / 2)) - y  # the sigmoid, without overflow
        gw, gb = X.T @ r / m, float(r.mean())
        extra = penalty.grad(params, lam)
        gw = gw + extra[:n]
        if penalty.on_b:
            gb += float(extra[n])
        w, b = w - lr * gw, b - lr * gb
    return np.append(w, b), losses


def _fit(target: np.ndarray, X: np.ndarray, y: np.ndarray, lr: float, penalty: Penalty,
         correct: np.ndarray, first: int) -> float | None:
    """The strength whose run's losses are nearest ``target`` (least squares), starting from
    the one that matches the step ``first`` where ``target`` parts from ``correct``."""
    steps = len(target)
    probe = np.array(penalised_run(X, y, lr, steps, penalty, PROBE_STRENGTH)[1])
    effect = probe[first] - correct[first]
    if effect == 0 or not np.isfinite(effect):
        return None
    lam = PROBE_STRENGTH * (target[first] - correct[first]) / effect
    for _ in range(ITERATIONS):
        if not (np.isfinite(lam) and lam > 0):
            return None
        now = np.array(penalised_run(X, y, lr, steps, penalty, lam)[1])
        moved = np.array(penalised_run(X, y, lr, steps, penalty, lam * 1.001)[1])
        slope = (moved - now) / (lam * 1e-3)
        if not (np.isfinite(slope).all() and np.isfinite(now).all()) or slope @ slope == 0:
            return None
        change = float(slope @ (target - now) / (slope @ slope))
        lam += change
        if abs(change) <= 1e-7 * abs(lam):
            break
    return lam if np.isfinite(lam) and lam > 0 else None


def penalty_added(target: torch.Tensor, correct: torch.Tensor, X: torch.Tensor,
                  y: torch.Tensor, lr: float, final: torch.Tensor | None,
                  right_final: torch.Tensor | None,
                  matches: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], bool],
                  parts: Callable[[torch.Tensor, torch.Tensor], bool],
                  contradicted: Callable[[torch.Tensor], bool] | None = None
                  ) -> tuple[str, str] | None:
    """``penalty-added`` and its advice when one kind of penalty, at a fitted strength, gives
    the student's losses (the message says so of ``final`` ``w`` and ``b`` too where they are
    that run's), or ``None``.

    Args:
        target: the student's losses (one per step).
        correct: the grader's losses.
        final: the student's final ``w`` and ``b`` as one vector, or ``None``.
        right_final: the grader's final ``w`` and ``b`` (with ``final``).
        matches: ``matches(got, replay, right)``: whether a student's values are a replay's
            and the right run's are not (the tolerance that names replayed mistakes).
        parts: ``parts(a, b)``: whether two losses differ beyond that tolerance.
        contradicted: ``contradicted(params)``: whether a penalised run's final ``w`` and
            ``b`` (one vector) are ruled out by what the call returned (the grader's own,
            where the penalised run's are not): such a fit is no cause.
    """
    steps = len(target)
    if steps < 2 or len(correct) != steps or not torch.isfinite(target).all():
        return None
    first = next((k for k in range(steps) if parts(target[k:k + 1], correct[k:k + 1])), None)
    if first is None or first == 0:  # the starting loss is the same in every member
        return None
    Xn, yn = X.detach().double().numpy(), y.detach().double().numpy()
    goal, right = target.double().numpy(), correct.double().numpy()
    # fitted on the first steps (a long run's tail adds time, not evidence about lam), then
    # compared there, and only a kind that matches them is run and compared in full
    head = min(steps, max(FIT_STEPS, first + FIT_STEPS // 2))
    found = []  # (how far from the losses, relative; penalty; strength; final matches)
    for penalty in FAMILY:
        with np.errstate(all="ignore"):  # a strength tried on the way may diverge
            lam = _fit(goal[:head], Xn, yn, lr, penalty, right[:head], first)
        if lam is None or not matches(target[:head], torch.tensor(
                penalised_run(Xn, yn, lr, head, penalty, lam)[1]), correct[:head]):
            continue
        params, losses = penalised_run(Xn, yn, lr, steps, penalty, lam)
        if contradicted is not None and contradicted(torch.tensor(params)):
            continue
        if matches(target, torch.tensor(losses), correct):
            found.append((float(np.max(np.abs(goal - losses) / (1e-9 + np.abs(goal)))),
                          penalty, lam, final is not None and right_final is not None
                          and matches(final, torch.tensor(params), right_final)))
    if not found or len({p.norm for _, p, _, _ in found}) != 1:
        return None  # none, or L1 and L2 both fit: this run cannot tell them apart
    found.sort(key=lambda f: f[0])
    _, penalty, lam, both = found[0]
    told = penalty.told(lam)
    if any(f[1].shown == penalty.shown and f[1].on_b != penalty.on_b for f in found):
        told += " (whether b was penalised too, this run cannot tell)"
    # an L2 penalty in the loss and weight decay take the same steps; only the recorded losses
    # tell them apart, by the penalty's own (small) value: where both fit, both are said
    other = [f for f in found if f[1].shown != penalty.shown]
    if other:
        told += f", or with {other[0][1].told(other[0][2])}: your losses fit both"
    # the losses are the evidence; the final w and b are named too where they match (an L1
    # penalty makes small weights chatter around 0, and which side each step lands on is
    # float32 rounding, so its final weights need not be the replay's)
    what = "The losses and the final w and b" if both else "The losses"
    return "penalty-added", (f"{what} match gradient descent with {told}; the strength is "
                             "fitted to your losses. train_logreg minimises the plain mean binary "
                             "cross-entropy, with no penalty on w or b and no weight decay: "
                             "remove it.")
