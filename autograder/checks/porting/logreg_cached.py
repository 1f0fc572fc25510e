"""q1_logreg: an answer cached by the arguments' metadata (blind round zr).

A ``train_logreg`` that memoises its runs in a dict kept between calls, keyed by what the
arguments look like rather than by what they hold (``(X.shape, lr, steps)``, the dtype,
``id(X)``), trains the first problem of each key right and hands every later problem of the
same key the first one's ``w``, ``b`` and losses. The checks' problems differ in shape, so the
cache never answers there. Last in each ``train_logreg`` check (after every other draw, which
stay the seed's own), the grader therefore trains another problem of the same shape, dtype,
lr and step count as the one just judged, with other values (``draw_same_shape``, its own
generator); an answer to it that is the earlier problem's run is ``answer-cached``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..closeness import close_lists, float_list
from ..result import Verdict
from .common import allclose
from .logreg_runs import reference_run

NAME = "answer-cached"

ADVICE = ("The run depends on X and y's values, not only their shape: a cache keyed by "
          "shape/lr/steps (or dtype, or id()) returns another problem's answer. Train on the "
          "data each call is given; drop the cache, or key it by the data's values "
          "(X and y themselves) and return copies.")


def draw_same_shape(seed: Any, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Another data set of ``X``'s shape and dtype, labelled by a random ``w`` (its own
    generator: the checks' draws stay the seed's)."""
    rng = np.random.default_rng(None if seed is None else [seed, 21])
    m, n = X.shape
    X2 = torch.tensor(rng.standard_normal((m, n)), dtype=X.dtype)
    true_w = torch.tensor(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n), dtype=X.dtype)
    y2 = (X2 @ true_w > 0).to(X.dtype)
    return X2, y2


def _matches(got: Any, run: tuple, part: str) -> bool:
    """Whether the judged part of ``got`` (the losses, or ``w`` and ``b``) is ``run``'s."""
    w_ref, b_ref, losses_ref = run
    if part == "losses":
        losses = got[2]
        return (float_list(losses) and len(losses) == len(losses_ref)
                and close_lists(losses, losses_ref, 1e-4, 1e-5))
    return all(isinstance(t, torch.Tensor) and t.numel() == r.numel() and allclose(
        t.detach().cpu().double().reshape(r.shape), r, 1e-4, 1e-5)
        for t, r in ((got[0], w_ref), (got[1], b_ref)))


def cached(verdict: Verdict, got: Any, part: str, shown: str,
           earlier: tuple[torch.Tensor, torch.Tensor, float, int],
           now: tuple[torch.Tensor, torch.Tensor, float, int]) -> Verdict:
    """``verdict`` (on the ``now`` problem), named ``answer-cached`` when it failed and the
    judged part of ``got`` is the grader's run on the ``earlier`` problem (same shape, lr
    and steps, other values), which is not the ``now`` problem's answer."""
    if verdict.ok or verdict.misconception == "worker-lost" \
            or not isinstance(got, (tuple, list)) or len(got) != 3:
        return verdict
    before = reference_run(*earlier)
    if not _matches(got, before, part) or _matches(before, reference_run(*now), part):
        return verdict
    what = "losses" if part == "losses" else "w and b"
    return Verdict(False, f"{shown} returned the {what} of the call just before it, on another "
                   "problem of the same shape, dtype, lr and steps with other values: the answer "
                   f"was cached by the arguments' metadata. {ADVICE}", NAME, verdict.evidence,
                   verdict.traceback)
