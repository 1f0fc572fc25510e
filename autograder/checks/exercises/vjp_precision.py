"""q4_vjp: a pullback computed in a lower precision than x's and cast back (a float32,
bfloat16 or float16 leaf, ``weights`` cast to it, ``leaf.grad.to(x.dtype)`` returned): shape
and dtype are kept and float32 inputs can be exact, but a float64 x gets its gradient rounded
(as a float32 x does through bfloat16 or float16).
Named ``low-precision`` (as q1/q3 name theirs, ``accumulation_precision``) only when a replay
through that dtype gives every returned value exactly, on the failing input and on a second
input of x's dtype the check makes (``confirmed``). Also when only the weights were cast
(``v.backward(weights.float())``, blind round zf): the leaf in x's dtype, the weights rounded;
and when another part went through the lower dtype and back: x alone (``x.half()`` in the
formula), the finished gradient (``leaf.grad.half().to(x.dtype)``), or a pair of the three
(``ROUNDED``). A second confirming input (``CONFIRM_2``) tells the routes apart where the
first rounds two of them alike."""

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
#: A second one that tells every dtype's routes apart (a test holds it): beside 1.5, a value
#: just under half a unit above 1 of bfloat16, float16 and float32 in x, then in the weights,
#: so that rounding x, the weights or the gradient each changes some entry differently.
NEAR = (2 ** -8 * 0.99, 2 ** -11 * 0.99, 2 ** -24 * 0.99)
CONFIRM_2 = ((1 + NEAR[0], 1.5, -(1 + NEAR[1]), -1.5, 1 + NEAR[2], 1.5, math.e, -0.5772156649015329),
             (1.5, -(1 + NEAR[0]), 1.5, 1 + NEAR[1], -1.5, 1 + NEAR[2], 1 / math.pi, math.sqrt(2)))


#: What was rounded to the lower dtype and back: the leaf and the weights (the pullback
#: computed in it), the weights alone, or the parts of ``ROUNDED``.
ROUNDED = {"gradient": ("gradient",), "x": ("x",), "x-gradient": ("x", "gradient"),
           "weights-gradient": ("weights", "gradient"), "x-weights": ("x", "weights")}
ROUTES = ("leaf", "weights", *ROUNDED)
#: What each part is called, and how a student spells its rounding (``{m}``: the method).
PARTS = {"x": ("x", "x.{m}"), "weights": ("the weights", "weights.{m}"),
         "gradient": ("the gradient", "leaf.grad.{m}")}
METHODS = {torch.float32: "float()", torch.bfloat16: "bfloat16()", torch.float16: "half()"}


def replay(x: torch.Tensor, weights: torch.Tensor, dtype: torch.dtype,
           route: str = "leaf") -> torch.Tensor:
    """The contract's pullback with the leaf (``route="leaf"``: and the weights), the
    weights alone, or the parts a ``ROUNDED`` route names rounded to ``dtype``, cast back."""
    if route in ROUNDED:
        def through(t: torch.Tensor, part: str) -> torch.Tensor:
            t = t.detach()
            return t.to(dtype).to(x.dtype) if part in ROUNDED[route] else t
        # 2 * x * w in x's dtype, one rounding, as autograd's pow backward gives it
        return through(2.0 * through(x, "x") * through(weights, "weights"), "gradient")
    leaf = x.detach().to(dtype if route == "leaf" else x.dtype).requires_grad_()
    (leaf ** 2).backward(weights.detach().to(dtype).to(leaf.dtype))
    return leaf.grad.to(x.dtype)


def fits(got: Any, x: torch.Tensor, weights: torch.Tensor) -> list[tuple[torch.dtype, str]]:
    """Each dtype below x's and route whose replay equals ``got`` exactly, in the order of
    ``LOWER`` and ``ROUTES``. A replay that rounds nothing (equal to the answer in x's dtype) is
    never a fit."""
    if (x.dtype not in LOWER or not isinstance(got, torch.Tensor) or got.dtype != x.dtype
            or got.shape != x.shape):
        return []
    exact = replay(x, weights, x.dtype)
    found = []
    for dtype in LOWER[x.dtype]:
        for route in ROUTES:
            low = replay(x, weights, dtype, route)
            if not torch.equal(low, exact) and torch.equal(got.detach().cpu(), low):
                found.append((dtype, route))
    return found


def message(dtype: torch.dtype, given: torch.dtype, route: str = "leaf") -> str:
    name, given = (str(d).replace("torch.", "") for d in (dtype, given))
    if route in ROUNDED:
        return rounded_message(dtype, given, route)
    how = (f"computes in {name} and casts the gradient back (a leaf made with "
           f"x.detach().to(torch.{name}) or .float(), the weights cast to it, "
           "leaf.grad.to(x.dtype) returned)" if route == "leaf" else
           f"casts the weights to {name} (v.backward(weights.to(torch.{name})) or "
           f"weights.float(), or a torch.autocast region that runs the weighting as a "
           f"matmul in {name}) and keeps x's dtype")
    return (f"Every entry is what vjp_square returns when it {how}: wrong for {given} inputs. "
            f"{name} keeps {DTYPES[dtype]} significant bits (about "
            f"{round(DTYPES[dtype] * math.log10(2))} decimal digits), so the {given} gradient "
            f"is rounded to that before the cast, which cannot bring the digits back. Keep x's "
            "dtype throughout: leaf = x.detach().clone().requires_grad_(), "
            "v.backward(weights).")


def rounded_message(dtype: torch.dtype, given: str, route: str) -> str:
    """What a ``ROUNDED`` route did, told with the parts it rounded and how they are spelled."""
    name = str(dtype).replace("torch.", "")
    parts = [PARTS[part] for part in ROUNDED[route]]
    what = " and ".join(words for words, _ in parts)
    spelled = ", ".join(f"{how.format(m=METHODS[dtype])}.to(x.dtype)" for _, how in parts)
    return (f"Every entry is what vjp_square returns when {what} "
            f"{'is' if len(parts) == 1 else 'are'} rounded to {name} on the way and cast back "
            f"(as {spelled} would do; a leaf or a v made in {name} does it too): wrong for "
            f"{given} inputs. {name} keeps {DTYPES[dtype]} significant bits (about "
            f"{round(DTYPES[dtype] * math.log10(2))} decimal digits): the digits beyond them "
            f"are lost, and casting back to {given} cannot bring them back. Keep x's dtype in "
            "every step: leaf = x.detach().clone().requires_grad_(), v = leaf ** 2, "
            "v.backward(weights), return leaf.grad.")


def confirmed(verdict: Verdict, vjp_square: Callable, got: Any, x: torch.Tensor,
              weights: torch.Tensor) -> Verdict:
    """An unnamed wrong ``verdict`` named ``low-precision`` when ``got`` is the replay through
    a lower dtype and so are the answers on two more inputs of x's dtype (one dtype and route
    fitting all three); else ``verdict``."""
    if verdict.ok or verdict.misconception is not None:
        return verdict
    fit = fits(got, x, weights)
    if not fit:
        return verdict
    shape = x.shape if x.numel() == len(CONFIRM_X) else (len(CONFIRM_X),)
    calls = []
    for (xs, ws), size in (((CONFIRM_X, CONFIRM_W), shape), (CONFIRM_2, (len(CONFIRM_2[0]),))):
        x2 = torch.tensor(xs, dtype=x.dtype).reshape(size)
        w2 = torch.tensor(ws, dtype=x.dtype).reshape(size)
        again, failure = call(vjp_square, "vjp_square", x2.clone(), w2.clone())
        if failure is not None:
            return verdict
        fit = [pair for pair in fits(again, x2, w2) if pair in fit]
        if not fit:
            return verdict
        calls.append(recorded_call(f"another {x.dtype} input", (x2, w2),
                                   replay(x2, w2, x.dtype).tolist(), again.detach().tolist()))
    dtype, route = fit[0]
    probe = {"id": LOW_PRECISION, "established": f"the {dtype} replay on two other inputs",
             "calls": calls}
    return dataclasses.replace(
        verdict, misconception=LOW_PRECISION,
        message=f"{verdict.message.rstrip()} {message(dtype, x.dtype, route)}",
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]))
