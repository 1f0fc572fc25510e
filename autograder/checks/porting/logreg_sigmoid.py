"""q1_logreg's ``logreg_grads``: the sigmoid computed by a wrong formula.

The closed form needs p = sigmoid(z) of the logits z = X @ w + b. Written by hand, its formula
can go wrong: the tanh identity without halving z (``0.5 * (1 + tanh(z))``, which is
sigmoid(2z)), the sign in the exponent flipped (``1 / (1 + exp(z))``, sigmoid(-z)), a softmax
(over one logit: always 1; over the examples: p's that sum to 1), a piecewise-linear "hard
sigmoid" (``F.hardsigmoid``, ``clamp(0.5 + z / 4, 0, 1)``), a "stable" sigmoid by branches
with one branch's sign flipped (sigmoid(|z|) or sigmoid(-|z|)). Most agree with the sigmoid where
every logit is 0, the public test's w = 0, b = 0. Each formula is replayed in the closed form
(float64); a gradient is named ``NAME`` when exactly one replay matches it where the right
gradient does not (``fitted``), and the check keeps the name only when the student's answer
at a second point matches the same replay (``confirmed``).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .common import allclose, call_named
from .logreg_diagnosis import MATCH_ATOL, MATCH_RTOL

NAME = "wrong-sigmoid"
#: Key -> (the formula's p of the logits z, how the student is told it).
FORMULAS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], str]] = {
    "sigmoid(2z)": (lambda z: torch.sigmoid(2 * z),
                    "p = sigmoid(2z), e.g. 0.5 * (1 + tanh(z)): the tanh identity is "
                    "sigmoid(z) = 0.5 * (1 + tanh(z / 2)), z halved inside the tanh"),
    "sigmoid(-z)": (lambda z: torch.sigmoid(-z),
                    "p = sigmoid(-z) = 1 - sigmoid(z), e.g. 1 / (1 + exp(z)): the sign in the "
                    "exponent is flipped; sigmoid(z) = 1 / (1 + exp(-z))"),
    "sigmoid(-2z)": (lambda z: torch.sigmoid(-2 * z),
                     "p = sigmoid(-2z), e.g. 0.5 * (1 - tanh(z)): both z's halving and its sign "
                     "are lost; sigmoid(z) = 0.5 * (1 + tanh(z / 2))"),
    "sigmoid(z/2)": (lambda z: torch.sigmoid(z / 2),
                     "p = sigmoid(z / 2), e.g. 1 / (1 + exp(-z / 2)): z is halved where the "
                     "sigmoid takes it whole"),
    "sigmoid(|z|)": (lambda z: torch.sigmoid(z.abs()),
                     "p = sigmoid(|z|): right where z >= 0, sigmoid(-z) where z < 0, e.g. a "
                     "\"stable\" sigmoid by branches whose branch for z < 0 is 1 / (1 + exp(z)) "
                     "where it must be exp(z) / (1 + exp(z))"),
    "sigmoid(-|z|)": (lambda z: torch.sigmoid(-z.abs()),
                      "p = sigmoid(-|z|): right where z < 0, sigmoid(-z) where z >= 0, e.g. a "
                      "\"stable\" sigmoid by branches whose branch for z >= 0 is exp(-z) / "
                      "(1 + exp(-z)) where it must be 1 / (1 + exp(-z))"),
    "one": (lambda z: torch.ones_like(z),
            "p = 1 for every example, a softmax over a single logit (a softmax along a "
            "dimension of size 1 is always 1; the two-class softmax of (0, z) is sigmoid(z))"),
    "softmax": (lambda z: torch.softmax(z, dim=0),
                "p = softmax(z) over the examples (torch.softmax of the (m,) logits): it "
                "normalises across the batch, so the p's sum to 1, where each example needs "
                "its own sigmoid(z_i)"),
    **{f"hard-{k}": (lambda z, k=k: torch.clamp(0.5 + z / k, 0.0, 1.0),
                     f"p = clamp(0.5 + z / {k}, 0, 1), a piecewise-linear \"hard sigmoid\""
                     + (" (F.hardsigmoid)" if k == 6 else ""))
       for k in (4, 5, 6)},
}

#: What every wrong formula is also told.
ADVICE = ("The closed form needs p = sigmoid(z) = 1 / (1 + exp(-z)) of the logits z = X @ w + "
          "b; a formula that agrees with it where z = 0 passes the public test (w = 0, "
          "b = 0) and fails on other logits. Use torch.sigmoid(X @ w + b) (or torch.special.expit): "
          "exact, and it never overflows.")


def replays(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
            b: torch.Tensor) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Per formula, the closed-form ``(grad_w, grad_b)`` (float64, flat) with its p."""
    X64, y64 = X.double(), y.double()
    z = X64 @ w.detach().double() + b.detach().double()
    out = {}
    for key, (p_of, _) in FORMULAS.items():
        r = p_of(z) - y64
        out[key] = (X64.T @ r / X.shape[0], r.mean().reshape(1))
    r = torch.sigmoid(z) - y64
    out["right"] = (X64.T @ r / X.shape[0], r.mean().reshape(1))
    return out


def fitted(got: Any, at: tuple[torch.Tensor, ...] | None, part: int) -> tuple[str, ...]:
    """The formulas whose replay gradient ``part`` (0: w, 1: b) at ``at = (X, y, w, b)``
    ``got`` is, where the right gradient is not that replay; ``()`` when none. For w's
    gradient several can match where they agree on every logit drawn (sigmoid(-z) and
    sigmoid(|z|) where every z < 0): all are kept, and told. b's is one number, which a
    formula can meet by chance: it is fitted only when exactly one matches."""
    if at is None or not isinstance(got, torch.Tensor) or got.numel() != at[2 + part].numel():
        return ()
    values = got.detach().double().reshape(-1)
    grads = replays(*at)
    right = grads.pop("right")[part]
    found = tuple(key for key, pair in grads.items()
                  if allclose(values, pair[part], MATCH_RTOL, MATCH_ATOL)
                  and not allclose(right, pair[part], MATCH_RTOL, MATCH_ATOL))
    if part == 1 and allclose(values, -right, MATCH_RTOL, MATCH_ATOL):
        return ()  # b's gradient with its sign flipped: sigmoid(-z) gives it where mean(y) = 0.5
    return found if part == 0 or len(found) == 1 else ()


def wrong_sigmoid(got: Any, at: tuple[torch.Tensor, ...] | None,
                  part: int) -> tuple[str | None, str]:
    """``(NAME, what it is told)`` when ``fitted`` finds the formula; ``(None, "")`` else."""
    keys = fitted(got, at, part)
    if not keys:
        return None, ""
    told = " Or, the same on every logit here, ".join(FORMULAS[key][1] for key in keys)
    return NAME, f"It matches the closed form with {told}. {ADVICE}"


def formula_of(got: Any, at: tuple[torch.Tensor, ...]) -> tuple[str, ...]:
    """The formulas an answer ``(grad_w, grad_b)`` at ``at`` was fitted to: w's, else b's."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return ()
    return fitted(got[0], at, 0) or fitted(got[1], at, 1)


def second_point(at: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Another point of the same problem: w and b halved and negated, b moved off 0, each
    still a leaf that requires grad when it was one."""
    X, y, w, b = at
    w2 = (-0.5 * w.detach()).requires_grad_(w.requires_grad)
    b2 = (-0.5 * b.detach() - 0.25).requires_grad_(b.requires_grad)
    return X, y, w2, b2


def confirmed(verdict: Any, got: Any, at: tuple[torch.Tensor, ...] | None,
              logreg_grads: Callable, unnamed: Callable[[], Any]) -> Any:
    """``verdict``, when it names ``NAME`` and the student's ``logreg_grads`` at
    ``second_point(at)`` fits the same formula as ``got`` at ``at``; else ``unnamed()``: the
    judgement without the sigmoid's replays (the probes look further). Only a verdict naming
    ``NAME`` costs a call. Where several formulas fitted (they agreed on every logit), one
    of them fitting at the second point is enough."""
    if verdict.ok or verdict.misconception != NAME or at is None:
        return verdict
    keys = formula_of(got, at)
    point = second_point(at)
    got2 = (call_named(logreg_grads, "logreg_grads", (), point[0].clone(), point[1].clone(),
                       *point[2:])[0] if keys else None)
    if got2 is not None and set(formula_of(got2, point)) & set(keys):
        return verdict
    return unnamed()

