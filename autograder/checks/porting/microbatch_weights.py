"""q2_microbatch: the micro-batch weight ``b_j / B`` put in the wrong place.

The weight belongs on each micro-batch's mean loss, ``(bce(Xj @ w, yj) * b_j / B).backward()``
(``weight=`` of that value with the default mean is the same thing). Handed to the loss
function as ``pos_weight``, it scales only the positive-label terms and nothing weights the
micro-batch; folded into the labels (``bce(z, yj * b_j / B)``), it moves the targets instead;
written as ``B / b_j``, it weights each micro-batch by the inverse of its share. (On the logits:
``weight-on-logits``; on w.grad after the backward: ``accumulated-grad-rescaled``.) Each is
replayed in closed form (float64); a gradient is named when exactly one replay matches it, the
stale grad kept or not, where the replay is neither the right answer nor a known factor of it
(``misplaced_weight``), and the check keeps the name only when the student's answer at a second
``w`` matches the same replay (``confirmed``).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .common import allclose, call_named

#: What replaying the right weight on the loss, then each wrong place, computes per
#: micro-batch: ``dloss/dz`` from ``(p, yj, c)``, with p = sigmoid(z) and c = b_j / B, and the
#: factor on the micro-batch's mean (``c``: the weight on the loss, kept; ``1``: none).
PLACES: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor],
                        Callable[[float], float]]] = {
    "weight-as-pos-weight": (lambda p, yj, c: p * (1 - yj + c * yj) - c * yj, lambda c: 1.0),
    "weight-on-labels": (lambda p, yj, c: p - c * yj, lambda c: 1.0),
    "weight-inverted": (lambda p, yj, c: p - yj, lambda c: 1 / c),
}

#: What every wrong place is also told: where the weight goes.
PLACE = ("Weight each micro-batch's mean loss, not the loss function's arguments: "
         "(bce(Xj @ w, yj) * bj / B).backward() (weight=bj / B with the default mean is the "
         "same).")

TOLD = {
    "weight-as-pos-weight": (
        "It matches b_j / B given to the loss as pos_weight (bce(Xj @ w, yj, pos_weight=bj / "
        "B)) instead of multiplying the micro-batch's mean loss: pos_weight scales only the "
        "positive-label (y = 1) terms, so each micro-batch adds its unweighted mean with those "
        "terms shrunk, and the sum is not the full-batch mean, at any w. "),
    "weight-on-labels": (
        "It matches b_j / B applied to the labels (bce(Xj @ w, yj * bj / B)) instead of to the "
        "micro-batch's mean loss: that moves the targets toward 0 and leaves each micro-batch "
        "unweighted. "),
    "weight-inverted": (
        "It matches each micro-batch's mean loss multiplied by B / b_j, the weight inverted "
        "(loss / (bj / B)): a micro-batch's share of the B examples is b_j / B, so a larger "
        "micro-batch must count more, not less. "),
}


def replay(place: str, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           sizes: list[int]) -> torch.Tensor:
    """The accumulated gradient (float64) with the weight in ``place``."""
    slope, factor = PLACES[place]
    B, start, total = sum(sizes), 0, torch.zeros(X.shape[1], dtype=torch.float64)
    w64 = w.detach().double()
    for size in sizes:
        Xj, yj = X[start:start + size].double(), y[start:start + size].double()
        c = size / B
        total = total + factor(c) * Xj.T @ slope(torch.sigmoid(Xj @ w64), yj, c) / size
        start += size
    return total


def fitted(got: torch.Tensor, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           sizes: list[int], stale: torch.Tensor | None, right: torch.Tensor,
           known: list[float], rtol: float, atol: float) -> tuple[str, bool] | None:
    """``(place, stale grad kept)`` of the one replay ``got`` matches (with the stale grad
    added, when there is one), among replays that are neither ``right`` nor a ``known``
    factor times it; None when none or several match."""
    values = got.detach().double().reshape(-1)
    found = []
    for place in PLACES:
        pattern = replay(place, w, X, y, sizes)
        if any(allclose(pattern, c * right, rtol, atol) for c in [1.0, *known]):
            continue
        for extra in ([None] if stale is None else [None, stale.double().reshape(-1)]):
            if allclose(values, pattern if extra is None else pattern + extra, rtol, atol):
                found.append((place, extra is not None))
    return found[0] if len(found) == 1 else None


def misplaced_weight(got: torch.Tensor, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                     sizes: list[int], stale: torch.Tensor | None, right: torch.Tensor,
                     known: list[float], rtol: float, atol: float,
                     also_stale: str) -> tuple[str, str] | None:
    """``(name, what it is told)`` when ``fitted`` finds the place; ``also_stale`` is added
    when the stale grad was kept too."""
    found = fitted(got, w, X, y, sizes, stale, right, known, rtol, atol)
    if found is None:
        return None
    place, kept = found
    return place, TOLD[place] + PLACE + (also_stale if kept else "")


def second_w(w: torch.Tensor) -> torch.Tensor:
    """Another point: ``w`` halved and negated, a fresh leaf with no grad."""
    return (-0.5 * w.detach()).requires_grad_()


def confirmed(verdict: Any, accumulated_grad: Callable, w: torch.Tensor, X: torch.Tensor,
              y: torch.Tensor, sizes: list[int], diagnose: Callable[..., tuple[str | None, str]],
              unnamed: Callable[[], Any]) -> Any:
    """``verdict``, when it names a place of ``PLACES`` and the student's ``accumulated_grad``
    at ``second_w(w)`` (on copies of ``X``, ``y``, ``sizes``) is diagnosed (``diagnose(got, w,
    X, y, sizes, None)``) as the same place; else ``unnamed()``: the judgement without these
    replays. Only such a verdict costs a call."""
    if verdict.ok or verdict.misconception not in PLACES:
        return verdict
    w2 = second_w(w)
    got, _ = call_named(accumulated_grad, "accumulated_grad", (), w2, X.clone(), y.clone(),
                        list(sizes))
    if isinstance(got, torch.Tensor) and got.shape == w.shape and diagnose(
            got.detach().clone(), w2.detach(), X, y, sizes, None)[0] == verdict.misconception:
        return verdict
    return unnamed()
