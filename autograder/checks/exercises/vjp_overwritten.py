"""q4_vjp: part of the pullback lost between several backward calls. One backward per row (per
column, per entry) with the leaf's ``.grad`` cleared before each (``leaf.grad = None``,
``leaf.grad.zero_()``, "as exercise 1 taught") or overwritten (``g = torch.autograd.grad(...)``
assigned, not added; a ``return`` inside the loop) keeps one slice's pullback: right for a 1-D
x taken as one row (the lesson's), but on a 2-D x every other row comes back 0 (blind round zp).
``named`` fits the failing answer (right on a strict non-empty subset of the entries whose
pullback is not 0, exactly 0 on the rest) and names it ``pullback-overwritten`` only when a
second call, the values moved one place (the weights with them), keeps the same positions:
zeros that follow the values (a clamp, a relu) move with them."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

OVERWRITTEN = "pullback-overwritten"
HINT = ("Each backward adds into leaf.grad: clearing it between backward calls (leaf.grad = "
        "None, leaf.grad.zero_()) or assigning it (leaf.grad = ..., g = torch.autograd.grad(...)"
        ") keeps only the last call's part. One backward, v.backward(weights) with v = leaf ** "
        "2, gives every row at once; a loop of backwards must let them add up (clear once, "
        "before the loop).")


def _kept(values: np.ndarray, expected: np.ndarray, rtol: float, atol: float
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(kept, lost)``: where ``values`` holds the pullback and where it is 0 instead, when
    every entry is one or the other and both are non-empty among the entries whose pullback is
    not 0; else None."""
    tol = atol + rtol * np.abs(expected)
    right = np.abs(values - expected) <= tol
    nonzero = np.abs(expected) > tol
    if not (right | (values == 0)).all():
        return None
    kept, lost = right & nonzero, ~right & nonzero
    return (kept, lost) if kept.any() and lost.any() else None


def _slices(kept: np.ndarray, lost: np.ndarray) -> tuple[str, list[int], int]:
    """``(word, indices kept, count)``: rows (along the first dimension) or columns (along the
    last) when each is wholly kept or wholly lost, else the flat entries."""
    if kept.ndim >= 2:
        for word, axis in (("row", 0), ("column", kept.ndim - 1)):
            k = np.moveaxis(kept, axis, 0).reshape(kept.shape[axis], -1).any(axis=1)
            lo = np.moveaxis(lost, axis, 0).reshape(kept.shape[axis], -1).any(axis=1)
            if not (k & lo).any():
                return word, [int(i) for i in np.flatnonzero(k)], kept.shape[axis]
    return "entry", [int(i) for i in np.flatnonzero(kept.reshape(-1))], kept.size


def _which(word: str, indices: list[int], count: int, flattened: bool) -> str:
    plural = {"row": "rows", "column": "columns", "entry": "entries"}[word]
    where = {(count - 1,): ", the last", (0,): ", the first"}.get(tuple(indices), "")
    shown = ", ".join(str(i) for i in indices[:6]) + (", ..." if len(indices) > 6 else "")
    flat = ", x flattened" if word == "entry" and flattened else ""
    return (f"in only {word if len(indices) == 1 else plural} {shown} (of {count}{flat}"
            f"{where}) and exactly 0 in the other {plural}")


def _moved(t: torch.Tensor, copy: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``copy(t)`` (its input class kept) holding t's values moved one place."""
    moved = copy(t)
    with torch.no_grad():
        moved.copy_(t.detach().reshape(-1).roll(1).reshape(t.shape))
    return moved


def named(verdict: Verdict, vjp_square: Callable, got: object, x: torch.Tensor,
          weights: torch.Tensor, tolerances: dict,
          copy: Callable[[torch.Tensor], torch.Tensor]) -> Verdict:
    """``verdict`` (failed, no name) named ``OVERWRITTEN`` when ``got`` holds the pullback on a
    strict subset of x's entries and 0 elsewhere, and a call on the values moved one place
    keeps the same positions; else ``verdict`` as it is."""
    if (verdict.ok or verdict.misconception is not None or not isinstance(got, torch.Tensor)
            or got.shape != x.shape or x.dtype not in tolerances):
        return verdict
    rtol, atol = tolerances[x.dtype]
    xs, ws = x.detach().double().numpy(), weights.detach().double().numpy()
    expected = 2.0 * xs * ws
    fit = _kept(got.detach().cpu().double().numpy(), expected, rtol, atol)
    if fit is None:
        return verdict
    kept, lost = fit
    moved_x, moved_w = _moved(x, copy), _moved(weights, lambda w: w.clone())
    shown = moved_x.detach().clone()
    mxs, mws = shown.double().numpy(), moved_w.detach().double().numpy()
    predicted = np.where(kept, 2.0 * mxs * mws, 0.0)
    again, failure = call(vjp_square, "vjp_square", moved_x, moved_w.clone())
    if (failure is not None or not isinstance(again, torch.Tensor) or again.shape != x.shape
            or not arrays_close(again.detach().cpu().double().numpy(), predicted, rtol, atol)):
        return verdict
    word, indices, count = _slices(kept, lost)
    probe = {"id": OVERWRITTEN, "established": f"the same {word} positions kept with the values "
             "moved one place", "calls": [recorded_call(
                 "values moved", (shown, moved_w), (2.0 * mxs * mws).tolist(),
                 again.detach().cpu().double().tolist())]}
    return dataclasses.replace(
        verdict, misconception=OVERWRITTEN,
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=(f"{verdict.message.rstrip()} It holds the right pullback "
                 f"{_which(word, indices, count, x.dim() > 1)}; with the values moved one "
                 "place, the same positions kept theirs "
                 f"({short(again.detach().cpu().double().numpy())}): "
                 f"part of the pullback was lost between backward calls. {HINT}"))
