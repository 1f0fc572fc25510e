"""q1_logreg: ``logreg_grads`` at the point ``train_logreg`` returns.

There ``w`` and ``b`` are leaves that require grad and carry a ``.grad`` from the last
backward: the closed form must still give its values, and leave the caller's tensors (and
their ``.grad``) as they were.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..probes import InputClass, Subject, changes, explain, numbers_of, snapshot
from ..result import PASS, CheckResult, Verdict, finish
from ..seeding import seed_of
from .common import call_named
from .logreg import QUESTION, draw_problem, reference_run
from .logreg_grads import judge_grads, judged_twice, reference_grads
from .logreg_marked import left_marked
from .logreg_stale import carried_grads, name_stale_grad


def trained_point(rng: np.random.Generator) -> tuple[torch.Tensor, ...]:
    """A problem and the point a training loop leaves: leaves ``w`` and ``b`` that require grad
    and carry a ``.grad`` from the last backward, as ``train_logreg`` returns them."""
    X, y, lr, steps = draw_problem(rng)
    w_ref, b_ref, _ = reference_run(X, y, lr, steps - 1)
    w = w_ref.float().clone().requires_grad_()
    b = b_ref.float().clone().requires_grad_()
    torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y).backward()
    with torch.no_grad():  # the last update: .grad is the gradient at the point before
        w -= lr * w.grad
        b -= lr * b.grad
    return X, y, w, b


def check_logreg_grads_trained(logreg_grads: Callable, rng: np.random.Generator, *,
                               points: float = 1.0) -> CheckResult:
    """``logreg_grads`` at the point ``train_logreg`` returns (leaves that require grad, with a
    ``.grad``): the closed form's values, and the caller's tensors left as they were."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(2):
        X, y, w, b = trained_point(rng)
        args = (X, y, w, b)
        before = [snapshot(a) for a in args]
        ref_w, ref_b = reference_grads(X, y, w, b)
        carried = carried_grads(w, b)
        got, verdict = call_named(logreg_grads, "logreg_grads", (), *args)
        verdict = verdict or judged_twice(logreg_grads, got, ref_w, ref_b, args)
        verdict = name_stale_grad(verdict, got, carried, (ref_w, ref_b))
        verdict = left_marked(verdict, "logreg_grads(X, y, w, b)", {"X": X, "y": y})
        left = [c for n, s, a in zip(("X", "y", "w", "b"), before, args) for c in changes(s, a, n)]
        if verdict.ok and left:
            verdict = Verdict(False, f"logreg_grads(X, y, w, b) changed what it was given: "
                              f"{'; '.join(left)}. The closed form needs no autograd: compute "
                              "with the tensors' values and leave them (and w.grad) as they are.",
                              "modified-input")
        if not verdict.ok:
            verdict = explain(verdict, grads_subject(logreg_grads, *args), got)
            break
    return finish(QUESTION, "logreg_grads_trained", verdict, seed=seed, points=points,
                  passed_message="logreg_grads matched at the point train_logreg returns.")


def grads_subject(logreg_grads: Callable, X: torch.Tensor, y: torch.Tensor, w: torch.Tensor,
                  b: torch.Tensor) -> Subject:
    """What the probes need to explain a wrong ``logreg_grads`` (its input classes: leaves
    that require grad, against the same values detached)."""
    def classes(args: tuple) -> list[InputClass]:
        X_, y_, w_, b_ = args
        if not (w_.requires_grad or b_.requires_grad):
            return []
        return [InputClass("requires-grad", (X_, y_, w_.detach(), b_.detach()),
                           "Does something fail or change for tensors that require grad "
                           "(.numpy(), in-place ops, backward)? Use .detach() where needed.")]

    def same(got: Any, expected: Any) -> bool:
        return judge_grads(got, *expected, X.shape[0]).ok

    return Subject("logreg_grads", logreg_grads, (X, y, w, b), ("X", "y", "w", "b"),
                   lambda X_, y_, w_, b_: reference_grads(X_, y_, w_, b_), same, numbers_of,
                   variations={1: lambda v: [1 - v]}, classes=classes)
