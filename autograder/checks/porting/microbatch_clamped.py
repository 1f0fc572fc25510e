"""q2_microbatch: the logits clamped to [-c, c] before the loss (``logits-clamped``, blind
round zj).

``z = torch.clamp(X_j @ w, -20, 20)`` ("keep the logits in a safe range, as in the NumPy
series", where ``exp`` overflowed) then ``F.binary_cross_entropy_with_logits(z, y_j)`` is right
while every logit stays within ±c (the lesson's w = 0, the public test), but a clamped logit
passes no gradient: a row past the clamp adds 0 instead of ``(sigmoid(z_i) - y_i) x_i``. The
saturated problem (``microbatch_saturated``, logits 25-40 on misclassified rows) shows it. An
unnamed wrong answer there is replayed in closed form (float64) with the logits clamped at each
of a few bounds ``c``; it is named when a bound's replay, not the right answer, fits and the
student's answer at a second draw (``w`` times -1.25, the labels flipped, the sizes reversed:
logits 31-50 there) fits the same bound. Only a failing answer gets here; only a fit costs a
call.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from .common import allclose, call_named
from .microbatch_mistakes import ALSO_STALE
from .microbatch_saturated import _replays, named

NAME = "logits-clamped"

#: The bounds tried, smallest first (float32's exp overflows past 88.7).
BOUNDS = (5.0, 8.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 88.0)


def replay(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, c: float) -> torch.Tensor:
    """The full-batch mean gradient (float64) with the logits clamped to [-c, c]: a row past
    the clamp adds nothing (the weights b_j / B make the micro-batches' sum the mean)."""
    X64, w64 = X.double(), w.detach().double()
    z = X64 @ w64
    inside = (z.abs() <= c).double()
    return X64.T @ ((torch.sigmoid(z) - y.double()) * inside) / X.shape[0]


def fitted(got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           stale: torch.Tensor | None, rtol: float, atol: float) -> list[tuple[float, bool]]:
    """``(c, stale grad kept)`` of each bound whose replay ``got`` matches where the replay is
    not the right answer (some logit past c)."""
    if not isinstance(got, torch.Tensor) or got.shape != w.shape:
        return []
    values = got.detach().cpu().double()
    z = (X.double() @ w.detach().double()).abs()
    found = []
    for c in BOUNDS:
        if not bool((z > c).any()):
            continue  # nothing clamped: the replay is the right answer
        pattern = replay(w, X, y, c)
        for extra in ([None] if stale is None else [None, stale.double()]):
            if allclose(values, pattern if extra is None else pattern + extra, rtol, atol):
                found.append((c, extra is not None))
    return found


def _bounds(cs: list[float]) -> str:
    shown = [f"{c:g}" for c in cs]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def saturated(verdict: Any, accumulated_grad: Callable, got: Any, w: torch.Tensor,
              X: torch.Tensor, y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
              rtol: float, atol: float) -> Any:
    """``verdict`` on the saturated problem: named ``logits-clamped`` when ``got`` is the replay
    of the logits clamped at a bound and the answer at the second draw (``second_draw``) fits
    the same bound and not a sigmoid then log; else ``sigmoid-log`` where that fits
    (``microbatch_saturated.named``: the two zero the same rows here)."""
    told = named(verdict, got, w, X, y, sizes)
    if verdict.ok or verdict.misconception is not None:
        return told
    found = fitted(got, w, X, y, stale, rtol, atol)
    if not found:
        return told
    w2, X2, y2, sizes2 = second_draw(w, X, y, sizes)
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2.clone().requires_grad_(),
                          X2.clone(), y2.clone(), list(sizes2))
    second = {c for c, _ in fitted(again, w2, X2, y2, None, rtol, atol)}
    confirmed = [(c, kept) for c, kept in found if c in second]
    if not confirmed or not isinstance(again, torch.Tensor) or any(
            torch.allclose(again.detach().cpu().double(), r, rtol=1e-4, atol=1e-5,
                           equal_nan=True)
            for r in _replays(w2, X2, y2, sizes2) if again.shape == r.shape):
        return told
    cs, kept = [c for c, _ in confirmed], confirmed[0][1]
    z = (X.double() @ w.detach().double()).abs()
    past = int((z > cs[0]).sum())
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": f"logits clamped to ±{_bounds(cs)}, again at a second w "
                                   "with misclassified logits from 6 to 95",
        "calls": [{"w": "-1.25 w", "y": "1 - y", "sizes": sizes2}]}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{verdict.message.rstrip()} It matches the gradient with the logits clamped to "
        f"[-c, c] before the loss (c = {_bounds(cs)} fits; {past} of the {len(z)} logits here "
        "are past it), and again at a second w with logits from 6 to 95. Clamping the logits "
        "zeros the gradient of every example past the clamp: torch.clamp passes no gradient "
        "outside [-c, c], so those rows (here misclassified ones, whose gradient is the "
        "largest) add nothing. Leave the logits as they are and use "
        "F.binary_cross_entropy_with_logits(z, y) (or F.logsigmoid), which is stable for any "
        f"logit without a clamp.{ALSO_STALE if kept else ''}"))


#: The second draw's misclassified logits (label 0), most telling first: 16 (past a clamp at
#: 15, not past float32's sigmoid rounding to 1.0 at about 17) and 19 (the other way round)
#: tell a clamp from a sigmoid then log; the rest set each bound apart.
MAGNITUDES = (16.0, 19.0, 22.0, 12.0, 27.0, 9.0, 35.0, 6.0, 45.0, 70.0, 14.0, 95.0)


def second_draw(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, sizes: list[int]
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """``w`` times -1.25, the labels flipped, the micro-batches in reverse order, and the first
    rows misclassified at the positive logits ``MAGNITUDES`` (label 0)."""
    w2 = -1.25 * w.detach()
    X2, y2 = _reversed_rows(X, sizes).clone(), _reversed_rows(1 - y, sizes).clone()
    along = w2 / float(w2 @ w2)
    for k, logit in enumerate(MAGNITUDES[:len(X2)]):
        X2[k] = (along * logit).to(X2.dtype)
        y2[k] = 0.0
    return w2, X2, y2, list(reversed(sizes))


def _reversed_rows(t: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """``t``'s micro-batches in reverse order (each one's rows kept together)."""
    return torch.cat(list(reversed(torch.split(t, sizes))))
