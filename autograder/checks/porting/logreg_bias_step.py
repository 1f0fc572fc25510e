"""q1_logreg: w and b stepped with different learning rates (``bias-step-size``, blind round zn).

A loop that steps w by ``lr`` but b by something else (the lesson's 0.5 copied into the bias
line, ``lr / 2``, ``lr * 2``, no lr at all, or a separate optimizer or param group for b with
its own lr) is the lesson's run at the lesson's lr and wrong at any other. Asked on the failing
data with one step, such a run moves w by exactly ``-lr * grad_w`` and b by ``-lr_b * grad_b``
(both gradients at the starting zeros): ``lr_b`` is fitted from that answer, and the name is
kept only when it differs from ``lr`` and a two-step run (the second step's gradient depends on
both) is the float64 replay with w stepped by ``lr`` and b by ``lr_b``. Only on the failing path:
a right answer costs nothing more. b's step scaled by m has its own name
(``update-scaled-by-m``), given earlier.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..closeness import is_float
from ..result import Verdict, with_probe
from .common import allclose
from .logreg_advice import UNEXPLAINED
from .logreg_diagnosis import LESSON_LR, MATCH_ATOL, MATCH_RTOL, RTOL

NAME = "bias-step-size"
#: The smallest |grad_b| at the zeros that fits a step size (balanced labels give about 0).
MIN_GRAD_B = 0.02


def _replay(X: torch.Tensor, y: torch.Tensor, lr: float, lr_b: float,
            steps: int) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
    """Gradient descent in float64 with w stepped by ``lr`` and b by ``lr_b``."""
    X64, y64 = X.double(), y.double()
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X64 @ w + b, y64)
        losses.append(float(loss.detach()))
        gw, gb = torch.autograd.grad(loss, (w, b))
        with torch.no_grad():
            w -= lr * gw
            b -= lr_b * gb
    return w.detach(), b.detach(), losses


def _probe_data(X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The failing data, or (labels nearly balanced, b's first gradient about 0) its rows of
    label 1 and a third of its rows of label 0."""
    if abs(0.5 - float(y.double().mean())) >= MIN_GRAD_B:
        return X, y
    ones, zeros = (y == 1).nonzero().reshape(-1), (y == 0).nonzero().reshape(-1)
    rows = torch.cat([ones, zeros[: max(1, len(zeros) // 3)]]).sort().values
    return X[rows], y[rows]


def _params(got: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        return None
    w, b, losses = got
    if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor) and b.numel() == 1
            and isinstance(losses, list) and all(is_float(v) for v in losses)):
        return None
    return w.detach().cpu().double().reshape(-1), b.detach().cpu().double().reshape(-1)


def step_size_of_b(train: Callable[[torch.Tensor, torch.Tensor, int], Any], X: torch.Tensor,
                   y: torch.Tensor, lr: float) -> tuple[float, dict] | None:
    """b's step size when it is not ``lr`` while w's is (``train(X, y, steps)``: the student's
    ``(w, b, losses)`` at rate ``lr``, or None when the call failed), with the calls made."""
    X, y = _probe_data(X, y)
    one = _params(train(X.clone(), y.clone(), 1))
    w_one, b_one, _ = _replay(X, y, lr, lr, 1)
    grad_b = -float(b_one) / lr
    if one is None or abs(grad_b) < MIN_GRAD_B or one[0].shape != w_one.shape \
            or not allclose(one[0], w_one, RTOL, RTOL * float(w_one.abs().max())):
        return None  # w not the one-step answer: not this class
    lr_b = -float(one[1]) / grad_b
    if lr_b <= 0 or abs(lr_b - lr) <= 1e-3 * lr:
        return None  # b at the zeros, moved the wrong way, or at lr: another mistake
    two = _params(train(X.clone(), y.clone(), 2))
    w_two, b_two, _ = _replay(X, y, lr, lr_b, 2)
    right = torch.cat(_replay(X, y, lr, lr, 2)[:2])
    replay = torch.cat([w_two, b_two])
    if two is None or two[0].shape != w_two.shape or allclose(right, replay, MATCH_RTOL,
                                                               MATCH_ATOL) \
            or not allclose(torch.cat(two), replay, MATCH_RTOL, MATCH_ATOL):
        return None
    return lr_b, {"id": NAME, "established": f"after one step w moved by lr = {lr:.4g} times "
                  f"its gradient and b by {lr_b:.4g} times its own; two steps are the replay "
                  "with those step sizes", "calls": [
                      {"steps": 1, "w": one[0].tolist(), "b": one[1].tolist()},
                      {"steps": 2, "w": two[0].tolist(), "b": two[1].tolist()}]}


def _which(lr_b: float, lr: float) -> str:
    """What b's step size looks like: the lesson's lr, 1 (no lr), or a multiple of lr."""
    if abs(lr_b - LESSON_LR) <= 1e-3 * LESSON_LR:
        return f"{lr_b:.4g}, the lesson's lr written into b's update"
    if abs(lr_b - 1.0) <= 1e-3:
        return "1: b's update has no lr (b -= b.grad)"
    return f"{lr_b:.4g} ({lr_b / lr:.4g} times lr)"


def bias_step(verdict: Verdict, train: Callable[[torch.Tensor, torch.Tensor, int], Any],
              X: torch.Tensor, y: torch.Tensor, lr: float) -> Verdict:
    """An unnamed wrong ``verdict`` named ``bias-step-size`` when ``step_size_of_b`` finds b
    stepping by another rate than w."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    found = step_size_of_b(train, X, y, lr)
    if found is None:
        return verdict
    lr_b, probe = found
    told = (f"Asked with steps=1 and steps=2 at lr={lr:.4g}, w took the step lr * w.grad but b "
            f"took a step size of {_which(lr_b, lr)}. b is a parameter like w: both step by "
            "the same lr, the argument: w -= lr * w.grad and b -= lr * b.grad (one optimizer, "
            "one param group, at lr). A step size of b's own is right only where it happens to "
            "equal lr.")
    message = verdict.message.replace(UNEXPLAINED, told) if UNEXPLAINED in verdict.message \
        else f"{verdict.message.rstrip()} {told}"
    return with_probe(verdict, probe, misconception=NAME, message=message)
