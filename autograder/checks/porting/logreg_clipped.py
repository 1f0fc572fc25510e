"""q1_logreg: a training loop that clips the gradient before each update (``gradient-clipped``).

``clip_grad_norm_([w, b], max_norm=c)``, a hand-written ``g / max(1, g.norm() / c)``, one of
them on each tensor or on ``w`` alone, or a clamp of the gradient's entries to ``±c``
(``clip_grad_value_``, ``w.grad.clamp_(-c, c)``): the run is the lesson's wherever no
gradient is over ``c``, and parts from it on unscaled features, whose first gradients are
large. Without more evidence the regimes' probe only asks whether the gradient is clipped
(``logreg_regime_draws.regime_classes``). Here ``c`` is read from the student's own first step
(asked again with ``steps=1``: starting from zeros, ``w`` and ``b`` after one update are
``-lr`` times the gradient it used), and the plain loop is replayed in float64 with that
clip: the name is given only when the replay, and not the right run, gives the student's
losses and final ``w`` and ``b`` on the failing call.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..closeness import float_list
from ..describing import tolerance_text
from ..result import Verdict, with_probe
from .common import allclose
from .logreg_diagnosis import ATOL, RTOL, matches
from .logreg_runs import reference_run

NAME = "gradient-clipped"

#: Each way of clipping, as told (``{c}``: the cap read from the first step).
WAYS = {
    "norm": "the gradient of w and b together rescaled to norm at most {c} before each update "
            "(torch.nn.utils.clip_grad_norm_([w, b], max_norm={c}), or g * min(1, {c} / "
            "g.norm()) by hand)",
    "each-norm": "w's gradient and b's each rescaled to norm at most {c} before each update "
                 "(clip_grad_norm_ on each tensor, or w.grad * min(1, {c} / w.grad.norm()))",
    "w-norm": "w's gradient rescaled to norm at most {c} before each update, b's left as it is "
              "(clip_grad_norm_(w, max_norm={c}))",
    "value": "every entry of the gradient clamped to ±{c} before each update "
             "(torch.nn.utils.clip_grad_value_([w, b], {c}), or w.grad.clamp_(-{c}, {c}))",
}

ADVICE = ("The contract's update is plain gradient descent, w -= lr * w.grad and b -= lr * "
          "b.grad, however large the gradient: clipping belongs to a training recipe that "
          "asks for it, and it changes every step whose gradient is over the cap ({over}). "
          "Remove the clipping.")
#: What shows the cap was reached on this problem, per way (``g``: the first gradient).
OVER = {"norm": ("here the first gradient's norm is {size}", lambda g, n: float(g.norm())),
        "each-norm": ("here w's first gradient has norm {size}", lambda g, n: float(g[:n].norm())),
        "w-norm": ("here w's first gradient has norm {size}", lambda g, n: float(g[:n].norm())),
        "value": ("here the first gradient's largest entry is {size}",
                  lambda g, n: float(g.abs().max()))}


def clip(gw: torch.Tensor, gb: torch.Tensor, way: str, c: float
         ) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients ``(gw, gb)`` clipped ``way`` at ``c``."""
    def capped(g: torch.Tensor) -> torch.Tensor:
        norm = float(g.norm())
        return g * (c / norm) if norm > c else g

    if way == "value":
        return gw.clamp(-c, c), gb.clamp(-c, c)
    if way == "norm":
        norm = float(torch.cat([gw, gb]).norm())
        return (gw * (c / norm), gb * (c / norm)) if norm > c else (gw, gb)
    return capped(gw), (capped(gb) if way == "each-norm" else gb)


def replay(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int, way: str | None,
           c: float = 0.0) -> tuple[torch.Tensor, list[float]]:
    """The contract's loop in float64 with the gradient clipped ``way`` at ``c`` (None: not
    clipped): the final ``w`` and ``b`` as one vector, and the per-step losses."""
    X64, y64 = X.detach().double(), y.detach().double().reshape(-1)
    w = torch.zeros(X.shape[1], dtype=torch.float64)
    b = torch.zeros(1, dtype=torch.float64)
    losses = []
    for _ in range(steps):
        logits = X64 @ w + b
        losses.append(float(F.binary_cross_entropy_with_logits(logits, y64)))
        residual = (torch.sigmoid(logits) - y64) / X.shape[0]
        gw, gb = X64.T @ residual, residual.sum().reshape(1)
        if way is not None:
            gw, gb = clip(gw, gb, way, c)
        w, b = w - lr * gw, b - lr * gb
    return torch.cat([w, b]), losses


def caps(step: torch.Tensor, n: int) -> dict[str, float]:
    """The cap ``c`` each way would have used for a first update ``step`` (w's ``n`` entries
    then b's, divided by ``-lr``: the gradient used)."""
    found = {"norm": float(step.norm()), "w-norm": float(step[:n].norm()),
             "value": float(step.abs().max())}
    found["each-norm"] = max(float(step[:n].norm()), float(step[n:].norm()))
    return found


def _vector(got: Any) -> torch.Tensor | None:
    w, b = got[0], got[1]
    if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None
    return torch.cat([w.detach().cpu().reshape(-1), b.detach().cpu().reshape(-1)]).double()


def _shown(c: float) -> str:
    """``c`` as told: a round number where it is one (to float32's rounding), else 4 digits."""
    for digits in range(4):
        if abs(round(c, digits) - c) <= 1e-5 * max(abs(c), 1.0):
            return f"{round(c, digits):g}"
    return f"{c:.4g}"


def clipped(verdict: Verdict, one_step: Callable[[], Any], X: torch.Tensor, y: torch.Tensor,
            lr: float, steps: int, got: Any) -> Verdict:
    """An unnamed wrong ``verdict`` named ``gradient-clipped`` when a clipped replay, with its
    cap read from the student's first step (``one_step()``: the answer with ``steps=1`` on
    the same data, or None), gives the losses and the final ``w`` and ``b`` of ``got``."""
    if verdict.ok or verdict.misconception is not None or steps < 2 \
            or not (isinstance(got, (tuple, list)) and len(got) == 3 and float_list(got[2])
                    and len(got[2]) == steps) or _vector(got) is None:
        return verdict
    first = one_step()
    moved = None if first is None else _vector(first)
    n = X.shape[1]
    if moved is None or moved.numel() != n + 1 or not torch.isfinite(moved).all() or lr <= 0:
        return verdict
    w_right, b_right, right = reference_run(X, y, lr, steps)
    final, right_final = _vector(got), _vector((w_right, b_right))
    target, right = (torch.tensor(v, dtype=torch.float64) for v in (got[2], right))
    atol = max(ATOL, RTOL * float(right_final.abs().max()))
    fits = {}
    for way, c in caps(-moved / lr, n).items():
        at, losses = replay(X, y, lr, steps, way, c) if c > 0 else (None, None)
        losses = None if losses is None else torch.tensor(losses, dtype=torch.float64)
        if at is not None and matches(target, losses, right) and final.shape == at.shape \
                and allclose(final, at, RTOL, atol):
            fits[way] = (c, _deviation(target, losses) + _deviation(final, at))
    if not fits:
        return verdict
    way = min(fits, key=lambda k: fits[k][1])  # where two ways give this run, the nearer
    c = _shown(fits[way][0])
    over, size = OVER[way]
    first = -replay(X, y, lr, 1, None)[0] / lr
    return with_probe(verdict, {
        "id": NAME, "established": f"{way} at c = {c} (read from the first step asked with "
        "steps=1): the replay gives the losses and w and b", "calls": [
            {"steps": 1, "got": moved.tolist()}]}, misconception=NAME, message=(
        f"{_advice_removed(verdict.message)} These are the losses and the w and b of the "
        f"contract's loop with {WAYS[way].format(c=c)}: the grader read c = {c} from your "
        "first step (asked again with steps=1 on the same data) and re-ran the plain loop "
        f"with that clip, which gives your run step for step. "
        f"{ADVICE.format(over=over.format(size=f'{size(first, n):.3g}'))}"))


def _deviation(got: torch.Tensor, replayed: torch.Tensor) -> float:
    """The largest relative gap between ``got`` and a replay (at the replay's scale)."""
    return float((got - replayed).abs().max() / max(float(replayed.abs().max()), 1e-12))


def _advice_removed(message: str) -> str:
    """The judgement's first sentences (what was returned and expected), without the advice
    that followed: what it said was established without the clip in view."""
    tolerance = f"{tolerance_text(RTOL, ATOL)}). "
    cut = message.find(tolerance)
    return message if cut < 0 else message[:cut + len(tolerance) - 1]
