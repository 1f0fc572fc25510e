"""q2_microbatch: the diagnosis of a wrong accumulated gradient.

The float64 reference (the full-batch mean gradient) and the grader's replays of each known
mistake it is matched against: the micro-batch weights left out or averaged, the stale grad
kept, the weight on the logits, slices at wrong offsets, w.grad rescaled instead of each loss,
and the right answer times a known factor.
"""

from __future__ import annotations

from typing import Callable

import torch

from . import microbatch_repeated as repeated
from .common import allclose, whole_count
from .microbatch_shapes import ADVICE as BROADCAST_ADVICE
from .microbatch_shapes import NAME as BROADCAST
from .microbatch_shapes import broadcast_grad
from .microbatch_weights import misplaced_weight

#: The q2 checks' tolerance for a returned gradient (``microbatch``'s verdicts and the replays
#: that must fail it).
RTOL, ATOL = 1e-4, 1e-6
MATCH_RTOL, MATCH_ATOL = 1e-3, 1e-5

MISTAKES = {
    "unweighted-mean": "It matches the plain average of the micro-batch mean gradients, which is "
                       "right only when all sizes are equal: scale each micro-batch's mean loss "
                       "by b_j / B before its backward.",
    "unscaled-sum": "It matches the sum of the micro-batch mean gradients: scale each "
                    "micro-batch's mean loss by b_j / B before its backward.",
    "stale-grad-kept": "It matches the right gradient plus the .grad that w arrived with: clear "
                       "w.grad (w.grad = None) at the start of the accumulation window.",
    "weight-on-logits": "It matches the b_j / B weight applied inside the loss call, to the "
                        "logits (bce(Xj @ w * bj / B, yj), or to Xj or w before the product) "
                        "instead of to the micro-batch's mean loss: that shrinks every logit of "
                        "micro-batch j, so the sigmoid is taken at other points, which is right "
                        "only where every logit is 0 (w = 0). Weight the loss, not its input: "
                        "(bce(Xj @ w, yj) * bj / B).backward().",
}

#: What scaling w.grad, the sum so far, instead of each micro-batch's loss is taught.
RESCALED = ("backward adds into w.grad, so scaling w.grad scales everything accumulated so far: "
            "scale each micro-batch's loss instead (loss_j * b_j / B) before its backward.")

#: Said of a replay that also kept the stale grad.
ALSO_STALE = (" It also keeps the .grad that w arrived with: clear w.grad (w.grad = None) at the "
              "start of the accumulation window.")

#: Where a micro-batch is wrongly sliced from (one contiguous slice each): how it is told, and
#: ``(start, stop)`` of micro-batch ``j`` from the sizes and the right running ``offset``.
SLICINGS: dict[str, tuple[str, Callable[[list[int], int, int], tuple[int, int]]]] = {
    "j-times-size": ("X[j * b_j : (j + 1) * b_j], each micro-batch at j times its own size",
                     lambda sizes, j, offset: (j * sizes[j], (j + 1) * sizes[j])),
    "offset-not-added": ("X[start : start + b_j] with start = b_(j-1), the offset set to the "
                         "previous size instead of added to",
                         lambda sizes, j, offset: (sizes[j - 1] if j else 0,
                                                   (sizes[j - 1] if j else 0) + sizes[j])),
    "end-at-size": ("X[start : b_j], ending at the size instead of at start + b_j",
                    lambda sizes, j, offset: (offset, sizes[j])),
    repeated.FIRST_OF_SIZE: (repeated.HOW, repeated.bounds),
    repeated.LAST_OF_SIZE: (repeated.HOW_LAST, repeated.bounds_last),
}

OFFSETS = ("wrong when the micro-batch sizes differ: each micro-batch must start where the "
           "previous one ended (a running offset, start += b_j, or torch.split(X, sizes)), not "
           "at j * size")


def micro_grads(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                sizes: list[int]) -> list[torch.Tensor]:
    """Each micro-batch's mean-loss gradient, closed form in float64."""
    grads, start = [], 0
    w64 = w.detach().double()
    for size in sizes:
        Xj, yj = X[start:start + size].double(), y[start:start + size].double()
        grads.append(Xj.T @ (torch.sigmoid(Xj @ w64) - yj) / size)
        start += size
    return grads


def sliced_grads(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, sizes: list[int],
                 slicing: str) -> list[torch.Tensor]:
    """The accumulated gradient with micro-batches sliced as ``SLICINGS[slicing]`` says, each
    mean loss weighted by its nominal ``b_j / B`` or by its slice's own rows over ``B`` (float64);
    none when the slicing is the right one here. An empty slice (past the end) adds nothing: its
    mean loss is NaN, but the gradient of a mean over no rows is a sum of none, zeros."""
    where = SLICINGS[slicing][1]
    bounds, offset = [], 0
    for j, size in enumerate(sizes):
        start, stop = where(sizes, j, offset)
        bounds.append((start, min(stop, X.shape[0])))
        offset += size
    right = [(sum(sizes[:j]), sum(sizes[:j + 1])) for j in range(len(sizes))]
    if bounds == right:
        return []
    B, w64 = sum(sizes), w.detach().double()
    nominal, actual = 0, 0
    for (start, stop), size in zip(bounds, sizes):
        if stop <= start:
            continue
        Xj, yj = X[start:stop].double(), y[start:stop].double()
        mean = Xj.T @ (torch.sigmoid(Xj @ w64) - yj) / (stop - start)
        nominal, actual = nominal + mean * size / B, actual + mean * (stop - start) / B
    return [nominal, actual]


def rescaled_grads(parts: list[torch.Tensor], sizes: list[int],
                   start: torch.Tensor | None) -> list[tuple[torch.Tensor, str]]:
    """The replays (float64) of w.grad scaled instead of each micro-batch's loss, from the
    micro-batch mean gradients ``parts`` and what w.grad held at the start (``start``: the
    stale grad kept, or none), with how each is told: scaled by b_j / B after each backward
    (the nested (g + g_j) * b_j / B, earlier micro-batches scaled again by every later factor),
    or the plain sum scaled once after the loop by one micro-batch's b_j / B (a leftover loop
    variable) or by 1 / B."""
    B = sum(sizes)
    g = torch.zeros_like(parts[0]) if start is None else start.double().reshape(-1)
    base = g.clone()
    for part, size in zip(parts, sizes):
        g = (g + part) * size / B
    out = [(g, "It matches w.grad scaled by b_j / B after each micro-batch's backward "
            "(w.grad *= b_j / B): every earlier micro-batch's gradient is scaled again by each "
            "later factor, which is right only with one micro-batch.")]
    total = base + sum(parts)
    once = {size / B: f"b_j / B = {size}/{B}, one micro-batch's weight" for size in sizes}
    once.setdefault(1 / B, f"1 / B = 1/{B}")
    for factor, what in once.items():
        out.append((total * factor, "It matches the sum of the micro-batch mean gradients "
                    f"scaled once, after the loop, by {what}: one factor cannot weight "
                    "micro-batches of different sizes."))
    return out


def logit_weighted(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                   sizes: list[int]) -> torch.Tensor:
    """The replay (float64) of ``b_j / B`` applied to each micro-batch's logits instead of to
    its mean loss: the gradient of ``mean(bce(X_j @ w * c_j, y_j))`` summed, ``c_j = b_j / B``,
    is ``sum_j X_j.T @ (sigmoid(c_j * X_j @ w) - y_j) / B``."""
    B, start, total = sum(sizes), 0, torch.zeros(X.shape[1], dtype=torch.float64)
    w64 = w.detach().double()
    for size in sizes:
        Xj, yj = X[start:start + size].double(), y[start:start + size].double()
        total = total + Xj.T @ (torch.sigmoid(Xj @ w64 * size / B) - yj) / B
        start += size
    return total


def reference(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The full-batch mean gradient in float64: what a correct accumulation equals."""
    X64, w64 = X.double(), w.detach().double()
    return X64.T @ (torch.sigmoid(X64 @ w64) - y.double()) / X.shape[0]


def diagnose(got: torch.Tensor, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
             sizes: list[int], stale: torch.Tensor | None,
             weights: bool = True) -> tuple[str | None, str]:
    """Match a wrong gradient against the grader's replay of each known mistake (with
    ``weights``, the weight b_j / B in the wrong place among them)."""
    parts = micro_grads(w, X, y, sizes)
    patterns = [("unweighted-mean", sum(parts) / len(parts)), ("unscaled-sum", sum(parts))]
    if stale is not None:
        extra = stale.double()
        patterns = [("stale-grad-kept", reference(w, X, y) + extra)] + \
                   [(name, p + extra) for name, p in patterns] + patterns
    for name, pattern in patterns:
        if allclose(got, pattern, MATCH_RTOL, MATCH_ATOL):
            return name, MISTAKES[name]
    on_logits = logit_weighted(w, X, y, sizes)
    if not allclose(on_logits, reference(w, X, y), MATCH_RTOL, MATCH_ATOL):  # right at w = 0
        replays = [(on_logits, "")]
        if stale is not None:
            replays.append((on_logits + stale.double(), ALSO_STALE))
        for replay, also in replays:
            if allclose(got, replay, MATCH_RTOL, MATCH_ATOL):
                return "weight-on-logits", MISTAKES["weight-on-logits"] + also
    broadcast = broadcast_grad(w, X, y, sizes)
    if not allclose(broadcast, reference(w, X, y), MATCH_RTOL, MATCH_ATOL):  # equal labels
        replays = [(broadcast, "")]
        if stale is not None:
            replays.append((broadcast + stale.double(), ALSO_STALE))
        for replay, also in replays:
            if allclose(got, replay, MATCH_RTOL, MATCH_ATOL):
                return BROADCAST, BROADCAST_ADVICE + also
    for slicing, (how, _) in SLICINGS.items():
        for pattern in sliced_grads(w, X, y, sizes, slicing):
            for extra, also in ((None, ""), (stale, " It also keeps the .grad that w arrived "
                                "with: clear w.grad (w.grad = None) at the start of the "
                                "accumulation window.")):
                if extra is not None and stale is None:
                    continue
                replay = pattern if extra is None else pattern + extra.double()
                if allclose(got, replay, MATCH_RTOL, MATCH_ATOL):
                    told = repeated.advice(sizes, slicing) \
                        if slicing in (repeated.FIRST_OF_SIZE, repeated.LAST_OF_SIZE) else OFFSETS
                    return "wrong-offsets", (f"It matches micro-batches sliced as {how}: "
                                             f"{told}.{also}")
    dropped = micro_batches_dropped(got, parts, sizes, stale)
    if dropped is not None:
        return DROPPED, dropped
    rescaled = accumulated_rescaled(got, parts, reference(w, X, y), sizes, stale)
    if rescaled is not None:
        return "accumulated-grad-rescaled", rescaled
    placed = weights and misplaced_weight(got, w, X, y, sizes, stale, reference(w, X, y),
                                          [f for f, _, _ in factors(len(sizes), sum(sizes))],
                                          MATCH_RTOL, MATCH_ATOL, ALSO_STALE)
    if placed:
        return placed
    return scaled_mistake(got, reference(w, X, y), len(sizes), X.shape[0], stale)


#: Only some of the micro-batches accumulated (red team rt-4: a loop over the first four)
DROPPED = "micro-batches-dropped"


def micro_batches_dropped(got: torch.Tensor, parts: list[torch.Tensor], sizes: list[int],
                          stale: torch.Tensor | None) -> str | None:
    """What a gradient accumulated over the first or the last ``k`` micro-batches only (each
    weighted by b_j / B, or by b_j over their own rows), the stale grad kept or not, is told;
    None when no such replay matches, or when the ones left out are all of one row (a
    micro-batch of one skipped: the probes' ``micro-batch-of-one`` tells that)."""
    total, count = sum(sizes), len(sizes)
    extras = [(None, "")] + ([(stale.double(), ALSO_STALE)] if stale is not None else [])
    for k in range(1, count):
        for kept_part, left_part, which in ((slice(0, k), slice(k, count), "first"),
                                            (slice(count - k, count), slice(0, count - k),
                                             "last")):
            if all(b == 1 for b in sizes[left_part]):
                continue
            kept = list(zip(parts[kept_part], sizes[kept_part]))
            rows = sum(b for _, b in kept)
            for scale in (total, rows):
                replay = sum(g * (b / scale) for g, b in kept)
                for extra, also in extras:
                    pattern = replay if extra is None else replay + extra
                    if allclose(got, pattern, MATCH_RTOL, MATCH_ATOL):
                        return _dropped_told(which, k, count, sizes) + also
    return None


def _dropped_told(which: str, k: int, count: int, sizes: list[int]) -> str:
    """What accumulating the first or last ``k`` of ``count`` micro-batches only is told."""
    if which == "last" and k == 1:  # each backward's gradient replaced the ones before
        return (f"It matches the last micro-batch's share alone (sizes={sizes}): w.grad was "
                "cleared (or assigned) inside the loop, so each micro-batch's backward replaced "
                "what the ones before had accumulated. Clear w.grad once, before the loop, and "
                "let backward() add each micro-batch's share into it.")
    return (f"It matches the gradient of the {which} {k} of the {count} micro-batches only "
            f"(sizes={sizes}): the others were never accumulated (a loop that starts late, "
            "stops early or runs a fixed count). Accumulate every micro-batch: for b_j in "
            "sizes, or torch.split(X, sizes).")


def accumulated_rescaled(got: torch.Tensor, parts: list[torch.Tensor], expected: torch.Tensor,
                         sizes: list[int], stale: torch.Tensor | None) -> str | None:
    """What a gradient that is one of ``rescaled_grads``'s replays (w.grad cleared first, or
    the stale grad kept) is told; none when no replay matches, or when the matching one is the
    right answer or the right answer times a known factor (equal sizes: it names nothing)."""
    known = [1.0] + [factor for factor, _, _ in factors(len(sizes), sum(sizes))]
    values = got.detach().double().reshape(-1)
    for start, also in ((None, ""), (stale, ALSO_STALE)):
        if start is None and also:
            continue
        for replay, told in rescaled_grads(parts, sizes, start):
            if not allclose(values, replay, MATCH_RTOL, MATCH_ATOL):
                continue
            if any(allclose(replay, c * expected, MATCH_RTOL, MATCH_ATOL) for c in known):
                continue
            return f"{told} {RESCALED}{also}"
    return None


def factors(J: int, B: int) -> list[tuple[float, str, str]]:
    """The constant factors a known mistake puts on the full-batch mean gradient: (factor,
    misconception id, what it means)."""
    return [
        (1 / J, "divided-by-J", f"It is the full-batch mean gradient divided by J = {J}, the "
         "number of micro-batches: it was divided by J once more (the result, or each "
         "micro-batch's loss or weight), though the b_j / B weights already make the sum the "
         "full-batch mean. Drop the division by J."),
        (J, "times-J", f"It is J = {J} (the number of micro-batches) times the full-batch mean "
         "gradient: with each micro-batch's mean loss scaled by b_j / B, the accumulated sum is "
         "already the full-batch mean; nothing multiplies it by J."),
        (B, "sum-not-mean", f"It is B = {B} (the number of examples) times the full-batch mean "
         "gradient: the per-example losses are summed instead of averaged (reduction='sum', "
         "or each micro-batch's mean loss scaled by b_j without the / B: both are the sum). "
         "Scale each micro-batch's mean loss by b_j / B."),
        (1 / B, "divided-by-B", f"It is the full-batch mean gradient divided by B = {B}, the "
         "number of examples: it was divided by B once more (the result, or each "
         "micro-batch's loss or weight), though the b_j / B weights already average over the "
         "B examples."),
    ]


def scaled_mistake(got: torch.Tensor, expected: torch.Tensor, J: int, B: int,
                   stale: torch.Tensor | None) -> tuple[str | None, str]:
    """Name a gradient that is the full-batch mean times one known factor (fitted by least
    squares, the fit's residual within the match tolerance), with or without the stale grad
    kept; ``(None, "")`` when it is no such multiple (the probes look further)."""
    got = got.detach().double().reshape(-1)
    kept = [(got, "")]
    if stale is not None:
        kept.append((got - stale.double().reshape(-1), " It also keeps the .grad that w arrived "
                     "with: clear w.grad (w.grad = None) at the start of the accumulation window."))
    norm = float(expected @ expected)
    for values, also in kept:
        c = float(values @ expected) / norm if norm > 0 else 0.0
        if not allclose(values, c * expected, MATCH_RTOL, MATCH_ATOL):
            continue
        for factor, name, text in factors(J, B):
            if abs(c - factor) <= MATCH_RTOL * abs(factor):
                return name, text + also
        k = whole_count(B, c, rtol=1e-4, most=100_000)
        if k is not None:
            return WRONG_COUNT, (
                f"It is the full-batch mean gradient times {c:.4g} = {B} / {k}: each "
                f"micro-batch's weight was b_j / {k}, not b_j / B with B = {B}, the number of "
                "examples in this call (sum(sizes)). Take B from the sizes on every call, not "
                "from a global such as the data set's m." + also)
    return None, ""  # no guessed cause: the probes look for one (check_accumulated_grad)


#: A gradient whose weights were divided by another count than B (blind round zzv:
#: ``b_j / m``, the notebook's global m = 200, told only "a constant factor")
WRONG_COUNT = "weights-divided-by-wrong-count"

