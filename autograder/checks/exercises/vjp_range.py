"""q4_vjp: a pullback right only within a range of x's values. A guard on the leaf ("keep the
square in a safe range": ``torch.clamp(leaf, -1e3, 1e3) ** 2``, ``leaf.clamp(max=...)``,
``torch.where(leaf.abs() < c, leaf ** 2, 0)``, a clamp of the square) passes no gradient where
it cut x off, so the answer is right at every ordinary x and 0 (or capped, ``2 * c * w``) at
the large ones. Hidden x's used to be small: ``draw_large`` adds a case drawn after the others
(only ``vjp_layout``'s non-square x comes after it) with a few entries of magnitude 1e3-1e5
mixed with ordinary ones. ``named`` fits the failing answer (right inside one interval of x's
values, 0 or one cap on each side beyond it) and names it ``gradient-clamped`` only when a
second call, the same entries moved one place, agrees."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call, rounded
from ..result import Verdict
from .common import arrays_close, short

CLAMPED = "gradient-clamped"
HINT = ("clamp (and torch.where / nan_to_num guards) passes no gradient outside its range: "
        "beyond the cut autograd differentiates a constant. The pullback of x ** 2 is "
        "2 * x * weights at every x; float32 holds x ** 2 up to |x| ~ 1.8e19, so no guard is "
        "needed: square the leaf as it is, (leaf ** 2).backward(weights).")


def draw_large(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """1-D, 5-7 entries, float32 or float64: two or three of magnitude 1e3-1e5 (the first
    above 3e4, both signs among them), the rest ordinary (-5 to 5, both signs); no weight near
    0 at the large entries."""
    n, k = int(rng.integers(5, 8)), int(rng.integers(2, 4))
    dtype = (torch.float32, torch.float64)[int(rng.integers(2))]
    xs = rng.uniform(0.5, 5.0, n) * np.where(np.arange(n) % 2, -1.0, 1.0)
    ws = rng.uniform(0.5, 3.0, n) * rng.choice([-1.0, 1.0], n)
    large = rng.choice(n, k, replace=False)
    magnitudes = 10.0 ** rng.uniform(3.0, 5.0, k)
    magnitudes[0] = 10.0 ** rng.uniform(4.5, 5.0)
    signs = np.where(np.arange(k) % 2, -1.0, 1.0) * rng.choice([-1.0, 1.0])
    xs[large] = signs * magnitudes
    return torch.from_numpy(xs).to(dtype), torch.from_numpy(ws).to(dtype)


def _fit(values: np.ndarray, xs: np.ndarray, ws: np.ndarray, rtol: float,
         atol: float) -> tuple[float, float, float, float] | None:
    """``(lo, hi, low_cap, high_cap)``: right for x in [lo, hi], ``2 * cap * w`` beyond (cap 0
    for no gradient; a cap between the range's end and the entries cut off); or None."""
    values, xs, ws = values.reshape(-1), xs.reshape(-1), ws.reshape(-1)
    right = np.abs(values - 2.0 * xs * ws) <= atol + rtol * np.abs(2.0 * xs * ws)
    if right.all() or not right.any() or (ws == 0).any():
        return None
    lo, hi = xs[right].min(), xs[right].max()
    if ((xs[~right] >= lo) & (xs[~right] <= hi)).any():
        return None
    caps = []
    for side, end in ((xs < lo, lo), (xs > hi, hi)):
        cut = values[side] / (2.0 * ws[side])
        if not side.any():
            caps.append(0.0)
            continue
        cap = float(cut[0])
        tol = atol + rtol * abs(cap)
        if np.abs(cut - cap).max() > tol:
            return None
        nearest = xs[side].max() if end == lo else xs[side].min()
        if abs(cap) > tol and not min(end, nearest) - tol <= cap <= max(end, nearest) + tol:
            return None
        caps.append(0.0 if abs(cap) <= tol else cap)
    return float(lo), float(hi), caps[0], caps[1]


def _predicted(fit: tuple[float, float, float, float], xs: np.ndarray,
               ws: np.ndarray) -> np.ndarray:
    lo, hi, low_cap, high_cap = fit
    return np.where(xs < lo, 2.0 * low_cap * ws,
                    np.where(xs > hi, 2.0 * high_cap * ws, 2.0 * xs * ws))


def named(verdict: Verdict, vjp_square: Callable, got: object, x: torch.Tensor,
          weights: torch.Tensor, tolerances: dict) -> Verdict:
    """``verdict`` (failed, no name) named ``CLAMPED`` when ``got`` is right inside one range
    of x's values and 0 or capped beyond it, and a call on the entries moved one place (the
    weights with them) returns what that range predicts; else ``verdict`` as it is."""
    if (verdict.ok or verdict.misconception is not None or not isinstance(got, torch.Tensor)
            or got.shape != x.shape or x.dim() == 0 or x.dtype not in tolerances):
        return verdict
    rtol, atol = tolerances[x.dtype]
    xs, ws = x.detach().double().numpy(), weights.detach().double().numpy()
    values = got.detach().cpu().double().numpy()
    if rounded(values.reshape(-1).tolist(), (2.0 * xs * ws).reshape(-1).tolist()):
        # every entry rounded (the probes say so): on two entries one of them fits a range
        # and the other a cap between them, and moving two entries only swaps them (blind
        # round zzs: torch.round(grad, decimals=4) was told it clamped)
        return verdict
    fit = _fit(values, xs, ws, rtol, atol)
    if fit is None:
        return verdict
    moved_x = x.detach().reshape(-1).roll(1).reshape(x.shape).clone()
    moved_w = weights.detach().reshape(-1).roll(1).reshape(x.shape).clone()
    mxs, mws = moved_x.double().numpy(), moved_w.double().numpy()
    predicted = _predicted(fit, mxs, mws)
    again, failure = call(vjp_square, "vjp_square", moved_x.clone(), moved_w.clone())
    if (failure is not None or not isinstance(again, torch.Tensor) or again.shape != x.shape
            or not arrays_close(again.detach().cpu().double().numpy(), predicted, rtol, atol)):
        return verdict
    lo, hi, low_cap, high_cap = fit
    cut = xs[(xs < lo) | (xs > hi)]
    caps = {f"{cap:g}" for cap, side in ((low_cap, xs < lo), (high_cap, xs > hi)) if side.any()}
    given = "0" if caps == {"0"} else f"2 * weights times {' or '.join(sorted(caps))}"
    probe = {"id": CLAMPED, "established": "the same range on the entries moved one place",
             "calls": [recorded_call("entries moved", (moved_x, moved_w),
                                     (2.0 * mxs * mws).tolist(),
                                     again.detach().cpu().double().tolist())]}
    return dataclasses.replace(
        verdict, misconception=CLAMPED,
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=(f"{verdict.message.rstrip()} It is right at every x in [{lo:g}, {hi:g}] and "
                 f"{given} at the x beyond it, {short(cut)} (the same with the entries moved): the "
                 f"gradient was cut off outside a range. {HINT}"))
