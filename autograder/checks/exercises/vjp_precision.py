"""q4_vjp: a pullback computed in a lower precision than x's and cast back (a float32,
bfloat16 or float16 leaf, ``weights`` cast to it, ``leaf.grad.to(x.dtype)`` returned): shape
and dtype are kept and float32 inputs can be exact, but a float64 x gets its gradient rounded
(as a float32 x does through bfloat16 or float16).
Named ``low-precision`` (as q1/q3 name theirs, ``accumulation_precision``) only when a replay
through that dtype gives every returned value exactly, on the failing input and on a second
input of x's dtype the check makes (``confirmed``). Also when only the weights were cast
(``v.backward(weights.float())``, blind round zf): the leaf in x's dtype, the weights rounded."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import torch

from ..calling import call
from ..probes import recorded_call
from ..result import Verdict
from .accumulation_precision import LOW_PRECISION

#: The dtypes tried, lowest loss first, with their significant bits.
DTYPES = {torch.float32: 24, torch.bfloat16: 8, torch.float16: 11}
#: Those below each dtype of x the check draws.
LOWER = {torch.float64: list(DTYPES), torch.float32: [torch.bfloat16, torch.float16]}
#: A second input whose rounding every dtype below x's shows (the confirming call).
CONFIRM_X = (1.0000001234567, math.pi, -0.3183098861837907)
CONFIRM_W = (0.1, -2.7, 1.2345678901234)


#: What was cast: the leaf and the weights, or the weights alone.
ROUTES = ("leaf", "weights")


def replay(x: torch.Tensor, weights: torch.Tensor, dtype: torch.dtype,
           route: str = "leaf") -> torch.Tensor:
    """The contract's pullback with the leaf (``route="leaf"``: and the weights) or the
    weights alone rounded to ``dtype``, cast back."""
    leaf = x.detach().to(dtype if route == "leaf" else x.dtype).requires_grad_()
    (leaf ** 2).backward(weights.detach().to(dtype).to(leaf.dtype))
    return leaf.grad.to(x.dtype)


def fitted(got: Any, x: torch.Tensor, weights: torch.Tensor) -> tuple[torch.dtype, str] | None:
    """The dtype below x's and the route whose replay equals ``got`` exactly (else None). A
    replay that rounds nothing (equal to the answer in x's dtype) is never a fit."""
    if (x.dtype not in LOWER or not isinstance(got, torch.Tensor) or got.dtype != x.dtype
            or got.shape != x.shape):
        return None
    exact = replay(x, weights, x.dtype)
    for dtype in LOWER[x.dtype]:
        for route in ROUTES:
            low = replay(x, weights, dtype, route)
            if not torch.equal(low, exact) and torch.equal(got.detach().cpu(), low):
                return dtype, route
    return None


def message(dtype: torch.dtype, given: torch.dtype, route: str = "leaf") -> str:
    name, given = (str(d).replace("torch.", "") for d in (dtype, given))
    how = (f"computes in {name} and casts the gradient back (a leaf made with "
           f"x.detach().to(torch.{name}) or .float(), the weights cast to it, "
           "leaf.grad.to(x.dtype) returned)" if route == "leaf" else
           f"casts the weights to {name} (v.backward(weights.to(torch.{name})) or "
           f"weights.float()) and keeps x's dtype")
    return (f"Every entry is what vjp_square returns when it {how}: wrong for {given} inputs. "
            f"{name} keeps {DTYPES[dtype]} significant bits (about "
            f"{round(DTYPES[dtype] * math.log10(2))} decimal digits), so the {given} gradient "
            f"is rounded to that before the cast, which cannot bring the digits back. Keep x's "
            "dtype throughout: leaf = x.detach().clone().requires_grad_(), "
            "v.backward(weights).")


def confirmed(verdict: Verdict, vjp_square: Callable, got: Any, x: torch.Tensor,
              weights: torch.Tensor) -> Verdict:
    """An unnamed wrong ``verdict`` named ``low-precision`` when ``got`` is the replay through
    a lower dtype and so is the answer on a second input of x's dtype; else ``verdict``."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    fit = fitted(got, x, weights)
    if fit is None:
        return verdict
    dtype, route = fit
    shape = x.shape if x.numel() == len(CONFIRM_X) else (len(CONFIRM_X),)
    x2 = torch.tensor(CONFIRM_X, dtype=x.dtype).reshape(shape)
    w2 = torch.tensor(CONFIRM_W, dtype=x.dtype).reshape(shape)
    again, failure = call(vjp_square, "vjp_square", x2.clone(), w2.clone())
    if failure is not None or fitted(again, x2, w2) != fit:
        return verdict
    expected = replay(x2, w2, x.dtype)
    probe = {"id": LOW_PRECISION, "established": f"the {dtype} replay on another input",
             "calls": [recorded_call(f"another {x.dtype} input", (x2, w2), expected.tolist(),
                                     again.detach().tolist())]}
    return dataclasses.replace(
        verdict, misconception=LOW_PRECISION,
        message=f"{verdict.message.rstrip()} {message(dtype, x.dtype, route)}",
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]))
