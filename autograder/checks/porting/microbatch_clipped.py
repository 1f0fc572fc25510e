"""q2_microbatch: the accumulated gradient clipped (``gradient-clipped``).

``accumulated_grad`` returns the gradient itself; a student used to training loops clips it on
the way (``clip_grad_norm_`` or ``clip_grad_value_`` on ``w`` after the loop, or after each
micro-batch's backward, or on each micro-batch's gradient before adding it). The answer is then
right wherever no clip is active (the lesson's gradient at ``w = 0`` has norm 0.386) and wrong
where the gradient is large. Each way is replayed in closed form (float64) with one constant
``c``, fitted to the answer; a fit is named only when the answer at a second problem whose
right gradient is 4 times larger (``X`` times 4, ``w`` divided by 4: the same logits) fits the
same way with the same ``c``: a true constant factor gives a ``c`` 4 times larger there.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from .common import allclose, call_named

NAME = "gradient-clipped"

#: How the second problem is made from the first: X times SCALE, w divided by it.
SCALE = 4.0

#: Each way of clipping: what it is told.
WAYS = {
    "total-norm": "the accumulated gradient rescaled to norm {c} (clip_grad_norm_ on w after "
                  "the loop)",
    "running-norm": "w.grad rescaled to norm {c} after each micro-batch's backward "
                    "(clip_grad_norm_ inside the loop)",
    "part-norm": "each micro-batch's weighted gradient rescaled to norm {c} before it is added",
    "mean-norm": "each micro-batch's mean gradient rescaled to norm {c} before its b_j / B "
                 "weight",
    "total-value": "the accumulated gradient clamped to ±{c} (clip_grad_value_ on w after the "
                   "loop)",
    "running-value": "w.grad clamped to ±{c} after each micro-batch's backward "
                     "(clip_grad_value_ inside the loop)",
    "part-value": "each micro-batch's weighted gradient clamped to ±{c} before it is added (a "
                  "hook, or clamp on its gradient)",
    "mean-value": "each micro-batch's mean gradient clamped to ±{c} before its b_j / B weight",
}

ADVICE = ("Clipping is a decision an optimizer step makes about the gradient it is handed; "
          "accumulated_grad must return the gradient itself, the full-batch mean, however "
          "large it is: remove the clipping (the lesson's gradient at w = 0 has norm 0.386, so "
          "the public test cannot show it).")


def clip(g: torch.Tensor, c: float, by: str) -> torch.Tensor:
    """``g`` rescaled to norm at most ``c`` (``by == "norm"``) or clamped to ``[-c, c]``."""
    if by == "value":
        return g.clamp(-c, c)
    norm = float(g.norm())
    return g * (c / norm) if norm > c else g


def parts_of(way: str, means: list[torch.Tensor], sizes: list[int]
             ) -> tuple[list[torch.Tensor], list[float]]:
    """What a clip of ``way`` acts on, and the weight each clipped part is added with."""
    B = sum(sizes)
    if way.startswith("total"):
        return [sum(m * s / B for m, s in zip(means, sizes))], [1.0]
    if way.startswith("part"):
        return [m * s / B for m, s in zip(means, sizes)], [1.0] * len(sizes)
    return list(means), [s / B for s in sizes]


def replay(way: str, c: float, means: list[torch.Tensor], sizes: list[int]) -> torch.Tensor:
    """The answer of ``way`` with constant ``c``, from the micro-batch mean gradients."""
    by = way.split("-")[1]
    if way.startswith("running"):
        g = torch.zeros_like(means[0])
        for m, s in zip(means, sizes):
            g = clip(g + m * s / sum(sizes), c, by)
        return g
    parts, weights = parts_of(way, means, sizes)
    return sum(clip(p, c, by) * k for p, k in zip(parts, weights))


def candidates(way: str, got: torch.Tensor, means: list[torch.Tensor],
               sizes: list[int]) -> list[float]:
    """The constants ``c`` worth replaying ``way`` with: for a clip after each backward, the
    size of what the last active clip left (the micro-batches after it added unclipped); for
    the others, which are linear in ``c`` between the sizes where a part starts to be clipped,
    the least-squares ``c`` of each such interval."""
    by = way.split("-")[1]
    size = (lambda t: float(t.abs().max())) if by == "value" else (lambda t: float(t.norm()))
    if way.startswith("running"):
        q = [m * s / sum(sizes) for m, s in zip(means, sizes)]
        return [size(got - sum(q[k + 1:], torch.zeros_like(got))) for k in range(len(q))]
    parts, _ = parts_of(way, means, sizes)
    cuts = sorted({float(v) for p in parts for v in (p.abs() if by == "value"
                                                      else p.norm().reshape(1))})
    out = []
    for low, high in zip([0.0, *cuts], cuts):
        c1, c2 = low + (high - low) / 3, low + 2 * (high - low) / 3
        f1, f2 = replay(way, c1, means, sizes), replay(way, c2, means, sizes)
        slope = (f2 - f1) / (c2 - c1)
        if float(slope @ slope) > 0:
            out.append(c1 + float((got - f1) @ slope) / float(slope @ slope))
    return out


def fits(got: Any, means: list[torch.Tensor], sizes: list[int], right: torch.Tensor,
         rtol: float, atol: float) -> list[tuple[str, float]]:
    """``(way, c)`` of each way whose replay at a fitted ``c > 0`` is ``got`` and is not the
    right answer (a clip is active). Ways may agree on one problem (one clip active: the
    total's or the last micro-batch's), so all are kept for the second problem to tell."""
    if not isinstance(got, torch.Tensor) or got.numel() != right.numel():
        return []
    values, found = got.detach().double().reshape(-1), []
    for way in WAYS:
        for c in candidates(way, values, means, sizes):
            pattern = replay(way, c, means, sizes) if c > 0 else right
            if allclose(values, pattern, rtol, atol) and not allclose(right, pattern, rtol,
                                                                      atol):
                found.append((way, c))
                break
    return found


def clipped(verdict: Any, accumulated_grad: Callable, got: Any, w: torch.Tensor,
            X: torch.Tensor, y: torch.Tensor, sizes: list[int],
            means: Callable[..., list[torch.Tensor]], rtol: float, atol: float) -> Any:
    """``verdict`` (failed, unnamed) named ``gradient-clipped`` when ``got`` fits a way of
    clipping (``fits``) at some ``c`` and the student's answer at ``X * SCALE``, ``w / SCALE``
    (a fresh leaf, copies of the data) is that way's replay at the same ``c``; ``means(w, X,
    y, sizes)``: the micro-batch mean gradients (float64). Only such a verdict costs a call."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    first = means(w, X, y, sizes)
    right = sum(m * s for m, s in zip(first, sizes)) / sum(sizes)
    found = fits(got, first, sizes, right, rtol, atol)
    if not found:
        return verdict
    w2, X2 = (w.detach() / SCALE).requires_grad_(), X * SCALE
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2, X2.clone(), y.clone(),
                          list(sizes))
    second = means(w2, X2, y, sizes)
    right2 = sum(m * s for m, s in zip(second, sizes)) / sum(sizes)
    if not isinstance(again, torch.Tensor) or again.numel() != right2.numel():
        return verdict
    values = again.detach().double().reshape(-1)
    confirmed = [(way, c) for way, c in found
                 if allclose(values, replay(way, c, second, sizes), rtol, atol)
                 and not allclose(values, right2, rtol, atol)]
    if not confirmed:
        return verdict
    way, c = confirmed[0]
    shown = f"{c:.4g}"
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": f"{way} at c = {shown}, the same c at a second problem",
        "calls": [{"X": f"X * {SCALE:g}", "w": f"w / {SCALE:g}", "got": values.tolist(),
                   "expected": right2.tolist()}]}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{verdict.message.rstrip()} It matches {WAYS[way].format(c=shown)}: the right "
        f"gradient here has norm {float(right.norm()):.4g} and largest entry "
        f"{float(right.abs().max()):.4g}. Asked again with X times {SCALE:g} and w divided by "
        f"{SCALE:g} (the same logits, a gradient {SCALE:g} times larger), it was clipped at the "
        f"same {shown}. {ADVICE}"))
