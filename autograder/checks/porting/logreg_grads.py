"""q1_logreg's ``logreg_grads``: the closed-form gradient of the mean logistic loss, against
autograd's in float64 at random points of fresh problems, a wrong one named by how it relates
to the right one."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from ..describing import describe, plain
from ..probes import explain
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import allclose, call_named, first_failure, judge_tensor, with_diagnosis
from .logreg import ATOL, MATCH_ATOL, MATCH_RTOL, QUESTION, RTOL, draw_problem


def reference_grads(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
                    b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradient of the mean loss by autograd in float64: the oracle for the closed form."""
    w64 = w.detach().double().requires_grad_()
    b64 = b.detach().double().requires_grad_()
    F.binary_cross_entropy_with_logits(X.double() @ w64 + b64, y.double()).backward()
    return w64.grad, b64.grad


#: What a gradient computed from the logits X @ w (b left out) is told.
BIAS_LEFT_OUT = ("It is the gradient at b = 0: the logits were computed as X @ w, leaving b out "
                 "(the NumPy series had no bias), and b shifts every logit, so both gradients "
                 "depend on it. Use the residual sigmoid(X @ w + b) - y.")


def without_bias(got: Any, at: tuple[torch.Tensor, ...] | None, part: int) -> bool:
    """``got`` is gradient ``part`` (0: w, 1: b) at ``at = (X, y, w, b)`` with b left out of
    the logits, which the right gradient is not (so a b near 0 names nothing)."""
    if at is None or not isinstance(got, torch.Tensor) or got.numel() != at[2 + part].numel():
        return False
    X, y, w, b = at
    right = reference_grads(X, y, w, b)[part].reshape(-1)
    left_out = reference_grads(X, y, w, torch.zeros_like(b))[part].reshape(-1)
    return (allclose(got.detach().reshape(-1), left_out, MATCH_RTOL, MATCH_ATOL)
            and not allclose(right, left_out, MATCH_RTOL, MATCH_ATOL))


def diagnose_grads(got_w: torch.Tensor, ref_w: torch.Tensor, m: int,
                   at: tuple[torch.Tensor, ...] | None = None) -> tuple[str | None, str]:
    """Name a wrong closed-form gradient by how it relates to the reference (and, given the
    point ``at = (X, y, w, b)``, to the gradient with b left out)."""
    if without_bias(got_w, at, 0):
        return "bias-left-out", BIAS_LEFT_OUT
    got = got_w.detach().double()
    if allclose(got, m * ref_w, MATCH_RTOL, MATCH_ATOL):
        return "grad-not-divided-by-m", ("It is m times too large: divide X.T @ (sigmoid(X @ w "
                                         "+ b) - y) by m, the number of examples.")
    if allclose(got, -ref_w, MATCH_RTOL, MATCH_ATOL):
        return "grad-sign-flipped", ("It has the wrong sign: the residual is sigmoid(X @ w + b) "
                                     "- y, prediction minus label.")
    scaled = wrong_count(got, ref_w, m)
    if scaled is not None:
        return "grad-divided-by-wrong-count", (
            f"It is the right gradient times {scaled[0]:.4g}: divided by {scaled[1]} instead of "
            f"m = {m}, the number of rows of this X. Take m from X (X.shape[0]) on every call, "
            "not from a global or another dimension.")
    return None, "Write it as X.T @ (sigmoid(X @ w + b) - y) / m, the bias part as the mean."


def wrong_count(got: torch.Tensor, ref: torch.Tensor, m: int) -> tuple[float, int] | None:
    """``(factor, k)`` when ``got`` is ``ref`` (2 entries or more, not all near 0) times one
    factor ``m / k`` for a whole count ``k`` other than ``m``: the sum divided by ``k``."""
    ref = ref.detach().double().reshape(-1)
    got = got.reshape(-1)
    if got.numel() != ref.numel() or ref.numel() < 2 or float(ref.abs().max()) < 1e-6:
        return None
    factor = float(got @ ref) / float(ref @ ref)
    if factor <= 0 or not allclose(got, factor * ref, MATCH_RTOL, MATCH_ATOL):
        return None
    k = round(m / factor)
    if k < 1 or k == m or abs(m / factor - k) > 1e-3 * k:
        return None
    return factor, k


def diagnose_bias_grad(got_b: Any, ref_b: torch.Tensor, m: int,
                       at: tuple[torch.Tensor, ...] | None = None) -> tuple[str | None, str]:
    """Name a wrong gradient of b as ``diagnose_grads`` names one of w: b left out of the
    logits, the residuals summed instead of averaged (m times too large), the sign flipped.
    b's gradient may be ``(1,)`` or 0-d."""
    if without_bias(got_b, at, 1):
        return "bias-left-out", BIAS_LEFT_OUT
    if isinstance(got_b, torch.Tensor) and got_b.numel() == ref_b.numel():
        got, ref = got_b.detach().double().reshape(-1), ref_b.reshape(-1)
        if allclose(got, m * ref, MATCH_RTOL, MATCH_ATOL):
            return "grad-not-divided-by-m", ("It is m times too large: the bias gradient is the "
                                             "mean residual, (sigmoid(X @ w + b) - y).mean(), "
                                             "not its sum.")
        if allclose(got, -ref, MATCH_RTOL, MATCH_ATOL):
            return "grad-sign-flipped", ("It has the wrong sign: the residual is sigmoid(X @ w "
                                         "+ b) - y, prediction minus label.")
    return None, "The bias gradient is the mean residual, (sigmoid(X @ w + b) - y).mean()."


def check_logreg_grads(logreg_grads: Callable, rng: np.random.Generator, *,
                       points: float = 1.0) -> CheckResult:
    """Compare the closed-form gradient with autograd at random points of random problems."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(3):
        X, y, _, _ = draw_problem(rng)
        w = torch.tensor(rng.normal(0.0, 1.0, X.shape[1]), dtype=torch.float32)
        b = torch.tensor([rng.normal(0.0, 1.0)], dtype=torch.float32)
        ref_w, ref_b = reference_grads(X, y, w, b)
        got, verdict = call_named(logreg_grads, "logreg_grads", (), X.clone(), y.clone(),
                                  w.clone(), b.clone())
        if verdict is None:
            verdict = judge_grads(got, ref_w, ref_b, X.shape[0], (X, y, w, b))
        if not verdict.ok:
            from .logreg_regimes import grads_subject  # it builds on this module
            verdict = explain(verdict, grads_subject(logreg_grads, X, y, w, b), got)
            break
    return finish(QUESTION, "logreg_grads", verdict, seed=seed, points=points,
                  passed_message="logreg_grads matched autograd at random points.")


def judge_grads(got: Any, ref_w: torch.Tensor, ref_b: torch.Tensor, m: int,
                at: tuple[torch.Tensor, ...] | None = None) -> Verdict:
    """Judge ``logreg_grads``'s ``(grad_w, grad_b)``; b's gradient may be ``(1,)`` or 0-d.
    Given the point ``at = (X, y, w, b)``, a wrong one is also compared with the gradient
    with b left out of the logits."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return Verdict(False, f"logreg_grads returned {describe(got)}; expected a tuple "
                       "(grad_w, grad_b).", "wrong-type", Evidence(got=plain(got)))
    inputs = {"m": m, "n": int(ref_w.numel())}
    grad_w, grad_b = got
    return first_failure([
        lambda: with_diagnosis(
            judge_tensor(grad_w, ref_w, "the gradient of w", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs),
            lambda: diagnose_grads(grad_w, ref_w, m, at)),
        lambda: with_diagnosis(
            judge_tensor(grad_b, ref_b, "the gradient of b", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs, shapes=((1,), ())),
            lambda: diagnose_bias_grad(grad_b, ref_b, m, at)),
    ])
