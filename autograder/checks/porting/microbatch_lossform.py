"""q2_microbatch: a hand-written logistic loss that is wrong for some logits or labels
(``wrong-logistic-loss``, blind round zzh).

Blind round zzh's ``(z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z))).mean()``, the
stable form without its abs, is right wherever every logit is >= 0 (the public test's w = 0)
and wrong for each row with a negative logit; the other forms of ``logistic_forms`` (labels
ignored, the sigmoid applied twice or left out) are wrong elsewhere too. With the weights
``b_j / B`` right, the accumulated gradient is the form's full-batch mean gradient, which the
grader replays (float64) on the same input. An unnamed wrong answer is named when it fits one
form's replay (the stale grad kept or not) and the student's answer at a second ``w``
(``-w / 2``: each logit's sign flipped) fits the same form and no other. Only a failing
unnamed answer gets here; only a fit costs a call.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..result import Verdict, with_probe
from .common import call_named
from .logistic_forms import ADVICE, NAME, fitted, told
from .microbatch_mistakes import ALSO_STALE, MATCH_ATOL, MATCH_RTOL
from .microbatch_weights import second_w


def loss_form(verdict: Verdict, accumulated_grad: Callable, got: Any, w: torch.Tensor,
              X: torch.Tensor, y: torch.Tensor, sizes: list[int],
              stale: torch.Tensor | None) -> Verdict:
    """``verdict``, named ``wrong-logistic-loss`` when it fails unnamed, ``got`` (at ``w``'s
    values before the call, on the grader's copies ``X``, ``y``) fits a form of
    ``logistic_forms`` and the answer at ``second_w(w)`` fits exactly that one form."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    found = fitted(got, w, X, y, stale, MATCH_RTOL, MATCH_ATOL)
    if not found:
        return verdict
    w2 = second_w(w)
    again, _ = call_named(accumulated_grad, "accumulated_grad", (), w2, X.clone(), y.clone(),
                          list(sizes))
    second = {key for key, _ in fitted(again, w2, X, y, None, MATCH_RTOL, MATCH_ATOL)}
    keys = {key for key, _ in found} & second
    if len(keys) != 1 or len(second) != 1:
        return verdict
    key = keys.pop()
    kept = all(k for f, k in found if f == key)
    return with_probe(verdict, {
        "id": NAME, "established": f"the gradient of the loss form {key}, replayed on the same "
                                   "input, again at w = -w / 2",
        "calls": [{"w": "-w / 2", "sizes": list(sizes)}]}, misconception=NAME, message=(
        f"{verdict.message.rstrip()} {told(key, w, X, y)} The answer at a second w (-w / 2, "
        f"each logit's sign flipped) matches the same loss. {ADVICE}"
        f"{ALSO_STALE if kept else ''}"))
