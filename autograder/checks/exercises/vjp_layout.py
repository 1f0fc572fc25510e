"""q4_vjp: the right pullback handed back in another layout.

``leaf.grad.reshape(x.shape[::-1])`` (or ``view(x.size(1), x.size(0))``, ``reshape(x.T.shape)``,
a leaf made in x's sizes reversed) is the identity on a 1-D x and on a square 2-D x. The hidden
2-D x's are drawn at random sizes and may all be square: at grading seeds 0..99, seed 60 drew
only square ones, where such an answer kept full marks. ``draw_non_square`` adds one 2-D x with
two unequal sizes, both over 1, drawn after every other input (so each seed's earlier inputs
stay what they were): there it has x's sizes reversed, a transpose moves values, and a
rearrangement (a transpose read into x's shape) is seen.

``named`` then tells what layout a failing answer holding the right values has, from the values
alone: transposed (``.t()``, ``.T``, ``.mT``, ``permute(1, 0)``: ``grad-transposed``), read
column by column into x's shape, or read into x's sizes reversed and transposed back
(``grad-rearranged``, told which), or only read into x's sizes reversed (``wrong-shape``, told
so: the values are right, the shape is not). Where one layout alone gives the answer at the
failing x it is named; where several do (a square x, where all of them are the transpose, or
an x with a size-1 dimension, where a transpose is a reshape) one more call, at the fixed
``WIDE`` x, tells which, and nothing is named when that call shows none of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict, with_probe
from .common import arrays_close, short

TRANSPOSED, REARRANGED, REVERSED = "grad-transposed", "grad-rearranged", "wrong-shape"
#: The sizes of the non-square x drawn last: both over 1 (a size-1 dimension makes a transpose
#: a reshape), unequal (a square x makes a reshape to x's sizes reversed the identity).
SHAPES = tuple((m, n) for m in range(2, 6) for n in range(2, 6) if m != n)
#: The confirming call's x: its seed is fixed, so that feedback is the same every run.
WIDE, WIDE_SEED = (2, 3), 20263
HINT = ("leaf.grad already has x's shape, each entry in the place of its own entry of x: the "
        "pullback of x ** 2 is elementwise, 2 * x[i, j] * weights[i, j], so nothing needs a "
        "transpose or a reshape. Return leaf.grad as backward leaves it.")


def draw_non_square(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A contiguous 2-D x (and weights) of unequal sizes from 2 to 5, float32 or float64; one
    weight surely neither 1 nor 0, as in ``vjp.draw_cases``."""
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    dtype = (torch.float32, torch.float64)[int(rng.integers(2))]
    x = rng.uniform(-5.0, 5.0, size=shape)
    weights = rng.uniform(-3.0, 3.0, size=shape)
    weights.flat[0] = 1.5 + rng.uniform(0.0, 1.0)
    return torch.from_numpy(x).to(dtype), torch.from_numpy(weights).to(dtype)


def draw_three_d(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A contiguous 3-D x (and weights) of sizes 2 to 4, float32 or float64, one weight surely
    neither 1 nor 0: the contract's x is any tensor, and code written for vectors and matrices
    (``.t()``, ``x.view(x.shape[0], -1)``, an index on two dimensions) parts from it there
    (red team rt-11: a gradient rearranged only at 3 or more dimensions kept its points)."""
    shape = tuple(int(n) for n in rng.integers(2, 5, size=3))
    dtype = (torch.float32, torch.float64)[int(rng.integers(2))]
    x = rng.uniform(-5.0, 5.0, size=shape)
    weights = rng.uniform(-3.0, 3.0, size=shape)
    weights.flat[0] = 1.5 + rng.uniform(0.0, 1.0)
    return torch.from_numpy(x).to(dtype), torch.from_numpy(weights).to(dtype)


def layouts(right: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """``(name, what it is, the right pullback so laid out)`` for a 2-D ``right`` of shape
    (m, n); none for other dims."""
    if right.ndim != 2:
        return []
    m, n = right.shape
    return [
        (TRANSPOSED, "the right gradient transposed: entry [i, j] holds the one of x[j, i] (a "
         ".t(), .T, .mT or permute(1, 0) of leaf.grad, einsum('ij->ji'), or the gradient of a "
         "leaf made from x.t() not transposed back)", right.T),
        (REVERSED, "the right values read row by row into x's sizes reversed (leaf.grad."
         "reshape(x.shape[::-1]), view(x.size(1), x.size(0)), or a leaf made in those sizes): "
         "the values are right, the shape is not x's", right.reshape(n, m)),
        (REARRANGED, "the right gradient read column by column into x's shape, as "
         "leaf.grad.t().reshape(x.shape) does", right.T.reshape(m, n)),
        (REARRANGED, "the right values read into x's sizes reversed and transposed back, as "
         "leaf.grad.reshape(x.shape[::-1]).t() does", right.reshape(n, m).T),
    ]


def fits(got: Any, right: np.ndarray, tolerance: tuple[float, float]
         ) -> list[tuple[str, str, np.ndarray]]:
    """The layouts of ``right`` that ``got`` (a tensor) is, and that differ from ``right``."""
    if not isinstance(got, torch.Tensor) or got.dim() != 2:
        return []
    values = got.detach().cpu().double().numpy()
    return [(name, what, laid) for name, what, laid in layouts(right)
            if not arrays_close(laid, right, *tolerance) and arrays_close(values, laid,
                                                                          *tolerance)]


def _wide(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(WIDE_SEED)
    xs, ws = rng.uniform(-5.0, 5.0, WIDE), rng.uniform(-3.0, 3.0, WIDE)
    return torch.from_numpy(xs).to(x.dtype), torch.from_numpy(ws).to(x.dtype)


def named(verdict: Verdict, vjp_square: Callable, got: Any, x: torch.Tensor,
          weights: torch.Tensor, tolerances: dict) -> Verdict:
    """``verdict`` (failed on a 2-D x, unnamed or ``wrong-shape``) told the layout of ``got``
    when ``got`` is the right pullback in one of ``layouts``, and named by it where that layout
    is the one (``REVERSED`` stays ``wrong-shape``); else ``verdict`` as it was."""
    if (verdict.ok or verdict.misconception not in (None, REVERSED) or x.dim() != 2
            or x.dtype not in tolerances):
        return verdict
    tolerance = tolerances[x.dtype]
    right = 2.0 * x.detach().double().numpy() * weights.detach().double().numpy()
    found = fits(got, right, tolerance)
    if not found:
        return verdict
    names = {(name, what) for name, what, _ in found}
    if len(names) == 1:
        name, what, _ = found[0]
        return dataclasses.replace(verdict, misconception=name, message=(
            f"{verdict.message.rstrip()} It returned {what}. {HINT}"))
    # several layouts give this answer here (a square x, where each is the transpose, or an x
    # with a size-1 dimension, where a transpose is a reshape): one call at WIDE tells which
    seen = ("the right values in x's sizes reversed" if tuple(got.shape) != tuple(x.shape)
            else "the right gradient transposed, (2 * x * weights).T")
    here = (f"{verdict.message.rstrip()} It returned {seen}, which more than one layout gives "
            f"at an x of shape {tuple(x.shape)}")
    wx, ww = _wide(x)
    again, failure = call(vjp_square, "vjp_square", wx.clone(), ww.clone())
    wide_right = 2.0 * wx.double().numpy() * ww.double().numpy()
    there = [] if failure is not None else fits(again, wide_right, tolerance)
    chosen = [(name, what) for name, what, _ in there if (name, what) in names]
    if len(chosen) != 1:
        return dataclasses.replace(verdict, message=f"{here}. {HINT}")
    name, what = chosen[0]
    probe = {"id": name, "established": f"at an x of shape {WIDE} the answer is {what}",
             "calls": [recorded_call(f"x of shape {WIDE}", (wx, ww), wide_right.tolist(),
                                     again.detach().cpu().double().tolist())]}
    return with_probe(verdict, probe, misconception=name, message=(
        f"{here}; at an x of shape {WIDE} of the same dtype it returned "
        f"{short(again.detach().cpu().double().numpy())} (shape {tuple(again.shape)}), which is "
        f"{what}. {HINT}"))
