"""q2_microbatch: accumulating micro-batch gradients into the full-batch mean gradient."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..describing import describe
from ..probes import InputClass, Subject, changes, explain, numbers_of, snapshot
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import allclose, call_named, judge_tensor, with_diagnosis
from .microbatch_clipped import clipped
from .microbatch_dtype import NAME as DTYPE_FIXED
from .microbatch_dtype import fixed_dtype, in_float64
from .microbatch_shapes import ADVICE as BROADCAST_ADVICE
from .microbatch_shapes import NAME as BROADCAST
from .microbatch_shapes import broadcast_grad
from .microbatch_weights import confirmed, misplaced_weight

QUESTION = "q2_microbatch"
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
}

OFFSETS = ("wrong when the micro-batch sizes differ: each micro-batch must start where the "
           "previous one ended (a running offset, start += b_j, or torch.split(X, sizes)), not "
           "at j * size")


#: The features' scale in the last problem, ``w`` divided by it: the same logits as any
#: draw, a gradient that many times larger (norm about 1 to 6), where what acts on large
#: gradients only shows (a clip at a norm or a value that the others stay under).
LARGE = 10.0


def draw_problem(rng: np.random.Generator, stale: bool, scale: float = 1.0
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """A leaf ``w`` (with a stale ``.grad`` when asked), data, and 2-4 unequal sizes; with
    ``scale``, the features times it and ``w`` divided by it (the same logits)."""
    parts, n = int(rng.integers(2, 5)), int(rng.integers(2, 7))
    sizes = sorted(set(int(s) for s in rng.integers(3, 40, size=parts)))
    while len(sizes) < 2:  # equal sizes would hide the weighting mistake
        sizes = sorted(set(sizes + [int(rng.integers(3, 40))]))
    sizes = [int(s) for s in rng.permutation(sizes)]
    X = torch.tensor(rng.standard_normal((sum(sizes), n)) * scale, dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, sum(sizes)), dtype=torch.float32)
    w = torch.tensor(rng.normal(0.0, 1.0, n) / scale, dtype=torch.float32, requires_grad=True)
    if stale:
        w.grad = torch.tensor(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n),
                              dtype=torch.float32)
    return w, X, y, sizes


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
                    return "wrong-offsets", (f"It matches micro-batches sliced as {how}: "
                                             f"{OFFSETS}.{also}")
    rescaled = accumulated_rescaled(got, parts, reference(w, X, y), sizes, stale)
    if rescaled is not None:
        return "accumulated-grad-rescaled", rescaled
    placed = weights and misplaced_weight(got, w, X, y, sizes, stale, reference(w, X, y),
                                          [f for f, _, _ in factors(len(sizes), sum(sizes))],
                                          MATCH_RTOL, MATCH_ATOL, ALSO_STALE)
    if placed:
        return placed
    return scaled_mistake(got, reference(w, X, y), len(sizes), X.shape[0], stale)


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
         "number of micro-batches: the result was divided by J once more, though the b_j / B "
         "weights already make the sum the full-batch mean. Drop the division by J."),
        (J, "times-J", f"It is J = {J} (the number of micro-batches) times the full-batch mean "
         "gradient: with each micro-batch's mean loss scaled by b_j / B, the accumulated sum is "
         "already the full-batch mean; nothing multiplies it by J."),
        (B, "sum-not-mean", f"It is B = {B} (the number of examples) times the full-batch mean "
         "gradient: the per-example losses are summed (reduction='sum') instead of averaged. "
         "Scale each micro-batch's mean loss by b_j / B."),
        (1 / B, "divided-by-B", f"It is the full-batch mean gradient divided by B = {B}, the "
         "number of examples: the result was divided by B once more, though the b_j / B "
         "weights already average over the B examples."),
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
    return None, ""  # no guessed cause: the probes look for one (check_accumulated_grad)


def shown_call(X: torch.Tensor, sizes: list[int]) -> str:
    return f"accumulated_grad(w, X of shape {tuple(X.shape)}, y, sizes={sizes})"


def judged_twice(accumulated_grad: Callable, got: Any, w: torch.Tensor, X: torch.Tensor,
                 y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
                 w_before: torch.Tensor) -> Verdict:
    """``judge``; a weight in the wrong place it names is kept only when ``accumulated_grad``
    puts it in the same place at a second w (``microbatch_weights.confirmed``); an unnamed
    wrong answer that fits a clipped gradient is named when a second problem fits the same
    clip (``microbatch_clipped``)."""
    verdict = confirmed(judge(got, w, X, y, sizes, stale, w_before), accumulated_grad,
                        w_before, X, y, sizes, diagnose,
                        lambda: judge(got, w, X, y, sizes, stale, w_before, weights=False))
    return clipped(verdict, accumulated_grad, got, w_before, X, y, sizes, micro_grads,
                   MATCH_RTOL, MATCH_ATOL)


def judge(got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, sizes: list[int],
          stale: torch.Tensor | None, w_before: torch.Tensor, weights: bool = True) -> Verdict:
    """Judge one returned gradient (already copied) against the full-batch reference. ``X``,
    ``y`` and ``sizes`` are the grader's copies as they were before the call (a call may
    change the caller's); ``w`` is the caller's, ``w_before`` its values before the call.
    ``weights``: whether a weight in the wrong place may be named (``diagnose``)."""
    shown = shown_call(X, sizes)
    inputs = {"sizes": sizes, "n": X.shape[1], "stale_grad": stale is not None}
    verdict = judge_tensor(got, reference(w_before, X, y), shown, dtype=w.dtype, rtol=RTOL,
                           atol=ATOL, inputs=inputs)
    verdict = with_diagnosis(verdict, lambda: diagnose(got, w_before, X, y, sizes, stale,
                                                       weights))
    verdict = dataclasses.replace(verdict, message=verdict.message.rstrip())
    if verdict.ok and not torch.equal(w.detach(), w_before):
        return Verdict(False, f"{shown} changed the values of w: it must only compute the "
                       "gradient, never update w.", "w-changed", Evidence(inputs=inputs))
    return verdict


def copied(got: Any) -> Any:
    """A private copy of what the student returned, taken before anything else runs."""
    return got.detach().clone() if isinstance(got, torch.Tensor) else got


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(w, X, y, sizes)`` a probe can step out of."""
    w, X, y, sizes = args
    out = []
    if 1 in sizes:
        i = sizes.index(1)
        j = i + 1 if i + 1 < len(sizes) else i - 1
        merged = [s for k, s in enumerate(sizes) if k != i]
        merged[j if j < i else j - 1] += 1  # the row joins its neighbour: same slices otherwise
        out.append(InputClass("micro-batch-of-one", (w, X, y, merged),
                              "Does a micro-batch of one row take another path (.squeeze(), a "
                              "shape test)?"))
    if len(set(sizes)) > 1:  # as many micro-batches of one size, on the first rows
        size = sum(sizes) // len(sizes)
        rows = size * len(sizes)
        out.append(InputClass("unequal-sizes", (w, X[:rows], y[:rows], [size] * len(sizes)),
                              "Does each micro-batch start where the previous one ended "
                              "(a running offset: start += b_j, or torch.split(X, sizes)), not "
                              "at j * size?"))
    return out


def subject(accumulated_grad: Callable, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
            sizes: list[int]) -> Subject:
    """What the probes need to explain a wrong ``accumulated_grad``."""
    def same(got: Any, expected: torch.Tensor) -> bool:
        return (isinstance(got, torch.Tensor) and got.shape == expected.shape
                and allclose(got, expected, RTOL, ATOL))

    return Subject("accumulated_grad", accumulated_grad, (w, X, y, sizes),
                   ("w", "X", "y", "sizes"), lambda w_, X_, y_, s_: reference(w_, X_, y_), same,
                   numbers_of, variations={2: lambda t: [1 - t]}, classes=input_classes)


def check_accumulated_grad(accumulated_grad: Callable, rng: np.random.Generator, *,
                           stale: bool, points: float = 1.0) -> CheckResult:
    """Call ``accumulated_grad`` on unequal sizes, with ``w`` fresh or carrying a stale grad.

    Args:
        accumulated_grad: the student's function.
        rng: a generator seeded with the grading seed.
        stale: whether ``w`` arrives with a stale ``.grad``.
        points: what the check is worth.
    """
    seed = seed_of(rng)
    verdict = PASS
    for i in range(6):  # later problems drawn after earlier ones, which stay the seed's own
        w, X, y, sizes = draw_problem(rng, stale, LARGE if i == 4 else 1.0)
        if i == 3:  # a micro-batch of one
            sizes = [1, sizes[0] - 1] + sizes[1:]
        if i == 5:  # float64 w, X and y (microbatch_dtype)
            w, X, y = in_float64(w, X, y)
        stale_grad = w.grad.clone() if stale else None
        w_before = w.detach().clone()
        probe_w = w.detach().clone().requires_grad_()
        probe_w.grad = None if stale_grad is None else stale_grad.clone()
        # the reference is the inputs' as handed over: the call may change the caller's X
        # and y in place (the sealed judge mirrors that back), and must be judged on them
        X0, y0, sizes0 = X.clone(), y.clone(), list(sizes)
        before = [snapshot(a) for a in (w, X, y)]
        got, failure = call_named(accumulated_grad, "accumulated_grad", (), w, X, y, sizes)
        got = copied(got)
        verdict = failure or judged_twice(accumulated_grad, got, w, X0, y0, sizes0, stale_grad,
                                          w_before)
        verdict = left_as_given(verdict, shown_call(X0, sizes0),
                                _left_on(before, (w, X, y, sizes), sizes0), sizes0)
        if i == 5:
            verdict = fixed_dtype(verdict, got, reference(w_before, X0, y0), RTOL, ATOL)
        if not verdict.ok:
            if verdict.misconception not in ("modified-input", DTYPE_FIXED):
                verdict = explain(verdict, subject(accumulated_grad, probe_w, X0.clone(),
                                                   y0.clone(), sizes0), got)
            break
    name = "stale_grad_cleared" if stale else "weighted_sizes"
    return finish(QUESTION, name, verdict, seed=seed, points=points,
                  passed_message="accumulated_grad matched the full-batch mean gradient.")


def left_as_given(verdict: Verdict, shown: str, left: list[str], sizes: list[int]) -> Verdict:
    """``verdict``, unless the call changed what it was given (``left``: ``_left_on``'s
    phrases), which is the failure: ``modified-input``, saying whether the answer was right
    for the inputs as they were. A changed ``w`` with a right answer keeps ``w-changed``."""
    if not left or verdict.misconception in ("w-changed", "worker-lost"):
        return verdict
    answer = ("" if verdict.ok else " Judged on the inputs as they were before the call, "
              f"the answer was also wrong: {verdict.message.rstrip()}")
    return Verdict(False, f"{shown} changed what it was given: {'; '.join(left)}. The caller "
                   "still needs its data after the call: compute the gradient from the "
                   "tensors without writing into them (slices are views: an in-place op on "
                   "X[a:b] writes into X), and leave the sizes list and w's hooks as they "
                   "were (remove a hook you add; only w.grad is the function's to clear and "
                   f"fill).{answer}",
                   "modified-input", Evidence(inputs={"sizes": sizes}), verdict.traceback)


def _left_on(before: list, args: tuple, sizes_before: list[int]) -> list[str]:
    """What a call changed on ``(w, X, y, sizes)``, apart from ``w.grad`` (its to write)."""
    left = [c for name, snap, arg in zip(("w", "X", "y"), before, args)
            for c in changes(snap, arg, name) if not c.startswith("w.grad")]
    if args[3] != sizes_before:
        left.append(f"sizes became {describe(args[3])} (it was {sizes_before})")
    return left


def check_same_objects(accumulated_grad: Callable, rng: np.random.Generator, *,
                       points: float = 1.0) -> CheckResult:
    """Two calls on the same ``w``, ``X``, ``y`` and ``sizes`` list: both answers right, and
    everything the caller handed over left as it was (``w.grad`` apart: the function clears
    and fills it), the plain ``sizes`` list and hooks on ``w`` included."""
    seed = seed_of(rng)
    w, X, y, sizes = draw_problem(rng, stale=True)
    w_before = w.detach().clone()
    X0, y0 = X.clone(), y.clone()  # the reference's inputs: the calls may change the caller's
    args = (w, X, y, sizes)
    sizes_before = list(sizes)
    before = [snapshot(a) for a in args[:3]]
    shown = f"accumulated_grad(w, X of shape {tuple(X.shape)}, y, sizes={sizes_before})"
    verdict = PASS
    for k in (1, 2):
        stale = w.grad.detach().clone() if w.grad is not None else None
        got, failure = call_named(accumulated_grad, "accumulated_grad", (), *args)
        got = copied(got)
        if failure is None and k == 2:  # the formula was right once: no replayed mistake
            verdict = judge_tensor(got, reference(w_before, X0, y0), shown, dtype=w.dtype,
                                   rtol=RTOL, atol=ATOL, inputs={"sizes": sizes_before})
        else:
            verdict = failure or judged_twice(accumulated_grad, got, w, X0, y0, sizes_before,
                                              stale, w_before)
        verdict = left_as_given(verdict, shown, _left_on(before, args, sizes_before),
                                sizes_before)
        if not verdict.ok:
            if k == 2:
                verdict = dataclasses.replace(verdict, message=(
                    f"Called a second time on the same objects: {verdict.message.rstrip()} "
                    "The first call gave the right answer: something it left behind changed "
                    "the second."), misconception=verdict.misconception or "second-call-differs")
            break
    return finish(QUESTION, "same_objects_twice", verdict, seed=seed, points=points,
                  passed_message="accumulated_grad gave the same right answer twice on the same "
                                 "objects and left them as they were.")
