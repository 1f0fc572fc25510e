"""q2_microbatch: a sigmoid then log instead of the fused loss (blind round zb).

``F.binary_cross_entropy(torch.sigmoid(z), y)`` (or the loss written by hand from
``p = sigmoid(z)``) is right while every logit stays below about 16.6 in float32: past it the
sigmoid rounds to exactly 1.0 (or 0.0), torch clamps ``log(0)`` at -100, and the row's
gradient ``p - y`` comes back as 0 (or NaN by hand) instead of about ``±x_i``. The checks ask
last (earlier draws stay the seed's own) a problem with a few misclassified rows whose logits
are far past ±20; a wrong answer there that is the float32 replay of a sigmoid then log is
named ``sigmoid-log``, q1's name for the same mistake.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..result import Verdict

NAME = "sigmoid-log"


def saturate(rng: np.random.Generator, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
             sizes: list[int]) -> None:
    """Make the first row of each micro-batch misclassified with a logit far past ±20: the
    row along ``w`` scaled to a logit of 25-40, its label the other side's (in place)."""
    w_ = w.detach()
    start = 0
    for size in sizes:
        logit = float(rng.uniform(25.0, 40.0) * rng.choice([-1.0, 1.0]))
        with torch.no_grad():
            X[start] = w_ * (logit / float(w_ @ w_))
        y[start] = 0.0 if logit > 0 else 1.0
        start += size


def replays(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, sizes: list[int]
             ) -> list[torch.Tensor]:
    """The float32 gradient of each sigmoid-then-log form, micro-batch by micro-batch."""
    out = []
    sigmoids = (torch.sigmoid, lambda z: 1 / (1 + torch.exp(-z)))
    for form, sigmoid in ((f, s) for f in ("bce", "by-hand") for s in sigmoids):
        leaf = w.detach().float().clone().requires_grad_()
        B, start = sum(sizes), 0
        for size in sizes:
            z = X[start:start + size].float() @ leaf
            yj = y[start:start + size].float()
            p = sigmoid(z)
            loss = (F.binary_cross_entropy(p, yj) if form == "bce"
                    else -(yj * torch.log(p) + (1 - yj) * torch.log(1 - p)).mean())
            (loss * size / B).backward()
            start += size
        out.append(leaf.grad.detach().double())
    return out


def named(verdict: Verdict, got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
          sizes: list[int]) -> Verdict:
    """``verdict`` (on the saturated problem), named ``sigmoid-log`` when the answer is a
    float32 replay of a sigmoid then log there."""
    if verdict.ok or not isinstance(got, torch.Tensor) or got.shape != w.shape:
        return verdict
    answer = got.detach().cpu().double()
    if not any(torch.allclose(answer, r, rtol=1e-4, atol=1e-5, equal_nan=True)
               for r in replays(w, X, y, sizes)):
        return verdict
    return dataclasses.replace(verdict, misconception=NAME, message=(
        f"{verdict.message.rstrip()} Some logits here are far past ±20 on misclassified rows, "
        "and your gradient is what a sigmoid then log gives there "
        "(F.binary_cross_entropy(torch.sigmoid(z), y), 1 / (1 + exp(-z)), or the log of p written by hand): in "
        "float32 the sigmoid rounds to exactly 1.0 past a logit of about 16.6, torch clamps "
        "log(0) at -100, and such a row adds 0 (or NaN) instead of its x_i. Use "
        "F.binary_cross_entropy_with_logits(z, y) on the logits, which stays exact for large "
        "logits."))
