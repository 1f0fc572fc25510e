"""q2_microbatch: the share ``b_j / B`` rounded before it weights its micro-batch
(``weights-rounded``, blind round zf).

``share = round(bj / B, 2)`` ("the micro-batch's share of the batch"), a share formatted to a
few decimals, truncated (``int(share * 100) / 100``) or stored in float16 gives the right
answer wherever every share has that few digits (the public test's [100, 100], [50, 150])
and a gradient off by a little elsewhere: sizes [13, 29, 41] weigh 0.16, 0.35, 0.49 instead
of 0.1566, 0.3494, 0.4940. Each way of cutting the share is replayed in closed form (float64)
from the micro-batch mean gradients, with the stale grad kept or not; a way fits when the
answer is far closer to its replay than the replay is to the right answer (a cut share is a
small change: the usual match tolerance alone would take the right answer for it). The name
is kept only when the answer at a second draw (another ``w``, the sizes in reverse order)
fits the same way. Only an unnamed wrong answer gets here, and only a fit costs a call.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import torch

from .common import allclose, call_named
from .microbatch_mistakes import ALSO_STALE

NAME = "weights-rounded"

#: How far the answer may be from a replay, as a part of the replay's distance from the right
#: answer (float32 arithmetic is ~1e-7 relative; a share cut to 4 decimals moves ~1e-4).
CLOSER = 0.05


def _rounded(k: int) -> Callable[[float], float]:
    return lambda c: round(c, k)


def _truncated(k: int) -> Callable[[float], float]:
    return lambda c: math.floor(c * 10**k) / 10**k


def _stored(dtype: torch.dtype) -> Callable[[float], float]:
    return lambda c: float(torch.tensor(c, dtype=dtype))


#: Each way of cutting the share: what it is told, and the share it makes of ``b_j / B``
#: (most decimals first: a share cut to 0.60 is told as two decimals, not one).
WAYS: list[tuple[str, Callable[[float], float]]] = [
    *((f"rounded to {k} decimal{'s' if k > 1 else ''}", _rounded(k))
      for k in range(4, 0, -1)),
    *((f"truncated to {k} decimal{'s' if k > 1 else ''}", _truncated(k))
      for k in range(4, 0, -1)),
    ("stored in float16 (about 3 significant digits)", _stored(torch.float16)),
    ("stored in bfloat16 (about 2 significant digits)", _stored(torch.bfloat16)),
]

#: Finer cuts, tried only where the float64 problem is judged at float64's tolerance
#: (``microbatch_precision``): a share rounded to 5-8 decimals is off by less than the float32
#: problems' tolerance, and must not be taken for a float32 computation there.
FINE_WAYS: list[tuple[str, Callable[[float], float]]] = [
    *((f"rounded to {k} decimals", _rounded(k)) for k in range(8, 4, -1)),
    *((f"truncated to {k} decimals", _truncated(k)) for k in range(8, 4, -1)),
]

ADVICE = ("The share b_j / B must be exact: the full-batch mean is the sum of the micro-batch "
          "means weighted by exactly b_j / B, and a rounded share weighs each micro-batch a "
          "little wrong (right only where every share happens to have that few digits). "
          "Multiply each mean loss by len(batch) / B as it is, a float (or sum each "
          "micro-batch's losses, reduction='sum', and divide by B).")


def shares(how: Callable[[float], float], sizes: list[int]) -> list[float]:
    B = sum(sizes)
    return [how(s / B) for s in sizes]


def fits(got: Any, means: list[torch.Tensor], sizes: list[int], stale: torch.Tensor | None,
         rtol: float, atol: float, ways: list | None = None) -> list[tuple[str, bool]]:
    """``(way, stale grad kept)`` of each way whose replay ``got`` is, far closer to it than
    the replay is to the right answer (``CLOSER``); ways whose shares are the exact ones make
    the right answer and are skipped."""
    right = sum(m * s for m, s in zip(means, sizes)) / sum(sizes)
    if not isinstance(got, torch.Tensor) or got.numel() != right.numel():
        return []
    values, found = got.detach().double().reshape(-1), []
    for told, how in ways or WAYS:
        cut = shares(how, sizes)
        if all(c == s / sum(sizes) for c, s in zip(cut, sizes)):
            continue
        pattern = sum(m * c for m, c in zip(means, cut))
        off = float((pattern - right).norm())
        for extra in ([None] if stale is None else [None, stale.double().reshape(-1)]):
            replay = pattern if extra is None else pattern + extra
            if (off > 0 and allclose(values, replay, rtol, atol)
                    and float((values - replay).norm()) <= CLOSER * off):
                found.append((told, extra is not None))
    return found


def _listed(values: list[float], digits: int = 4) -> str:
    return ", ".join(f"{v:.{digits}g}" for v in values)


def rounded(verdict: Any, accumulated_grad: Callable, got: Any, w: torch.Tensor,
            X: torch.Tensor, y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
            means: Callable[..., list[torch.Tensor]], rtol: float, atol: float,
            ways: list | None = None) -> Any:
    """``verdict`` (failed, unnamed) named ``weights-rounded`` when ``got`` fits a way of
    cutting the share (``fits``) and the student's answer at a second draw (``w`` halved and
    negated, a fresh leaf; copies of the data; the sizes reversed) fits the same way;
    ``means(w, X, y, sizes)``: the micro-batch mean gradients (float64)."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    first = means(w, X, y, sizes)
    ways = ways or WAYS
    found = fits(got, first, sizes, stale, rtol, atol, ways)
    if not found:
        return verdict
    w2, sizes2 = (-0.5 * w.detach()).requires_grad_(), list(reversed(sizes))
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2, X.clone(), y.clone(),
                          list(sizes2))
    second = {told for told, _ in fits(again, means(w2, X, y, sizes2), sizes2, None, rtol,
                                       atol, ways)}
    confirmed = [(told, kept) for told, kept in found if told in second]
    if not confirmed:
        return verdict
    told, kept = confirmed[0]
    how, digits = dict(ways)[told], 4 if ways is WAYS else 10
    alike = [t for t, _ in confirmed[1:] if t != told]
    if alike:  # the same shares cut several ways (0.6038 to 0.60 or to 0.6)
        told += f" (or {' or '.join(dict.fromkeys(alike))}: the same shares here)"
    cut, exact = shares(how, sizes), [s / sum(sizes) for s in sizes]
    right = sum(m * s for m, s in zip(first, exact))
    pattern = sum(m * c for m, c in zip(first, cut))
    off = float((pattern - right).abs().max())
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": f"b_j / B {told}, again at a second w with the sizes "
                                   "reversed", "calls": [{"w": "-w / 2", "sizes": sizes2}]}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{verdict.message.rstrip()} It matches each micro-batch's mean loss weighted by "
        f"b_j / B {told}: for sizes {sizes} the shares {_listed(cut, digits)} instead "
        f"of {_listed(exact, digits)}, which changes the gradient by up to {off:.3g} here (the same at "
        f"a second w with the sizes in reverse order). {ADVICE}"
        f"{ALSO_STALE if kept else ''}"))
