"""q1_logreg's ``logreg_grads`` that hands back the ``.grad`` its arguments carried into the
call (``stale-grad-returned``).

At the point ``train_logreg`` returns, ``w`` and ``b`` are leaves that carry a ``.grad`` from
the last backward: the gradient of the last step's loss, taken before the last update, so at
the previous point. A student who reads ``w.grad`` / ``b.grad`` there instead of computing the
closed form (as is, cloned or detached; for either or both) returns a gradient of another
point. The grader made those ``.grad`` itself, so it names the mistake when a wrong part of the
answer is exactly one of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ..describing import describe
from ..result import Verdict
from .common import allclose
from .logreg_diagnosis import ATOL, MATCH_ATOL, MATCH_RTOL, RTOL

CLASS = "stale-grad-returned"

ADVICE = (".grad holds whatever the last backward left there: at the point a training loop "
          "returns, the gradient of the last step's loss, taken before the last update, so at "
          "another w and b (and after any other backward, that one's). It is not the gradient "
          "at the w and b you are given. Compute the closed form from X, y, w and b on every "
          "call: X.T @ (sigmoid(X @ w + b) - y) / m and the mean residual, whatever .grad "
          "holds.")


def carried_grads(*leaves: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
    """A copy of each argument's ``.grad`` as it is before the call (None where it has none),
    so that what the call does to them cannot change what it is compared with."""
    return tuple(None if t.grad is None else t.grad.detach().clone() for t in leaves)


def stale_parts(got: Any, carried: tuple[torch.Tensor | None, ...],
                right: tuple[torch.Tensor, torch.Tensor]) -> list[str]:
    """The names (``"w"``, ``"b"``) of the parts of ``got = (grad_w, grad_b)`` that are wrong
    and equal the ``.grad`` their argument carried into the call."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return []
    found = []
    for name, part, grad, ref in zip("wb", got, carried, right):
        if grad is None or not isinstance(part, torch.Tensor) or part.numel() != grad.numel():
            continue
        values, grad, ref = (t.detach().double().reshape(-1) for t in (part, grad, ref))
        if allclose(values, grad, MATCH_RTOL, MATCH_ATOL) and not allclose(values, ref, RTOL,
                                                                            ATOL):
            found.append(name)
    return found


def name_stale_grad(verdict: Verdict, got: Any, carried: tuple[torch.Tensor | None, ...],
                    right: tuple[torch.Tensor, torch.Tensor]) -> Verdict:
    """A failing ``verdict`` renamed ``stale-grad-returned`` when a wrong part of ``got`` is
    the ``.grad`` its argument carried (``stale_parts``); any other verdict as it is."""
    if verdict.ok:
        return verdict
    parts = stale_parts(got, carried, right)
    if not parts:
        return verdict
    which = " and ".join(f"{p}.grad" for p in parts)
    shown = "; ".join(f"the gradient of {p} is {describe(got['wb'.index(p)])}, exactly the "
                      f"{p}.grad it carried, where the gradient at this point is "
                      f"{describe(right['wb'.index(p)].float())}" for p in parts)
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": CLASS, "established": f"the answer is the {which} the arguments carried into "
        "the call", "calls": [{"part": p, "carried": carried["wb".index(p)].tolist()}
                              for p in parts]}])
    return Verdict(False, f"logreg_grads(X, y, w, b), called with leaves w and b that carry a "
                   f".grad from the last backward (as train_logreg returns them), returned "
                   f"{which} instead of the gradient at w and b: {shown}. {ADVICE}", CLASS,
                   evidence, verdict.traceback)
