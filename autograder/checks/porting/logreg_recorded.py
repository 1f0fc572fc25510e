"""q1_logreg: losses recorded as a running statistic of the per-step losses.

The contract's ``losses[k]`` is step ``k``'s own loss, before its update. A loop that trains
right but records what a training log shows, the running mean of the losses so far (the
accumulate-then-report habit of interval logging), their cumulative sum, an exponential moving
average (started at the first loss, at 0, or bias-corrected as Adam's moments are), the lowest
loss so far, or the previous step's loss, returns the grader's ``w`` and ``b`` and a
trajectory that is a transform of the grader's own losses. Each transform is applied to the
grader's losses (no replayed training: the updates are the grader's), the moving average's
factor fitted to the student's losses; a trajectory that one of them gives, which the right
losses are not, names it (``running_statistic``).

A transform needs losses enough to tell it: each is checked on at least ``EVIDENCE`` of them
beyond what it is fitted to. A shorter run (the regimes' single step, where most of them are
the loss itself) is asked again with ``PROBE_STEPS`` steps (``recorded_again``).
"""

from __future__ import annotations

from typing import Callable

import torch

#: How many losses beyond those a transform is fitted to (or starts from) must match it.
EVIDENCE = 2
#: The steps a run too short to tell a transform is asked again with.
PROBE_STEPS = 8
#: Gauss-Newton iterations fitting the moving average's factor.
ITERATIONS = 8

ADVICE = ("Record each step's own loss: append loss.item() (or float(loss)) as computed in "
          "that step, before the update. A running mean or a smoothed curve is for printing "
          "progress: keep it in a variable of its own if you want one, not in the returned list.")

Matches = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], bool]


def _steps(n: int) -> torch.Tensor:
    return torch.arange(1, n + 1, dtype=torch.float64)


#: name -> (what the losses are, the transform of the right losses), fitted nothing
FIXED: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "losses-running-mean": ("their running mean (the sum so far over step + 1)",
                            lambda L: L.cumsum(0) / _steps(len(L))),
    "losses-summed": ("their cumulative sum",
                      lambda L: L.cumsum(0)),
    "losses-running-min": ("the lowest loss so far (a best-loss record)",
                           lambda L: L.cummin(0).values),
}

#: how a moving average starts -> how it is told
STARTS = {"first": "started at the first loss",
          "zero": "started at 0",
          "corrected": "started at 0 and bias-corrected (divided by 1 - beta ** (step + 1))"}


def smoothed(L: torch.Tensor, beta: float, start: str) -> torch.Tensor:
    """The moving average ``e = beta * e + (1 - beta) * loss`` of ``L``, as ``start`` says."""
    out, e = [], None
    for k, v in enumerate(L.tolist()):
        if e is None:
            e = v if start == "first" else (1 - beta) * v
        else:
            e = beta * e + (1 - beta) * v
        out.append(e / (1 - beta ** (k + 1)) if start == "corrected" else e)
    return torch.tensor(out, dtype=torch.float64)


def _first_beta(target: torch.Tensor, L: torch.Tensor, start: str) -> float | None:
    """The factor the first losses give (a starting point for the fit)."""
    if start == "zero":
        return 1 - float(target[0] / L[0]) if L[0] != 0 else None
    g1, l0, l1 = float(target[1]), float(L[0]), float(L[1])
    if start == "first":  # g1 = beta * l0 + (1 - beta) * l1
        return (l1 - g1) / (l1 - l0) if l1 != l0 else None
    # corrected: g1 = (beta * l0 + l1) / (1 + beta)
    return (l1 - g1) / (g1 - l0) if g1 != l0 else None


def fitted_beta(target: torch.Tensor, L: torch.Tensor, start: str) -> float | None:
    """The moving average's factor nearest ``target`` (least squares), in (0, 1), or None."""
    beta = _first_beta(target, L, start)
    for _ in range(ITERATIONS):
        if beta is None or not 0 < beta < 1:
            return None
        now = smoothed(L, beta, start)
        h = 1e-6 * max(beta, 1 - beta)
        slope = (smoothed(L, beta + h, start) - now) / h
        if not (torch.isfinite(slope).all() and float(slope @ slope) > 0):
            return None
        change = float(slope @ (target - now)) / float(slope @ slope)
        beta += change
        if abs(change) <= 1e-12:
            break
    return beta if beta is not None and 0 < beta < 1 else None


def _candidates(target: torch.Tensor, L: torch.Tensor, matches: Matches
                ) -> list[tuple[str, str]]:
    """Every transform of the right losses ``L`` that gives ``target``: (name, what)."""
    n, found = len(target), []
    for name, (what, transform) in FIXED.items():
        if n >= 1 + EVIDENCE and matches(target, transform(L), L):
            found.append((name, what))
    if n >= 2 + EVIDENCE and matches(target[1:], L[:-1], L[1:]):
        found.append(("losses-lagged", "the previous step's loss (each one step late)"))
    if n >= 2 + EVIDENCE:
        mean = FIXED["losses-running-mean"][1](L)
        for start, how in STARTS.items():
            beta = fitted_beta(target, L, start)
            if beta is None:
                continue
            replay = smoothed(L, beta, start)
            # as beta -> 1 the bias-corrected average is the running mean: that one, fitted
            # nothing, is what such a factor gives, not a smoothing of its own; and the
            # average started at the first loss is that loss held, which no smoothing is
            if matches(target, replay, L) and not matches(replay, mean, L) \
                    and not matches(replay, L[:1].expand_as(L), L):
                found.append(("losses-smoothed", f"an exponential moving average (e = {beta:.3g} "
                              f"* e + {1 - beta:.3g} * loss, {how})"))
    return found


def running_statistic(target: torch.Tensor, correct: torch.Tensor, matches: Matches
                      ) -> tuple[str, str] | None:
    """``(name, advice)`` when the student's losses ``target`` are one running statistic of
    the grader's ``correct`` losses (``matches(got, replay, right)``: ``got`` is ``replay``,
    which ``right`` is not); where two fit (too few losses to tell them), both are said."""
    if len(target) != len(correct) or not torch.isfinite(target).all():
        return None
    found = _candidates(target.double(), correct.double(), matches)
    if not found:
        return None
    names = sorted({name for name, _ in found})
    name = names[0] if len(names) == 1 else "losses-running-statistic"
    what = " or ".join(what for _, what in found)
    either = ": your losses fit each" if len(found) > 1 else ""
    return name, (f"The losses match the grader's own per-step losses recorded as {what}{either}: "
                  "the training follows the grader's run, only the record differs (losses[k] is "
                  f"step k's own loss). {ADVICE}")
