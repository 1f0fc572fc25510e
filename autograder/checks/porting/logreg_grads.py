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
from .common import allclose, call_named, first_failure, judge_tensor, whole_count, with_diagnosis
from .logreg import QUESTION, draw_problem
from .logreg_closed import without_autograd
from .logreg_diagnosis import ATOL, MATCH_ATOL, MATCH_RTOL, RTOL
from .logreg_marked import left_marked
from .logreg_sigmoid import confirmed, wrong_sigmoid


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

#: What every bias in the wrong place is also told: where it belongs.
BIAS_PLACE = ("The logits are X @ w + b, and the sigmoid applies to all of it: the residual is "
              "sigmoid(X @ w + b) - y.")

#: The other wrong places of b, each told what the replay it matched did.
BIAS_MISPLACED = {
    "bias-after-sigmoid": ("It matches the residual sigmoid(X @ w) + b - y: b was added after "
                           "the sigmoid instead of to the logits, which is right only at b = 0. "
                           + BIAS_PLACE),
    "bias-subtracted": ("It matches the logits X @ w - b: b was subtracted from the logits "
                        "instead of added, which is right only at b = 0. " + BIAS_PLACE),
}


def misplaced_grads(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
                    b: torch.Tensor) -> dict[str, tuple[torch.Tensor, list[torch.Tensor]]]:
    """The closed forms (float64) of each wrong place of b: per name, the gradient of w and
    the gradients of b it may come with (the closed form's mean residual, and for logits
    X @ w - b also the chain rule's negated one)."""
    X64, y64, w64, b64 = X.double(), y.double(), w.detach().double(), b.detach().double()
    m = X.shape[0]
    after = torch.sigmoid(X64 @ w64) + b64 - y64
    minus = torch.sigmoid(X64 @ w64 - b64) - y64
    left_w, left_b = reference_grads(X, y, w, torch.zeros_like(b))
    return {"bias-left-out": (left_w, [left_b.reshape(-1)]),
            "bias-after-sigmoid": (X64.T @ after / m, [after.mean().reshape(1)]),
            "bias-subtracted": (X64.T @ minus / m, [minus.mean().reshape(1),
                                                    -minus.mean().reshape(1)])}


def misplaced_bias(got: Any, at: tuple[torch.Tensor, ...] | None,
                   part: int) -> tuple[str | None, str]:
    """The wrong place of b whose replay gradient ``part`` (0: w, 1: b) at ``at = (X, y, w,
    b)`` is, and what it is told; only a replay the right gradient is not (so a b near 0 names
    nothing), and only when one place alone matches; ``(None, "")`` otherwise."""
    if at is None or not isinstance(got, torch.Tensor) or got.numel() != at[2 + part].numel():
        return None, ""
    X, y, w, b = at
    right = reference_grads(X, y, w, b)[part].reshape(-1)
    values = got.detach().double().reshape(-1)
    found = []
    for name, (grad_w, grads_b) in misplaced_grads(X, y, w, b).items():
        replays = [grad_w.reshape(-1)] if part == 0 else grads_b
        if any(allclose(values, r, MATCH_RTOL, MATCH_ATOL)
               and not allclose(right, r, MATCH_RTOL, MATCH_ATOL) for r in replays):
            found.append(name)
    if len(found) != 1:
        return None, ""
    return found[0], BIAS_LEFT_OUT if found[0] == "bias-left-out" else BIAS_MISPLACED[found[0]]


def diagnose_grads(got_w: torch.Tensor, ref_w: torch.Tensor, m: int,
                   at: tuple[torch.Tensor, ...] | None = None,
                   sigmoids: bool = True) -> tuple[str | None, str]:
    """Name a wrong closed-form gradient by how it relates to the reference (and, given the
    point ``at = (X, y, w, b)``, to the gradients with b in the wrong place: left out of the
    logits, added after the sigmoid, subtracted from the logits; and, with ``sigmoids``, to
    those with the sigmoid computed by a wrong formula)."""
    name, told = misplaced_bias(got_w, at, 0)
    if name is None and sigmoids:
        name, told = wrong_sigmoid(got_w, at, 0)
    if name is not None:
        return name, told
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
    k = whole_count(m, factor)
    return None if k is None else (factor, k)


def diagnose_bias_grad(got_b: Any, ref_b: torch.Tensor, m: int,
                       at: tuple[torch.Tensor, ...] | None = None,
                       sigmoids: bool = True) -> tuple[str | None, str]:
    """Name a wrong gradient of b as ``diagnose_grads`` names one of w: b in the wrong place
    (left out of the logits, after the sigmoid, subtracted), a wrong sigmoid, the residuals
    summed instead of averaged (m times too large), the sign flipped.
    b's gradient may be ``(1,)`` or 0-d."""
    name, told = misplaced_bias(got_b, at, 1)
    if name is None and sigmoids:
        name, told = wrong_sigmoid(got_b, at, 1)
    if name is not None:
        return name, told
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
    for i in range(4):
        X, y, _, _ = draw_problem(rng)
        if i == 3:  # last: one row (red team rt-5: half the gradient at m = 1 kept the point)
            X, y = X[:1].clone(), y[:1].clone()
        w = torch.tensor(rng.normal(0.0, 1.0, X.shape[1]), dtype=torch.float32)
        b = torch.tensor([rng.normal(0.0, 1.0)], dtype=torch.float32)
        ref_w, ref_b = reference_grads(X, y, w, b)
        given = (X.clone(), y.clone())  # the caller's data, as the call leaves it
        got, verdict = call_named(logreg_grads, "logreg_grads", (), *given, w.clone(),
                                  b.clone())
        if verdict is None:
            verdict = judged_twice(logreg_grads, got, ref_w, ref_b, (X, y, w, b))
            verdict = left_marked(verdict, "logreg_grads(X, y, w, b)", dict(zip("Xy", given)))
            if i == 0:  # once: the same point under inference mode (closed form, not autograd)
                verdict = without_autograd(verdict, logreg_grads, (X, y, w, b), lambda again:
                                           judge_grads(again, ref_w, ref_b, X.shape[0]))
        if not verdict.ok:
            from .logreg_grads_trained import grads_subject  # it builds on this module
            verdict = explain(verdict, grads_subject(logreg_grads, X, y, w, b), got)
            break
    return finish(QUESTION, "logreg_grads", verdict, seed=seed, points=points,
                  passed_message="logreg_grads matched autograd at random points.")


def judged_twice(logreg_grads: Callable, got: Any, ref_w: torch.Tensor, ref_b: torch.Tensor,
                 at: tuple[torch.Tensor, ...]) -> Verdict:
    """``judge_grads`` at ``at = (X, y, w, b)``; a wrong sigmoid it names is kept only when
    ``logreg_grads`` fits the same formula at a second point (``logreg_sigmoid.confirmed``)."""
    m = at[0].shape[0]
    return confirmed(judge_grads(got, ref_w, ref_b, m, at), got, at, logreg_grads,
                     lambda: judge_grads(got, ref_w, ref_b, m, at, sigmoids=False))


def judge_grads(got: Any, ref_w: torch.Tensor, ref_b: torch.Tensor, m: int,
                at: tuple[torch.Tensor, ...] | None = None, sigmoids: bool = True) -> Verdict:
    """Judge ``logreg_grads``'s ``(grad_w, grad_b)``; b's gradient may be ``(1,)`` or 0-d.
    Given the point ``at = (X, y, w, b)``, a wrong one is also compared with the gradients
    with b in the wrong place (``misplaced_bias``) and, with ``sigmoids``, with those of a
    wrong formula for the sigmoid (``logreg_sigmoid``)."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return Verdict(False, f"logreg_grads returned {describe(got)}; expected a tuple "
                       "(grad_w, grad_b).", "wrong-type", Evidence(got=plain(got)))
    inputs = {"m": m, "n": int(ref_w.numel())}
    grad_w, grad_b = got
    return first_failure([
        lambda: with_diagnosis(
            judge_tensor(grad_w, ref_w, "the gradient of w", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs),
            lambda: diagnose_grads(grad_w, ref_w, m, at, sigmoids)),
        lambda: with_diagnosis(
            judge_tensor(grad_b, ref_b, "the gradient of b", dtype=torch.float32, rtol=RTOL,
                         atol=ATOL, inputs=inputs, shapes=((1,), ())),
            lambda: diagnose_bias_grad(grad_b, ref_b, m, at, sigmoids)),
    ])
