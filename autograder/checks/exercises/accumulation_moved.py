"""q1_accumulation: a p that moved between the backward calls (an optimizer's step, an update,
an in-place change after each backward), recognised by replaying update rules on the
gradients ``square_grads`` returned (``moved_between_backwards``)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from ..closeness import close_lists
from ..describing import fmt

MOVED = "p-moved-between-backwards"
#: How close a replayed update rule must come to every gradient: a few float32 roundings per
#: step (the student's p, gradient and optimizer state are float32), far inside the check's
#: RTOL, so that rules whose moves differ by less than the check can see are not told apart
#: by it (they are all told) while those it can tell are.
FIT_RTOL, FIT_ATOL = 2e-6, 1e-9
#: The most gradients a longer run (``check_square_grads``) asks for to fit an update rule.
LONG_RUN = 6


def local_points(got: list[float], clear: bool) -> list[float]:
    """The values of p that each backward's own contribution was the gradient of (``2*p``):
    each returned gradient when cleared, the increase over the one before when not."""
    own = got if clear else [got[0]] + [b - a for a, b in zip(got, got[1:])]
    return [v / 2.0 for v in own]


def _sgd_replay(p0: float, n: int, clear: bool, lr: float, momentum: float = 0.0,
                decay: float = 0.0) -> list[float]:
    """The gradients ``square_grads`` returns when, after every backward, p takes a step of
    torch.optim.SGD (``decay`` is lr * weight_decay), in float64."""
    p, grad, buf, out = p0, 0.0, 0.0, []
    for k in range(n):
        grad = 2.0 * p if clear or k == 0 else grad + 2.0 * p
        out.append(grad)
        buf = lr * grad + decay * p + (momentum * buf if k else 0.0)
        p -= buf
    return out


def _scale_replay(p0: float, n: int, clear: bool, factor: float) -> list[float]:
    """The gradients returned when p is multiplied by ``factor`` after every backward."""
    points = [p0 * factor ** k for k in range(n)]
    return [2.0 * v for v in points] if clear else list(np.cumsum([2.0 * v for v in points]))


def _optimizer_replay(make: Callable, p0: float, n: int, clear: bool) -> list[float]:
    """The gradients returned when ``make([p]).step()`` runs after every backward (float64)."""
    p = torch.tensor(float(p0), dtype=torch.float64, requires_grad=True)
    opt, out = make([p]), []
    for _ in range(n):
        local = 2.0 * p.detach()
        p.grad = local.clone() if clear or p.grad is None else p.grad + local
        out.append(float(p.grad))
        opt.step()
    return out


#: Optimizers with an lr alone to fit: their name as told, and the optimizer for an lr. The
#: first step of each moves p by lr times a number of the gradient, so one move fits the lr.
OPTIMIZERS = {
    "Adam": lambda lr: lambda ps: torch.optim.Adam(ps, lr=lr),
    "AdamW": lambda lr: lambda ps: torch.optim.AdamW(ps, lr=lr),
    "RMSprop": lambda lr: lambda ps: torch.optim.RMSprop(ps, lr=lr),
    "Adagrad": lambda lr: lambda ps: torch.optim.Adagrad(ps, lr=lr),
}


def _lr_text(lr: float, default: float) -> str:
    return f"lr={lr:.3g}" + (" (its default)" if abs(lr - default) <= 1e-3 * default else "")


def _sgd_fits(got: list[float], p0: float, clear: bool) -> list[str]:
    """The SGD steps (an lr, with momentum, with weight decay) whose replay gives ``got``:
    each fitted by least squares on the moves of p between backwards, with at least one move
    more than it has parameters, and its replay within the check's tolerance of every
    gradient. Smallest rule first; none with a negative lr, momentum or decay."""
    points, n = local_points(got, clear), len(got)
    moves = [a - b for a, b in zip(points, points[1:])]  # how far each step took p down
    rows = {"lr": [got[k] for k in range(n - 1)],
            "momentum": [moves[k - 1] if k else 0.0 for k in range(n - 1)],
            "decay": points[:n - 1]}
    # cleared, the gradient is 2*p, so weight decay reads as a larger lr (one rule, told so)
    shapes = [("lr",), ("lr", "momentum")] + ([] if clear else [("lr", "decay"),
                                                                 ("lr", "momentum", "decay")])
    for shape in shapes:
        if len(moves) <= len(shape):
            continue
        matrix = np.array([rows[name] for name in shape]).T
        solution = np.linalg.lstsq(matrix, np.array(moves), rcond=None)[0]
        fit = dict(zip(shape, map(float, solution)))
        if not fit["lr"] > 0 or not 0 <= fit.get("momentum", 0) < 1 or fit.get("decay", 0) < 0:
            continue
        if fit.get("decay", 0) * abs(points[0]) > 100 * fit["lr"] * abs(got[0]):
            continue  # weight decay alone: p multiplied in place, told by _scale_fits
        if not close_lists(got, _sgd_replay(p0, n, clear, **fit), FIT_RTOL, FIT_ATOL):
            continue
        lr = fit["lr"]
        args = [_lr_text(lr, 1e-3)]
        if "momentum" in fit:
            args.append(f"momentum={fit['momentum']:.3g}")
        if "decay" in fit:
            args.append(f"weight_decay={fit['decay'] / lr:.3g}")
        rule = (f"a step of torch.optim.SGD({', '.join(args)}) (p -= lr * p.grad"
                f"{' with momentum' if 'momentum' in fit else ''})")
        if clear and "momentum" not in fit:
            rule += (f", the same as multiplying p by 1 - 2*lr = {1 - 2 * lr:.6g} in place "
                     f"(p.data *= {1 - 2 * lr:.6g}) or SGD with weight decay")
        return [rule]
    return []


def _scale_fits(got: list[float], p0: float, clear: bool) -> list[str]:
    points = local_points(got, clear)
    if len(got) < 3 or points[0] == 0:
        return []
    factor = points[1] / points[0]
    # cleared, a factor below 1 is an SGD step too, and told so (_sgd_fits)
    if not factor > 0 or abs(factor - 1) < 1e-6 or (clear and factor < 1):
        return []
    if not close_lists(got, _scale_replay(p0, len(got), clear, factor), FIT_RTOL, FIT_ATOL):
        return []
    return [f"p multiplied by {factor:.6g} in place (p.data *= {factor:.6g})"]


def _optimizer_fits(got: list[float], p0: float, clear: bool) -> list[str]:
    points, found = local_points(got, clear), []
    if len(got) < 3:
        return []
    for name, make in OPTIMIZERS.items():
        unit = _optimizer_replay(make(1.0), p0, 2, clear)
        unit_move = p0 - local_points(unit, clear)[1]
        if unit_move == 0:
            continue
        lr = (points[0] - points[1]) / unit_move
        if lr > 0 and close_lists(got, _optimizer_replay(make(lr), p0, len(got), clear),
                                  FIT_RTOL, FIT_ATOL):
            default = 1e-2 if name == "Adagrad" else 1e-3
            found.append(f"a step of torch.optim.{name}({_lr_text(lr, default)})")
    return found


def moved_between_backwards(got: list[float], p0: float, clear: bool, rtol: float, atol: float
                            ) -> str | None:
    """The hint when ``got`` are the gradients of ``p ** 2`` at a p that an update rule moved
    after every backward: the first gradient right (2*p0), the later ones what a replay of an
    optimizer's step (SGD with an lr, momentum or weight decay; Adam, AdamW, RMSprop,
    Adagrad), or of p multiplied in place, gives with a parameter fitted to the answer and
    checked on the gradients it was not fitted to (the first gradient compared at ``rtol`` and
    ``atol``, the check's). ``None`` when no rule fits."""
    if (len(got) < 3 or p0 == 0 or not all(math.isfinite(v) for v in got)
            or not close_lists(got[:1], [2.0 * p0], rtol, atol)):
        return None
    rules = _sgd_fits(got, p0, clear) + _scale_fits(got, p0, clear)
    rules += _optimizer_fits(got, p0, clear)
    if not rules:
        return None
    at = ", ".join(fmt(v) for v in local_points(got, clear)[:4])
    mode = ("with clear, every backward must give 2*p0" if clear else
            "without clearing, every backward must add 2*p0")
    return (f"The first gradient is right, the later ones are gradients of p ** 2 at other "
            f"values of p ({at}{', ...' if len(got) > 4 else ''}): p changed between the "
            f"backward calls. They match {' or '.join(rules)} after every backward. The "
            f"exercise never updates p: {mode}. Make the leaf once, build p ** 2 from it "
            "afresh and call backward; to clear, set p.grad = None (or p.grad.zero_(), or an "
            "optimizer's zero_grad()) and never call step() or change p.")
