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

from typing import Any, Callable

import torch

from ..result import with_probe
from .common import allclose, call_named
from .microbatch_mistakes import ALSO_STALE, ATOL, RTOL
from .microbatch_saturated import named, replays

NAME = "logits-clamped"

#: Round bounds a student writes (float32's exp overflows past 88.7), shown when one lies in
#: the fitted range.
BOUNDS = (5.0, 8.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 80.0, 88.0, 100.0)

#: The least bound fitted: a clamp keeps the logits in a "safe range", not near 0.
LEAST = 1.0

#: The check's own tolerance: a clamp is fitted only where its replay fails it, and the answer
#: must be ten times nearer the replay than the right answer.
JUDGED = (RTOL, ATOL)

#: The clamps fitted: both sides (``clamp(z, -c, c)``), or one (``clamp(max=c)``,
#: ``clamp(min=-c)``); each a key per row, the rows whose key is past c passing nothing.
SIDES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "both": torch.abs, "max": lambda z: z, "min": lambda z: -z}

#: How each side is told.
SHOWN = {"both": "clamped to [-c, c]", "max": "clamped from above at c (clamp(max=c))",
         "min": "clamped from below at -c (clamp(min=-c))"}


def replay(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, c: float,
           side: str = "both") -> torch.Tensor:
    """The full-batch mean gradient (float64) with the logits clamped at c (``side``): a row
    past the clamp adds nothing (the weights b_j / B make the micro-batches' sum the mean)."""
    X64, w64 = X.double(), w.detach().double()
    z = X64 @ w64
    inside = (SIDES[side](z) <= c).double()
    return X64.T @ ((torch.sigmoid(z) - y.double()) * inside) / X.shape[0]


def fitted(got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           stale: torch.Tensor | None, rtol: float, atol: float
           ) -> list[tuple[str, float, float, bool]]:
    """``(side, lo, hi, stale grad kept)`` for each clamp whose replay ``got`` matches where
    the replay is not the right answer (the clamp acts): any bound c with lo <= c < hi gives
    that replay (the same rows past it). Every cut between the drawn logits is tried."""
    if not isinstance(got, torch.Tensor) or got.shape != w.shape:
        return []
    values = got.detach().cpu().double()
    X64, z = X.double(), X.double() @ w.detach().double()
    rows = (torch.sigmoid(z) - y.double())[:, None] * X64 / X.shape[0]
    right = rows.sum(0)
    found = []
    for side, key_of in SIDES.items():
        key = key_of(z)
        order = torch.argsort(key, descending=True)
        keys, dropped = key[order], torch.cumsum(rows[order], 0)
        for m in range(1, len(keys)):  # the m rows of largest key past the clamp, some kept
            if bool(keys[m] == keys[m - 1]):
                continue  # a bound cuts tied rows together
            hi, lo = float(keys[m - 1]), max(float(keys[m]), LEAST)
            if hi <= lo:
                break  # a bound under LEAST: not a clamp of large logits
            pattern = right - dropped[m - 1]
            if allclose(pattern, right, *JUDGED):
                continue  # the clamp changes nothing the check sees
            apart = float((pattern - right).abs().max())
            for extra in ([None] if stale is None else [None, stale.double()]):
                fit = pattern if extra is None else pattern + extra
                if allclose(values, fit, rtol, atol) and float(
                        (values - fit).abs().max()) < apart / 10:  # far nearer it than right
                    found.append((side, lo, hi, extra is not None))
    return found


def _agreed(first: list, second: list) -> list[tuple[str, float, float, bool]]:
    """The clamps (side, range, kept) that both draws fit: the ranges intersected."""
    out = []
    for side, lo, hi, kept in first:
        for side2, lo2, hi2, _ in second:
            if side == side2 and max(lo, lo2) < min(hi, hi2):
                out.append((side, max(lo, lo2), min(hi, hi2), kept))
    return out


def _bound(lo: float, hi: float) -> str:
    """The fitted range told, with the round bounds in it."""
    round_ = [f"{c:g}" for c in BOUNDS if lo <= c < hi]
    span = f"any c from {lo:.1f} to {hi:.1f} fits"
    if not round_:
        return span
    return f"c = {' or '.join(round_[:2])} would give it; {span}"


def clamped(verdict: Any, accumulated_grad: Callable, got: Any, w: torch.Tensor,
            X: torch.Tensor, y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
            rtol: float, atol: float) -> Any:
    """``verdict``, named ``logits-clamped`` when it fails unnamed, ``got`` is the replay of
    the logits clamped at a bound in some range and the answer at the second draw
    (``second_draw``) fits a clamp on the same side in an overlapping range, and not a sigmoid
    then log. Only a failing answer gets here; only a fit costs a call."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    found = fitted(got, w, X, y, stale, rtol, atol)
    if not found:
        return verdict
    w2, X2, y2, sizes2 = second_draw(w, X, y, sizes)
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2.clone().requires_grad_(),
                          X2.clone(), y2.clone(), list(sizes2))
    confirmed = _agreed(found, fitted(again, w2, X2, y2, None, rtol, atol))
    if not confirmed or not isinstance(again, torch.Tensor) or any(
            torch.allclose(again.detach().cpu().double(), r, rtol=1e-4, atol=1e-5,
                           equal_nan=True)
            for r in replays(w2, X2, y2, sizes2) if again.shape == r.shape):
        return verdict
    confirmed.sort(key=lambda f: (list(SIDES).index(f[0]), -(f[2] - f[1])))
    side, lo, hi, kept = confirmed[0]
    lo, hi = min(f[1] for f in confirmed if f[0] == side), max(
        f[2] for f in confirmed if f[0] == side)
    z = X.double() @ w.detach().double()
    past = int((SIDES[side](z) >= hi).sum())
    top = float(z.abs().max())
    return with_probe(verdict, {
        "id": NAME, "established": f"logits {SHOWN[side]} with c from {lo:.1f} to {hi:.1f}, "
                                   "again at a second w with misclassified logits from 6 to 95",
        "calls": [{"w": "-1.25 w", "y": "1 - y", "sizes": sizes2}]}, misconception=NAME, message=(
        f"{verdict.message.rstrip()} It matches the gradient with the logits {SHOWN[side]} "
        f"before the loss ({_bound(lo, hi)}; {past} of the {len(z)} logits here, which reach "
        f"{top:.0f}, are past it), and again at a second w with logits from 6 to 95. "
        "Clamping the logits zeros the gradient of every example past the clamp: torch.clamp "
        "(like torch.where or min/max) passes no gradient past c, so those rows (here "
        "misclassified ones, whose gradient is the largest) add nothing. Leave the logits as "
        "they are and use F.binary_cross_entropy_with_logits(z, y) (or F.logsigmoid), which "
        f"is stable for any logit without a clamp.{ALSO_STALE if kept else ''}"))


def saturated(verdict: Any, accumulated_grad: Callable, got: Any, w: torch.Tensor,
              X: torch.Tensor, y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
              rtol: float, atol: float) -> Any:
    """``verdict`` on the saturated problem: named ``logits-clamped`` when ``clamped``
    confirms a clamp (its second draw tells a clamp from a sigmoid then log); else
    ``sigmoid-log`` where that fits (``microbatch_saturated.named``: the two zero the same rows
    here)."""
    found = clamped(verdict, accumulated_grad, got, w, X, y, sizes, stale, rtol, atol)
    return found if found.misconception == NAME else named(verdict, got, w, X, y, sizes)


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
