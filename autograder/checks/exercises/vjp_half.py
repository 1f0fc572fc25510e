"""q4_vjp: a pullback that is exactly half the right one, ``x * weights``: one of the two
product-rule terms of ``leaf * leaf`` (a factor detached, ``leaf * leaf.detach()``), named
``one-product-term`` from one answer (``HINT``) and kept only when another drawn input, of the
other dtype or shape, is halved as well (``confirmed``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .common import arrays_close, short

ONE_TERM = "one-product-term"
HINT = ("Every entry is x * weights, exactly half of 2 * x * weights: one of the two terms of the "
        "product rule is missing. For v = leaf * leaf autograd adds what flows through each "
        "factor, weights * leaf through the first plus weights * leaf through the second; a "
        "factor that is detached (leaf.detach(), leaf.data, a detached clone, or the caller's "
        "x) is a constant for autograd, so only one of the two terms reaches leaf.grad. Build "
        "v = leaf ** 2, or leaf * leaf with both factors the leaf itself. (A v halved by its "
        "formula, 0.5 * leaf ** 2, gives the same numbers: check the formula too.)")


def halved(got: Any, x: torch.Tensor, weights: torch.Tensor, tolerances: dict) -> bool:
    """``got`` is a tensor of x's shape holding ``x * weights`` within its dtype's tolerance."""
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        return False
    half = x.detach().double().numpy() * weights.detach().double().numpy()
    rtol, atol = tolerances.get(got.dtype, tolerances[torch.float32])
    return arrays_close(got.detach().cpu().double().numpy(), half, rtol, atol)


def confirmed(verdict: Verdict, vjp_square: Callable, other: tuple[torch.Tensor, torch.Tensor],
              copies: tuple[torch.Tensor, torch.Tensor], tolerances: dict,
              rejudge: Callable[[], Verdict], shown: str) -> Verdict:
    """``verdict`` (named ``one-product-term``) kept when ``vjp_square`` on ``copies`` of
    ``other``, another drawn input, returns half the right pullback too, with that call in its
    evidence; else ``rejudge()``, the answer judged without that name."""
    x, weights = other
    got, failure = call(vjp_square, "vjp_square", *copies)
    if failure is not None or not halved(got, x, weights, tolerances):
        return rejudge()
    expected = 2.0 * x.detach().double().numpy() * weights.double().numpy()
    values = np.asarray(got.detach().cpu().double().numpy())
    probe = {"id": ONE_TERM, "established": "half on another input", "calls": [
        recorded_call("another input", (x, weights), expected.tolist(), values.tolist())]}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} So is {shown}: it returned {short(values)}, half of "
                f"{short(expected)}.")
