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
from .microbatch_cached import after_step, next_batch
from .microbatch_clamped import NAME as CLAMPED
from .microbatch_clamped import clamped, saturated
from .microbatch_clipped import clipped
from .microbatch_dtype import NAME as DTYPE_FIXED
from .microbatch_dtype import fixed_dtype, in_float64
from .microbatch_inference import RAISES
from .microbatch_left import NAME as STALE_LEFT
from .microbatch_left import stale_left
from .microbatch_lossform import loss_form
from .microbatch_mistakes import (
    ATOL,
    MATCH_ATOL,
    MATCH_RTOL,
    RTOL,
    diagnose,
    micro_grads,
    reference,
)
from .microbatch_overflow import NAME as OVERFLOW
from .microbatch_overflow import overflow, overflowed
from .microbatch_precision import precise
from .microbatch_repeated import draw_repeated
from .microbatch_rounded import rounded
from .microbatch_saturated import NAME as SATURATED
from .microbatch_saturated import saturate
from .microbatch_subtracted import stale_kept
from .microbatch_weights import confirmed

QUESTION = "q2_microbatch"

#: The features' scale in the last problem, ``w`` divided by it: the same logits as any
#: draw, a gradient that many times larger (norm about 1 to 6), where what acts on large
#: gradients only shows (a clip at a norm or a value that the others stay under).
LARGE = 10.0


#: How many micro-batches the last problem of each check has (red team rt-4: a loop over the
#: first four passed every problem of 2-4 micro-batches)
MANY_PARTS = (6, 9)


def draw_problem(rng: np.random.Generator, stale: bool, scale: float = 1.0,
                 parts: tuple[int, int] = (2, 4)
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """A leaf ``w`` (with a stale ``.grad`` when asked), data, and ``parts`` (2-4) unequal
    sizes; with ``scale``, the features times it and ``w`` divided by it (the same logits)."""
    parts, n = int(rng.integers(parts[0], parts[1] + 1)), int(rng.integers(2, 7))
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


def shown_call(X: torch.Tensor, sizes: list[int]) -> str:
    return f"accumulated_grad(w, X of shape {tuple(X.shape)}, y, sizes={sizes})"


def judged_twice(accumulated_grad: Callable, got: Any, w: torch.Tensor, X: torch.Tensor,
                 y: torch.Tensor, sizes: list[int], stale: torch.Tensor | None,
                 w_before: torch.Tensor) -> Verdict:
    """``judge``; a weight in the wrong place it names is kept only when ``accumulated_grad``
    puts it in the same place at a second w (``microbatch_weights.confirmed``); an unnamed
    wrong answer that fits a clipped gradient is named when a second problem fits the same
    clip (``microbatch_clipped``), one that fits rounded shares b_j / B when a second draw
    fits the same rounding (``microbatch_rounded``), one that fits a hand-written logistic loss
    wrong for some logits when a second w fits the same (``microbatch_lossform``)."""
    verdict = confirmed(judge(got, w, X, y, sizes, stale, w_before), accumulated_grad,
                        w_before, X, y, sizes, diagnose,
                        lambda: judge(got, w, X, y, sizes, stale, w_before, weights=False))
    verdict = clipped(verdict, accumulated_grad, got, w_before, X, y, sizes, micro_grads,
                      MATCH_RTOL, MATCH_ATOL)
    verdict = rounded(verdict, accumulated_grad, got, w_before, X, y, sizes, stale, micro_grads,
                      MATCH_RTOL, MATCH_ATOL)
    return loss_form(verdict, accumulated_grad, got, w_before, X, y, sizes, stale)


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
        big = [k for k in range(len(sizes)) if sizes[k] >= 3]
        if big:  # a row from the nearest micro-batch of 3 or more: as many micro-batches
            j = min(big, key=lambda k: abs(k - i))
            nearest = list(sizes)
            nearest[i], nearest[j] = 2, sizes[j] - 1
        else:  # the row joins its neighbour: same slices otherwise, one micro-batch fewer
            j = i + 1 if i + 1 < len(sizes) else i - 1
            nearest = [s for k, s in enumerate(sizes) if k != i]
            nearest[j if j < i else j - 1] += 1
        out.append(InputClass("micro-batch-of-one", (w, X, y, nearest),
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
    for i in range(10):  # later problems drawn after earlier ones, which stay the seed's own
        w, X, y, sizes = (draw_problem(rng, stale, LARGE if i == 4 else 1.0) if i < 8
                          else draw_repeated(rng, stale) if i == 8  # a size repeated
                          else draw_problem(rng, stale, parts=MANY_PARTS))  # many (last)
        if i == 6:  # logits far past ±20 on misclassified rows (microbatch_saturated)
            saturate(rng, w, X, y, sizes)
        if i == 7:  # logits past float32's exp limit (microbatch_overflow)
            overflow(rng, w, X, y, sizes)
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
        got, failure = call_named(accumulated_grad, "accumulated_grad", RAISES, w, X, y, sizes)
        got = copied(got)
        verdict = failure or judged_twice(accumulated_grad, got, w, X0, y0, sizes0, stale_grad,
                                          w_before)
        verdict = left_as_given(verdict, shown_call(X0, sizes0),
                                _left_on(before, (w, X, y, sizes), sizes0), sizes0)
        verdict = stale_kept(verdict, got, w, stale_grad, RTOL, ATOL)
        verdict = stale_left(verdict, got, w, stale_grad, RTOL, ATOL)
        if i == 5:
            verdict = fixed_dtype(verdict, got, reference(w_before, X0, y0), RTOL, ATOL)
            strict = verdict.ok  # a miss at float64's tolerance only: no probes
            verdict = precise(verdict, accumulated_grad, got, w_before, X0, y0, sizes0,
                              stale_grad, reference, micro_grads, shown_call(X0, sizes0),
                              {"sizes": sizes0})
        else:
            strict = False
        if i == 6:  # a sigmoid then log, or the logits clamped (microbatch_clamped)
            verdict = saturated(verdict, accumulated_grad, got, w_before, X0, y0, sizes0,
                                stale_grad, MATCH_RTOL, MATCH_ATOL)
        if i == 7:
            verdict = overflowed(verdict, got, w_before, X0, y0, sizes0,
                                 reference(w_before, X0, y0))
        if i != 6 and not strict:  # a clamp that acts on this draw's logits (any bound)
            verdict = clamped(verdict, accumulated_grad, got, w_before, X0, y0, sizes0,
                              stale_grad, MATCH_RTOL, MATCH_ATOL)
        if not verdict.ok:
            named = ("modified-input", STALE_LEFT, DTYPE_FIXED, SATURATED, CLAMPED, OVERFLOW)
            if verdict.misconception not in named and not strict:
                verdict = explain(verdict, subject(accumulated_grad, probe_w, X0.clone(),
                                                   y0.clone(), sizes0), got)
            break
    name = "stale_grad_cleared" if stale else "weighted_sizes"
    return finish(QUESTION, name, verdict, seed=seed, points=points,
                  passed_message="accumulated_grad matched the full-batch mean gradient on every "
                    "problem it was given.")


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
    """Three calls on the same ``w``, ``X``, ``y`` and ``sizes`` list: every answer right, and
    everything the caller handed over left as it was (``w.grad`` apart: the function clears
    and fills it), the plain ``sizes`` list and hooks on ``w`` included. Before the third, the
    grader changes ``w``'s values in place, as a training step does: an answer kept between
    calls for the same ``w`` (keyed by ``id(w)`` or ``w.data_ptr()``) is stale there
    (``answer-cached``; red team rt-5)."""
    seed = seed_of(rng)
    w, X, y, sizes = draw_problem(rng, stale=True)
    w_before = w.detach().clone()
    X0, y0 = X.clone(), y.clone()  # the reference's inputs: the calls may change the caller's
    args = (w, X, y, sizes)
    sizes_before = list(sizes)
    before = [snapshot(a) for a in args[:3]]
    shown = f"accumulated_grad(w, X of shape {tuple(X.shape)}, y, sizes={sizes_before})"
    step = torch.tensor(rng.uniform(0.3, 0.8, w.shape[0]) * rng.choice([-1, 1], w.shape[0]),
                        dtype=w.dtype)  # drawn last: the problem stays the seed's own
    # drawn last: the next batch, of X's shape, at the same w (red team rt-9: a cache keyed by
    # w's values and X's shape kept 4/4)
    X_next = torch.tensor(rng.standard_normal(tuple(X.shape)), dtype=X.dtype)
    y_next = torch.tensor(rng.integers(0, 2, y.shape[0]), dtype=y.dtype)
    verdict, previous = PASS, None
    for k in (1, 2, 3, 4):
        if k == 3:  # a training step between calls: the same w, new values
            with torch.no_grad():
                w.add_(step)
            w_before = w.detach().clone()
            before = [snapshot(a) for a in args[:3]]
        if k == 4:  # the next batch of a data loader, at the same w
            args, X0, y0 = (w, X_next, y_next, sizes), X_next.clone(), y_next.clone()
            before = [snapshot(a) for a in args[:3]]
        stale = w.grad.detach().clone() if w.grad is not None else None
        got, failure = call_named(accumulated_grad, "accumulated_grad", RAISES, *args)
        got = copied(got)
        if failure is None and k > 1:  # the formula was right once: no replayed mistake
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
            if k == 3:
                verdict = after_step(verdict, got, previous)
            if k == 4:
                verdict = next_batch(verdict, got, previous)
            break
        previous = got
    return finish(QUESTION, "same_objects_twice", verdict, seed=seed, points=points,
                  passed_message="accumulated_grad gave the same right answer twice on the same "
                                 "objects, the right one again after w changed in place and for "
                                 "the next batch, and left them as they were.")
