"""Hand-written logistic losses that are wrong for some logits or labels (blind round zzh).

The contract's loss is ``F.binary_cross_entropy_with_logits(z, y)``: per row
``softplus(z) - y·z``, whose derivative in the logit is ``sigmoid(z) - y``. Written by hand it
goes wrong in ways that agree with it where every logit is 0 (the public tests' ``w = 0``) or
for some rows only:

- the stable form ``max(z, 0) - z·y + log(1 + exp(-|z|))`` without its abs: right for z >= 0,
  ``-z`` too much for z < 0 (and NaN past about -88.7 in float32);
- the labels ignored: ``log(1 + exp(-z))`` for every row (a label 1's loss), the ±1-label
  form ``log(1 + exp(-y·z))`` given 0/1 labels (a row labelled 0 adds nothing), or
  ``log(1 + exp(z))`` without its ``- y·z``;
- the sigmoid applied twice (``binary_cross_entropy_with_logits(sigmoid(z), y)``), or left
  out (the cross-entropy of probabilities given the logits).

Each form is a per-row loss of ``(z, y)``; its replay is the gradient of its mean over the rows
(float64, by autograd), which micro-batches weighted by ``b_j / B`` add up to. A gradient is
fitted to a form when it matches that replay, far nearer it than the right gradient, where the
replay is not the right gradient (the form acts on these rows). (Forms right except at large
logits, a sigmoid then log or a loss built from ``exp(z)``, are ``sigmoid-log`` and
``exp-overflow``: ``logreg_unstable``, ``microbatch_saturated``, ``microbatch_overflow``.)
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import torch
import torch.nn.functional as F

from .common import allclose

NAME = "wrong-logistic-loss"


class Form(NamedTuple):
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # per row, of (z, y)
    shown: str  # the loss as the student wrote it
    why: str  # what it does wrong
    rows: str  # the rows it is wrong on, told


FORMS: dict[str, Form] = {
    "abs-dropped": Form(
        lambda z, y: z.clamp(min=0) - z * y + torch.log1p(torch.exp(-z)),
        "max(z, 0) - z·y + log1p(exp(-z)) (or log(1 + exp(-z)), softplus(-z))",
        "the stable form without its abs, which is max(z, 0) - z·y + log1p(exp(-|z|)): for "
        "z >= 0 the two agree, but for negative logits log1p(exp(-z)) = -z + log1p(exp(z)), so "
        "each row with a negative logit has -z too much in its loss and -x_i / B added to its "
        "term of the gradient (and in float32 exp(-z) overflows past z of about -88.7: NaN)",
        "those with a negative logit"),
    "labels-ignored": Form(
        lambda z, y: torch.log1p(torch.exp(-z)),
        "log(1 + exp(-z)) for every row",
        "the loss of a row labelled 1, whatever the label: a row labelled 0 needs "
        "log(1 + exp(z)) (the logistic loss is y·log(1 + exp(-z)) + (1 - y)·log(1 + exp(z)))",
        "those labelled 0"),
    "labels-as-signs": Form(
        lambda z, y: torch.log1p(torch.exp(-y * z)),
        "log(1 + exp(-y·z))",
        "the form for labels -1 and +1, given labels 0 and 1: a row labelled 0 has the loss "
        "log 2 whatever its logit and adds nothing to the gradient; with 0/1 labels the sign "
        "is s = 2y - 1, log(1 + exp(-s·z))",
        "those labelled 0"),
    "label-term-dropped": Form(
        lambda z, y: torch.log1p(torch.exp(z)),
        "log(1 + exp(z)) without its - y·z",
        "the loss of a row labelled 0, whatever the label: the logistic loss is "
        "log(1 + exp(z)) - y·z",
        "those labelled 1"),
    "sigmoid-twice": Form(
        lambda z, y: F.binary_cross_entropy_with_logits(torch.sigmoid(z), y, reduction="none"),
        "binary_cross_entropy_with_logits(sigmoid(z), y) (BCEWithLogitsLoss on probabilities)",
        "the loss takes the logits and applies the sigmoid itself, so given sigmoid(z) it "
        "applies the sigmoid twice: its probability sigmoid(sigmoid(z)) stays between 0.5 and "
        "0.73 for any logit, and every row's gradient is wrong",
        "every row"),
    "sigmoid-missing": Form(
        lambda z, y: -(y * torch.log(z) + (1 - y) * torch.log(1 - z)),
        "-(y·log(z) + (1 - y)·log(1 - z)) on the logits (a cross-entropy of probabilities, no "
        "sigmoid)",
        "the cross-entropy of probabilities given the logits themselves: its gradient "
        "(z - y) / (z·(1 - z)) is not the logistic one, and a logit outside (0, 1) has no log "
        "(a NaN loss; F.binary_cross_entropy and nn.BCELoss refuse it)",
        "every row"),
}

ADVICE = ("Use F.binary_cross_entropy_with_logits(z, y) on the raw logits (or F.softplus(z) "
          "- y·z, or torch.logaddexp(zeros, z) - y·z): exact for every logit and label, "
          "negative and large ones included, and smooth at z = 0 (the stable form max(z, 0) "
          "- z·y + log1p(exp(-|z|)) with clamp or relu for the max takes a one-sided slope "
          "there, where training from zeros starts).")


def slopes(key: str, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The derivative of ``key``'s per-row loss in each logit (float64, by autograd)."""
    z = z.detach().double().clone().requires_grad_()
    with torch.enable_grad():
        FORMS[key].loss(z, y.detach().double()).sum().backward()
    return z.grad.detach()


def mean_grad(key: str, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The gradient in ``w`` of ``key``'s mean loss over the rows of ``X`` (float64)."""
    X64 = X.detach().double()
    return X64.T @ slopes(key, X64 @ w.detach().double(), y) / X.shape[0]


def right_grad(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    X64 = X.detach().double()
    return X64.T @ (torch.sigmoid(X64 @ w.detach().double()) - y.double()) / X.shape[0]


def fitted(got: Any, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
           stale: torch.Tensor | None, rtol: float, atol: float) -> list[tuple[str, bool]]:
    """``(form, stale grad kept)`` for each form whose replay (plus ``stale``, when given)
    ``got`` matches, ten times nearer it than the replay is to the right gradient, where the
    replay is not the right gradient; ``[]`` when none."""
    if not isinstance(got, torch.Tensor) or got.shape != w.shape:
        return []
    values = got.detach().cpu().double().reshape(-1)
    right = right_grad(w, X, y)
    found = []
    for key in FORMS:
        pattern = mean_grad(key, w, X, y)
        if not bool(torch.isfinite(pattern).all()) or allclose(pattern, right, rtol, atol):
            continue
        apart = float((pattern - right).abs().max())
        for extra in [None] if stale is None else [None, stale.detach().double().reshape(-1)]:
            fit = pattern if extra is None else pattern + extra
            if allclose(values, fit, rtol, atol) and \
                    float((values - fit).abs().max()) < apart / 10:
                found.append((key, extra is not None))
    return found


def shown_rows(key: str, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> str:
    """Which rows of this problem the form gets wrong, told with their logits."""
    z = X.detach().double() @ w.detach().double()
    wrong = (slopes(key, z, y) - (torch.sigmoid(z) - y.double())).abs() > 1e-9
    picked = z[wrong]
    if len(picked) == 0:
        return ""
    return (f"Here it differs from the logistic loss on {len(picked)} of the {len(z)} rows "
            f"({FORMS[key].rows}), with logits from {float(picked.min()):.3g} to "
            f"{float(picked.max()):.3g}. ")


def told(key: str, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> str:
    """What a gradient fitted to ``key`` is told: the form, what it does wrong, and the rows of
    this problem where it differs (``ADVICE``, what to write, is not in it)."""
    form = FORMS[key]
    rows = shown_rows(key, w, X, y)
    return (f"It matches the gradient of the per-row loss {form.shown}: {form.why}. "
            + rows).rstrip()
