"""q1_logreg: an epsilon inside the log of a sigmoid (``epsilon-in-log``).

``-(y·log(sigmoid(z) + ε) + (1 - y)·log(1 - sigmoid(z) + ε))`` keeps ``log`` away from 0 and
agrees with the contract's loss for ordinary logits, but in float32 ``sigmoid`` rounds to 1
once a logit passes about 17 (``1 - sigmoid`` to 0): a row on the wrong side then costs
``-log(ε)`` whatever its logit, and its slope ``σ(1 - σ)/(1 - σ + ε)`` is 0 where the
contract's is ``σ - y``, about ±1. The worst-classified rows stop pulling ``w`` and ``b``, so
with large logits the run parts from the grader's without any inf or NaN to show it.

Named when the student's losses match the contract's loop replayed in float32 with that loss
for one of ``EPSILONS``, ten times nearer it than the right run, where the replay is not the
right run, and no replay with the probability clamped instead (``clamp(ε, 1 - ε)``, another
mistake that caps the loss) matches them too. The replays are the grader's own; no call is
made.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from ..closeness import float_list
from ..result import Verdict, with_probe
from .common import allclose
from .logistic_forms import ADVICE
from .logreg_diagnosis import ATOL, RTOL
from .logreg_runs import reference_run
from .logreg_unstable import replay_loss

NAME = "epsilon-in-log"
#: The epsilons replayed (students write a power of ten).
EPSILONS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12, 1e-15)

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def inside(eps: float) -> Loss:
    """The per-row loss with ``eps`` added inside each log."""
    def loss(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(z)
        return -(y * torch.log(p + eps) + (1 - y) * torch.log(1 - p + eps))
    return loss


def clamped(eps: float) -> Loss:
    """The rival: the probability clamped to ``[eps, 1 - eps]`` before the log."""
    def loss(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(z).clamp(eps, 1 - eps)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p))
    return loss


def _fits(got: torch.Tensor, replay: list[float], right: torch.Tensor) -> bool:
    """``got`` is the finite ``replay``, which the right run is not, ten times nearer it."""
    replayed = torch.tensor(replay, dtype=torch.float64)
    if replayed.shape != got.shape or not bool(torch.isfinite(replayed).all()) \
            or allclose(right, replayed, RTOL, ATOL):
        return False
    apart = float((replayed - right).abs().max())
    return allclose(got, replayed, RTOL, ATOL) and float((got - replayed).abs().max()) < apart / 10


def _hint(eps: float) -> str:
    cap = -math.log(eps)
    return (
        f"The losses match the grader's run on this data with an epsilon inside the log, "
        f"-(y·log(sigmoid(z) + ε) + (1 - y)·log(1 - sigmoid(z) + ε)) with ε = {eps:g}, "
        "replayed in float32, and not its right run. In float32 sigmoid(z) rounds to 1 once a "
        f"logit passes about 17, so a row on the wrong side costs -log(ε) = {cap:.3g} whatever "
        "its logit, and its slope sigmoid(z)·(1 - sigmoid(z))/(1 - sigmoid(z) + ε) is 0 where "
        "the right one, sigmoid(z) - y, is about ±1: the worst-classified rows stop pulling w "
        f"and b. The epsilon hides the log of 0 instead of avoiding it. {ADVICE}")


def epsilon_in_log(verdict: Verdict, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
                   got: Any) -> Verdict:
    """``verdict``, named ``epsilon-in-log`` when it fails unnamed and the losses of ``got``
    (``(w, b, losses)``) are the float32 replay with an epsilon inside the log alone."""
    if verdict.ok or verdict.misconception is not None \
            or not (isinstance(got, (tuple, list)) and len(got) == 3) \
            or not (float_list(got[2]) and len(got[2]) == steps):
        return verdict
    target = torch.tensor(got[2], dtype=torch.float64)
    if not bool(torch.isfinite(target).all()):
        return verdict
    right = torch.tensor(reference_run(X, y, lr, steps)[2], dtype=torch.float64)
    found = [eps for eps in EPSILONS
             if _fits(target, replay_loss(inside(eps), X, y, lr, steps), right)]
    if not found or any(_fits(target, replay_loss(clamped(eps), X, y, lr, steps), right)
                        for eps in EPSILONS):
        return verdict
    return with_probe(verdict, {
        "id": NAME, "established": f"the losses of the grader's run with log(sigmoid(z) + "
                                   f"{found[0]:g}), replayed in float32 on the same data",
        "calls": []}, misconception=NAME, message=f"{verdict.message.rstrip()} {_hint(found[0])}")
