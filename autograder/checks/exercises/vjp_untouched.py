"""q4_vjp: does ``vjp_square`` leave the caller's ``x`` and ``weights`` as they were?

Each input is given twice on the same tensors (a second call exposes state left on them); a
change to ``x`` or to the weights fails, told with what fits the change (the answer written
into the weights through a second name, another write in place, the weights made a leaf).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..describing import describe, plain
from ..probes import changes, explain
from ..probes import snapshot as probe_snapshot
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import arrays_close
from .vjp import LEAF_HINT, QUESTION, TOLERANCES, draw_cases, expected_vjp, replica, subject
from .vjp_flattened import named as reshaped_named
from .vjp_leaf import named as leaf_named
from .vjp_transposed import confirmed as transposed_confirmed


def judge_untouched(before: dict[str, Any], x: torch.Tensor, weights: torch.Tensor,
                    got: Any) -> Verdict:
    """Did ``vjp_square`` leave the caller's tensors as they were, and return a tensor?

    The answer's shape and values are ``vjp.check_vjp``'s to judge: a tensor with one entry
    per entry of x, in x's shape or another (size-1 dimensions dropped, transposed, x's sizes
    reversed), is judged here on what the call did to x and the weights only, so that one
    shape mistake is not charged twice. What is no answer at all (not a tensor, or a tensor
    with another number of entries) still fails.

    Args:
        before: ``snapshot(x, weights)`` taken before the call.
        x: the caller's tensor after the call.
        weights: the caller's weights after the call.
        got: what the call returned.
    """
    evidence = Evidence(expected=plain(before["x"]), got=plain(x))
    if not isinstance(got, torch.Tensor):
        return Verdict(False, f"vjp_square returned {describe(got)}; expected a tensor of x's "
                       f"shape {tuple(x.shape)}.", "wrong-type", evidence)
    if got.numel() != x.numel():
        return Verdict(False, f"vjp_square returned {describe(got)}: {got.numel()} entries, not "
                       f"one per entry of x ({x.numel()}); expected a tensor of x's shape "
                       f"{tuple(x.shape)}, the leaf's .grad.", "wrong-shape", evidence)
    x_changed = changes(before["x_state"], x, "x")
    w_changed = changes(before["w_state"], weights, "weights")
    if x_changed:
        also = (f" It also changed the caller's weights: {'; '.join(w_changed)}. "
                f"{weights_hint(before, weights, got)}" if w_changed else "")
        itself = SAME_TENSOR if "x.requires_grad became True" in x_changed else ""
        return Verdict(False, f"vjp_square changed the caller's tensor x: {'; '.join(x_changed)}. "
                       f"{itself}{LEAF_HINT}{also}", "modified-input", evidence)
    if w_changed:
        return Verdict(False, f"vjp_square changed the caller's weights: {'; '.join(w_changed)}. "
                       f"{weights_hint(before, weights, got)}", "modified-weights",
                       Evidence(expected=plain(before["weights"]), got=plain(weights)))
    return Verdict(True, evidence=evidence)


#: Why the caller's x itself came to require grad (blind round zzp: ``torch.as_tensor(x,
#: dtype=x.dtype).requires_grad_()`` taken for a fresh leaf).
SAME_TENSOR = ("Its leaf was x itself: x.requires_grad_(), torch.as_tensor(x) and x.to(x.dtype) "
               "return the caller's own tensor, not a copy. ")

#: What a call that wrote into the caller's weights is told to do instead.
OUT_OF_PLACE = ("compute the product out of place, weights * leaf.grad (a new tensor), or "
                "clone first: vjp = weights.clone().")


def weights_hint(before: dict[str, Any], weights: torch.Tensor, got: Any) -> str:
    """What fits the change made to the caller's ``weights``: the answer written into them
    through a second name (``vjp = weights; vjp *= leaf.grad``), another in-place write, or the
    weights marked as a leaf (``requires_grad``, ``.grad``, hooks)."""
    w0 = before["weights"]
    if weights.shape == w0.shape and not torch.equal(weights.detach(), w0):
        answer = expected_vjp(before["x"], w0)
        rtol, atol = TOLERANCES.get(weights.dtype, TOLERANCES[torch.float32])
        if arrays_close(weights.detach().double().numpy(), answer, rtol, atol):
            return ("They now hold the answer, 2 * x * weights: it was computed in place in "
                    "the caller's weights. A name bound to weights (vjp = weights, or a view of "
                    "it) is the same tensor, not a copy, so *= or mul_ on it writes into the "
                    f"caller's weights. The weights are only read: {OUT_OF_PLACE}")
        return ("An operation in place (*=, mul_, add_, an assignment into a slice) wrote into "
                "the caller's weights, directly or through a name or view bound to them (w = "
                f"weights is not a copy). The weights are only read: {OUT_OF_PLACE}")
    return ("The weights are a constant vector handed to backward, not a leaf: leave their "
            "requires_grad, .grad and hooks as they were (pass them as they are to "
            "v.backward(weights), or use weights.detach() where a tensor of your own is needed).")


def snapshot(x: torch.Tensor, weights: torch.Tensor) -> dict[str, Any]:
    """What ``judge_untouched`` compares against: copies, and x's autograd flag."""
    return {"x": x.detach().clone(), "requires_grad": x.requires_grad,
            "weights": weights.detach().clone(), "x_state": probe_snapshot(x),
            "w_state": probe_snapshot(weights)}


#: What an answer that is the same for every x is told (red-team round rt-3: zeros_like(x)
#: earned this check's points for a function that computes nothing).
IGNORES_X = ("an answer that does not depend on x is no gradient at x, and a function that "
             "never computes one leaves x alone without trying: this check's points are for "
             "a pullback that reads x and does not change it. Compute the gradient of "
             "sum(weights * x ** 2) on a copy of x: 2 * x * weights.")


def depends_on_x(vjp_square: Callable, rng: np.random.Generator) -> Verdict:
    """``PASS`` unless ``vjp_square`` returns the very same tensor for two x's (one weights),
    whose gradients differ in every entry: then a failing verdict, ``answer-ignores-input``."""
    x = torch.from_numpy(rng.uniform(0.5, 5.0, size=int(rng.integers(2, 6))))
    weights = torch.from_numpy(rng.uniform(0.5, 3.0, size=x.shape))
    other = x + torch.from_numpy(rng.uniform(1.0, 2.0, size=x.shape))
    first, failure = call(vjp_square, "vjp_square", x.clone(), weights.clone())
    # as it was returned: a tensor the function reuses is the same object after the next call
    first = first.detach().clone() if isinstance(first, torch.Tensor) else first
    again, failure_again = call(vjp_square, "vjp_square", other.clone(), weights.clone())
    if failure or failure_again or not (isinstance(first, torch.Tensor)
                                        and isinstance(again, torch.Tensor)):
        return PASS  # a raise or a non-tensor here is the values check's to score
    if first.shape != again.shape or not torch.equal(first.detach().cpu(), again.detach().cpu()):
        return PASS
    return Verdict(False, f"vjp_square returned {describe(first)} for x = {describe(x)} and the "
                   f"same for x = {describe(other)} (the same weights): {IGNORES_X}",
                   "answer-ignores-input", Evidence({"x": plain(x), "other_x": plain(other),
                                                     "weights": plain(weights)},
                                                    plain(expected_vjp(x, weights)),
                                                    plain(first)))


def check_untouched(vjp_square: Callable, rng: np.random.Generator, *,
                    points: float = 1.0) -> CheckResult:
    """Call ``vjp_square`` twice per input and check the caller's tensors are left alone."""
    seed = seed_of(rng)
    verdict = PASS
    for x, weights in draw_cases(rng):
        before = snapshot(x, weights)
        for _ in range(2):  # a second call on the same x exposes state left on it
            got, failure = call(vjp_square, "vjp_square", x, weights)
            verdict = failure or judge_untouched(before, x, weights, got)
            verdict = leaf_named(verdict, got, x, before["x_state"]["grad"],
                                 expected_vjp(before["x"], before["weights"]), TOLERANCES)
            if not verdict.ok:
                if failure is not None:  # raised: does it raise only in this input class?
                    verdict = transposed_confirmed(verdict, vjp_square, x, TOLERANCES)
                    # weights.flatten() on a 2-D x
                    verdict = reshaped_named(verdict, tuple(x.shape))
                    verdict = explain(verdict, subject(vjp_square, replica(x), weights), None)
                break
        if not verdict.ok:
            break
    if verdict.ok:  # drawn last: the cases above stay those of earlier runs with the seed
        verdict = depends_on_x(vjp_square, rng)
    return finish(QUESTION, "vjp_square_leaves_inputs", verdict, seed=seed, points=points,
                  passed_message="vjp_square left the caller's x and weights untouched.")
