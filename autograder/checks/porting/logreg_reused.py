"""q1_logreg: an answer a later call overwrites (blind round zb).

A ``train_logreg`` that records into one list kept between calls (a module-level
``TRAINING_HISTORY`` cleared with ``.clear()`` or ``del h[:]`` at the start of each call, a
list attribute on the function) returns the same list object every time, so a later call
empties and refills a list returned earlier; ``w`` and ``b`` kept globally and zeroed in place
(``w.zero_()``) are the same class. Each answer is right when read at once. The first problem
of each ``train_logreg`` check is therefore followed, before its answer is read, by a call on
another problem of the same width (``call_again``, the same here and in a worker); an answer
that is then the other problem's run is ``result-reused``. A fresh list per call, or a global
cache that returns a copy, passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..closeness import close_lists, float_list
from ..describing import fmt
from ..result import Verdict
from .common import allclose
from .logreg_runs import reference_run

NAME = "result-reused"
#: The other problem's learning rate and step count: few steps, cheap for every answer.
AGAIN_LR, AGAIN_STEPS = 0.5, 3


def draw_again(seed: Any, n: int) -> tuple[torch.Tensor, torch.Tensor, float, int]:
    """Another problem of width ``n`` (its own generator: the checks' draws stay the seed's)."""
    rng = np.random.default_rng(None if seed is None else [seed, 20])
    m = int(rng.integers(10, 31))
    X = torch.tensor(rng.standard_normal((m, n)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, m), dtype=torch.float32)
    return X, y, AGAIN_LR, AGAIN_STEPS


def reused(verdict: Verdict, got: Any, part: str, shown: str,
           again: tuple[torch.Tensor, torch.Tensor, float, int]) -> Verdict:
    """``verdict`` (a failure), named ``result-reused`` when the judged part of ``got`` (the
    losses, or ``w`` and ``b``) is the grader's run on the ``again`` problem."""
    if verdict.ok or not isinstance(got, (tuple, list)) or len(got) != 3:
        return verdict
    w_ref, b_ref, losses_ref = reference_run(*again)
    X2, _, lr2, steps2 = again
    other = f"train_logreg(X of shape {tuple(X2.shape)}, y, lr={fmt(lr2)}, steps={steps2})"
    if part == "losses":
        losses = got[2]
        if not (float_list(losses) and len(losses) == len(losses_ref)
                and close_lists(losses, losses_ref, 1e-4, 1e-5)):
            return verdict
        what, advice = "losses", ("Make a new list in each call (losses = [] inside "
                                  "train_logreg) and return it; a history for plotting can be "
                                  "a copy, list(losses).")
    else:
        w, b = got[0], got[1]
        if not all(isinstance(t, torch.Tensor) and t.numel() == r.numel() and allclose(
                t.detach().cpu().double().reshape(r.shape), r, 1e-4, 1e-5)
                for t, r in ((w, w_ref), (b, b_ref))):
            return verdict
        what, advice = "w and b", ("Make new leaves in each call (w = torch.zeros(n, "
                                   "requires_grad=True) inside train_logreg) and return "
                                   "them, not tensors kept between calls and reset in place.")
    return Verdict(False, f"{shown} returned {what} that changed when train_logreg was called "
                   f"again, {other}: they now hold that later run's {what}, so the object "
                   "returned is kept between calls and cleared and refilled by each one. "
                   f"{advice}", NAME, verdict.evidence)
