"""q2_microbatch: the loss written with exp(z), which overflows (``exp-overflow``, blind round
zm; q1's name for the same mistake).

The NumPy series' logistic loss ``log(1 + e^z) - y z``, ported as
``torch.log1p(torch.exp(z)) - y * z`` (or ``log(1 + exp(z))``, or ``-log(sigmoid(z))`` with
``log(sigmoid(-z))`` for the other label), is right while every logit stays below about 88.7
in float32: past it ``exp(z)`` is inf and the gradient ``exp(z) / (1 + exp(z))`` is inf / inf,
NaN (``sigmoid(-z)`` there is subnormal, and the backward of its log divides by it). The
checks ask last (earlier draws stay the seed's own) a problem whose misclassified rows have
logits of 92-99, where the right gradient is finite; an answer holding NaN or inf there that a float32
replay of such a form reproduces is named.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..result import Verdict, with_probe

NAME = "exp-overflow"

#: The saturated rows' logits in the overflow problem: past float32's exp limit (about 88.7),
#: below 100 (a clamp of the logits at ±100 changes nothing here).
LOGITS = (92.0, 99.0)

#: The exp-based forms of the per-row loss, as functions of the logits and the labels.
FORMS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "log1p(exp(z)) - y z": lambda z, y: torch.log1p(torch.exp(z)) - y * z,
    "log(1 + exp(z)) - y z": lambda z, y: torch.log(1 + torch.exp(z)) - y * z,
    "log1p(exp(-z)) + (1 - y) z": lambda z, y: torch.log1p(torch.exp(-z)) + (1 - y) * z,
    "-log(sigmoid)": lambda z, y: -(y * torch.log(torch.sigmoid(z))
                                    + (1 - y) * torch.log(torch.sigmoid(-z))),
    "-log(1 / (1 + exp))": lambda z, y: -(y * torch.log(1 / (1 + torch.exp(-z)))
                                          + (1 - y) * torch.log(1 / (1 + torch.exp(z)))),
}


def overflow(rng: np.random.Generator, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
             sizes: list[int]) -> None:
    """Make the first row of each micro-batch misclassified with a logit of 92-99 in size,
    the signs alternating (so both ``exp(z)`` and ``exp(-z)`` overflow somewhere): the row
    along ``w`` scaled to that logit, its label the other side's (in place)."""
    w_ = w.detach()
    sign, start = float(rng.choice([-1.0, 1.0])), 0
    for size in sizes:
        logit = float(rng.uniform(*LOGITS)) * sign
        with torch.no_grad():
            X[start] = w_ * (logit / float(w_ @ w_))
        y[start] = 0.0 if logit > 0 else 1.0
        start, sign = start + size, -sign


def replay(form: Callable, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           sizes: list[int]) -> torch.Tensor:
    """The float32 gradient of ``form``'s mean loss, micro-batch by micro-batch, weighted."""
    leaf = w.detach().float().clone().requires_grad_()
    B, start = sum(sizes), 0
    for size in sizes:
        z = X[start:start + size].float() @ leaf
        (form(z, y[start:start + size].float()).mean() * size / B).backward()
        start += size
    return leaf.grad.detach().double()


def overflowed(verdict: Verdict, got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
               sizes: list[int], right: torch.Tensor) -> Verdict:
    """``verdict`` on the overflow problem, named ``exp-overflow`` when the answer holds NaN
    or inf where the right gradient ``right`` is finite and an exp-based form's float32 replay
    gives the same (NaN and inf at the same places, finite values close)."""
    if verdict.ok or verdict.misconception is not None or not isinstance(got, torch.Tensor) \
            or got.shape != w.shape or not bool(torch.isfinite(right).all()):
        return verdict
    answer = got.detach().cpu().double()
    if bool(torch.isfinite(answer).all()):
        return verdict
    fits = [name for name, form in FORMS.items()
            if torch.allclose(answer, replay(form, w, X, y, sizes), rtol=1e-4, atol=1e-5,
                              equal_nan=True)]
    if not fits:
        return verdict
    top = float((X.double() @ w.detach().double()).abs().max())
    return with_probe(verdict, {
        "id": NAME, "established": f"the float32 replay of {', '.join(fits)} gives the same "
        "NaN/inf", "calls": []}, misconception=NAME, message=(
        f"{verdict.message.rstrip()} Logits here reach {top:.0f}, and your gradient is what a "
        "loss built from exp(z) gives there (log1p(exp(z)) - y z, log(1 + exp(z)), or "
        "-log(sigmoid)): exp(z) overflows to inf in float32 past z ~ 88.7 (float64 ~ 709), "
        "and the gradient exp(z) / (1 + exp(z)) becomes inf / inf = NaN. Use "
        "F.binary_cross_entropy_with_logits(z, y), or F.softplus / F.logsigmoid, which never "
        "form exp(z) and stay exact for any logit."))
