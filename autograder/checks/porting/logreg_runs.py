"""q1_logreg: the grader's training runs (float64, the oracle), correct or with one known
mistake replayed, kept per data set.

A check may ask for the same run more than once (the judgement, the diagnosis of a wrong
answer, the probes), and a submission's checks draw the same data sets from its seed (the
losses and the final ``w`` and ``b`` of each draw are two checks), so the runs of the thread's
last ``KEPT_DATA_SETS`` data sets are kept, keyed by the data's values. A run is kept as it
stands (``_Run``): a replay that parted from the student's losses stops there
(``replayed_losses``), and a later ask for the whole run carries it on from where it
stopped, with the same operations in the same order, so to the same bits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from . import logreg_loops as loops
from .logistic_forms import FORMS
from .logreg_scaled import step_factors

#: Where a loss that clamps the logits (a NumPy overflow habit) cuts their gradient off.
LOGIT_CLAMP = 30.0

#: A hand-written logistic loss replayed (``logistic_forms.FORMS``, ``logreg_lossform``):
#: ``"loss-form:<key>"``, or ``"loss-form:<key>@<slope>"`` where the slope its ``max(z, 0)``
#: takes at ``z = 0`` is not ``clamp(min=0)``'s 1 (``relu``: 0, ``torch.maximum``: 0.5); the
#: first step's logits are all exactly 0, so that slope decides the first update.
FORM_PREFIX = "loss-form:"
#: The right loss with another slope at ``z = 0`` (``logreg_at_zero``): ``"kink-at-zero:<s>"``,
#: each logit exactly 0 stepping by ``s - y`` (a kink's one-sided slope) instead of ``0.5 - y``.
KINK_PREFIX = "kink-at-zero:"

#: ``reference_run``'s answer: the final ``w`` and ``b`` and the per-step losses
Run = tuple[torch.Tensor, torch.Tensor, list[float]]
#: The replay of ``F.binary_cross_entropy(torch.sigmoid(z), y)``, told as ``sigmoid-log``
SIGMOID_BCE = "sigmoid-bce"
_RUNS = threading.local()  # the judge grades submissions on threads of one process
#: Data sets whose runs a thread keeps (q1's checks draw 3 + 3 + 4 + 2, the first three twice)
KEPT_DATA_SETS = 8


def _loss(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
          mistake: str | None) -> torch.Tensor:
    # without the bias (the NumPy series' model), b's gradient is 0 and it stays at 0
    logits = X @ w + (0 * b if mistake == "bias-left-out" else b)
    if mistake is not None and mistake.startswith(FORM_PREFIX):
        return _form_loss(logits, y, mistake)
    if mistake is not None and mistake.startswith(KINK_PREFIX):  # the value kept, the slope moved
        rows = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
        slope = float(mistake.removeprefix(KINK_PREFIX))
        return (rows + (slope - 0.5) * logits * (logits == 0)).mean()
    if mistake == "logits-clamped":
        logits = logits.clamp(-LOGIT_CLAMP, LOGIT_CLAMP)
    if mistake == "sigmoid-log":
        p = torch.sigmoid(logits)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    if mistake == SIGMOID_BCE:  # torch's BCE on a sigmoid: its log clamped at -100, finite
        return F.binary_cross_entropy(torch.sigmoid(logits), y)
    reduction = "sum" if mistake == "sum-not-mean" else "mean"
    return F.binary_cross_entropy_with_logits(logits, y, reduction=reduction)


def form_mistake(key: str, kink: float | None = None) -> str:
    """The replayed mistake of the form ``key`` (``kink``: its max's slope at z = 0)."""
    return FORM_PREFIX + key + ("" if kink is None else f"@{kink}")


def kink_mistake(slope: float) -> str:
    """The replayed mistake of a loss whose slope at ``z = 0`` is ``slope - y``."""
    return f"{KINK_PREFIX}{slope!r}"


def _form_loss(logits: torch.Tensor, y: torch.Tensor, mistake: str) -> torch.Tensor:
    """The mean over the rows of the form's per-row loss (``form_mistake``'s spelling)."""
    key, _, kink = mistake.removeprefix(FORM_PREFIX).partition("@")
    rows = FORMS[key].loss(logits, y)
    if kink:  # FORMS' max(z, 0) is clamp(min=0), slope 1 at 0: the slope moved, the value kept
        rows = rows + (float(kink) - 1.0) * logits * (logits == 0)
    return rows.mean()


class _Run:
    """One training run from the starting zeros, carried on step by step on request."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor, lr: float, mistake: str | None,
                 dtype: torch.dtype, path: list[torch.Tensor] | None = None):
        self.X = loops.rescaled(X.to(dtype, copy=True), mistake)
        self.y = y.to(dtype, copy=True)
        self.lr, self.mistake, self.path = lr, mistake, path
        self.losses: list[float] = []
        self.closed = _ClosedForm(self.X, self.y) if mistake is None and dtype == torch.float64 \
            else None
        if self.closed is not None:  # w and b are views of the closed form's arrays
            self.w, self.b = self.closed.w_b()
        else:
            self.w = torch.zeros(self.X.shape[1], dtype=dtype, requires_grad=True)
            self.b = torch.zeros(1, dtype=dtype, requires_grad=True)
        self._record()

    def advance(self, steps: int, keep_going: Callable[[int, float], bool] = lambda i, v: True
                ) -> None:
        """Train until ``steps`` updates are made, or until ``keep_going(step, loss)`` is false
        for the loss just recorded."""
        while len(self.losses) < steps:
            self.losses.append(self.closed.step(self.lr) if self.closed is not None
                               else self._autograd_step())
            self._record()
            if not keep_going(len(self.losses) - 1, self.losses[-1]):
                return

    def _autograd_step(self) -> float:
        """One update through autograd, with the replayed mistake; the loss recorded for it."""
        X, y, w, b, mistake = self.X, self.y, self.w, self.b, self.mistake
        loss = _loss(X, y, w, b, mistake)
        if mistake not in ("not-cleared", "w-not-cleared"):
            w.grad = None
        if mistake not in ("not-cleared", "b-not-cleared"):
            b.grad = None
        loss.backward()
        factors = step_factors(mistake, X.shape[0])
        with torch.no_grad():
            if factors is None:
                w -= self.lr * w.grad
                b -= self.lr * b.grad
            else:  # the step scaled by the batch size (logreg_scaled)
                w -= self.lr * factors[0] * w.grad
                b -= self.lr * factors[1] * b.grad
            if mistake == "loss-after-update":
                loss = _loss(X, y, w, b, None)
        return loss.item()

    def _record(self) -> None:
        if self.path is not None:
            self.path.append(torch.cat([self.w.detach(), self.b.detach()]))


class _ClosedForm:
    """The correct float64 run's step without autograd: the loss (the binary cross-entropy with
    logits, in its stable form) and its gradient, ``X.T @ (sigmoid(z) - y) / m`` and the mean
    of ``sigmoid(z) - y``, in NumPy. Written out by hand because autograd's bookkeeping was
    most of the judge's time on a long run (a 500-step run: about 50 ms with autograd, 8 ms
    here, the same values to about 1e-13); replays of mistakes keep autograd (``_Run``)."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor):
        self.X, self.y = X.detach().numpy(), y.detach().numpy()
        self.m = self.X.shape[0]
        self.w, self.b = np.zeros(self.X.shape[1]), np.zeros(1)

    def w_b(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``w`` and ``b`` as tensors sharing this run's arrays (each step updates them)."""
        return torch.from_numpy(self.w), torch.from_numpy(self.b)

    def step(self, lr: float) -> float:
        """One update at rate ``lr``; the loss before it."""
        z = self.X @ self.w + self.b[0]
        e = np.exp(-np.abs(z))
        loss = float(np.mean(np.maximum(z, 0.0) - z * self.y + np.log1p(e)))
        sigmoid = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        residual = (sigmoid - self.y) / self.m
        self.w -= lr * (self.X.T @ residual)
        self.b -= lr * residual.sum()
        return loss


def _kept_runs(X: torch.Tensor, y: torch.Tensor) -> dict:
    """The thread's kept runs of the data set ``X`` and ``y`` (new and empty when it is not
    one of the last ``KEPT_DATA_SETS`` asked for; the oldest is then dropped)."""
    data = (tuple(X.shape), X.dtype, X.detach().numpy().tobytes(), y.detach().numpy().tobytes())
    kept: OrderedDict = _RUNS.__dict__.setdefault("data_sets", OrderedDict())
    runs = kept.get(data)
    if runs is None:
        runs = kept[data] = {}
        while len(kept) > KEPT_DATA_SETS:
            kept.popitem(last=False)
    kept.move_to_end(data)
    return runs


def _kept_run(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int, mistake: str | None,
              dtype: torch.dtype) -> _Run:
    runs = _kept_runs(X, y)
    key = (lr, steps, mistake, dtype)
    if key not in runs:
        runs[key] = _Run(X, y, lr, mistake, dtype)
    return runs[key]


def reference_run(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
                  mistake: str | None = None, dtype: torch.dtype = torch.float64) -> Run:
    """The grader's training run, correct or with one known ``mistake`` replayed.

    Returns:
        ``(w, b, losses)``: final parameters (detached, ``dtype``) and the per-step losses.
    """
    run = _kept_run(X, y, lr, steps, mistake, dtype)
    run.advance(steps)
    return run.w.detach().clone(), run.b.detach().clone(), list(run.losses)


def replayed_losses(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
                    mistake: str | None, dtype: torch.dtype, count: int,
                    close: Callable[[int, float], bool]) -> list[float]:
    """``reference_run(...)[2][:count]``, except that the replay stops at the first loss
    ``close(step, loss)`` rejects: the list then ends with that loss. For a comparison that
    holds only if every one of those losses passes ``close``, the answer is the same."""
    run = _kept_run(X, y, lr, steps, mistake, dtype)
    if run.losses and not all(close(i, v) for i, v in enumerate(run.losses[:count])):
        return run.losses[:count]
    run.advance(min(count, steps), close)
    return run.losses[:count]


def update_path(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int) -> list[torch.Tensor]:
    """The grader's ``w`` and ``b`` (one float64 vector) after 0, 1, ... ``steps + loops.SLACK``
    updates, kept like ``reference_run``'s runs."""
    runs = _kept_runs(X, y)
    key = ("path", lr, steps)
    if key not in runs:
        path: list[torch.Tensor] = []
        _Run(X, y, lr, None, torch.float64, path).advance(steps + loops.SLACK)
        runs[key] = path
    return runs[key]
