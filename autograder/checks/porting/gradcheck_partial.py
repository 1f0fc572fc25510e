"""q3_gradcheck: a float64 backward with one part computed in float32 (``low-precision``, blind
round zzl).

One float32 tensor inside an otherwise float64 backward rounds one term to float32: the sign
built from masks, ``(x > 0).float() - (x < 0).float()``, or as ``torch.ones(x.shape)`` (float32
by default) with ``sign[x < 0] = -1``, makes ``S * sign / (1 + A) ** 2`` float32 (a 0-d float64
tensor times a float32 one is float32), and the float64 first term added to it brings the sum
back to float64. Its values are not float32 numbers (``gradcheck_precision`` names a gradient
wholly in float32), and its error, ~1e-8 of the gradient's largest term, is within rtol=1e-7 at
one x and not at the next, so the grader's float64 tolerance alone passed it on some seeds.

Every float64 formula for this gradient, however written, is within a few float64 rounding
steps of the grader's (2.2 steps, 5e-16 of the largest term, at worst over every correct answer
of the blind rounds and variants at 30 seeds), so the backward is judged to ``TIGHT`` of the
gradient's largest term as well (``beyond_float64``): a float32 term's error was 9e-11 of it or
more on each of 300 seeds, whichever term it was.
A term in float16 or bfloat16 (``torch.sign(x).half()``, ``dtype=torch.float16``: a half
vector times S is half) is the same mistake at half's rounding: named when the error is past
float32's rounding and within ``HALF_STEPS`` of float16's, and confirmed alike (``PROBE_X`` is
exact in both; the error's size does not tell the two apart, so the advice names both).
Named when confirmed by one more call: at ``PROBE_X`` with upstream ``PROBE_UPSTREAM`` every
term, sum and product of the gradient is a float32 number (a bfloat16 one even), so a term
computed in float32 is exact there (to ``PROBE_STEPS`` float64 steps); finite differences, a
sign smoothed by an epsilon, rounding to decimals are not (the probe's gradient needs 14
decimals), and stay unnamed, told what was established.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..calling import call
from ..describing import describe, fmt, plain, tolerance_text
from ..result import Evidence, Verdict

NAME = "low-precision"
#: How far a float64 backward may be from the grader's gradient, in its largest term.
TIGHT = 1e-12
#: Beyond this many rounding steps of float32 (of the largest term), a wrong formula.
STEPS = 32
#: The confirming input: |x| in [0.2, 3], both signs, 1 + A = 4, S = 17/4, every term of the
#: gradient k/2^m with few bits (the largest numerator 91, 7 bits: exact even in bfloat16).
PROBE_X = (1.5, -0.5, 1.0)
PROBE_UPSTREAM = -2.0 ** -8
#: How exact the backward must be there, in float64 rounding steps of the largest term: every
#: float64 and float32 step of the formula is exact at the probe, while a sign smoothed by an
#: epsilon small enough to pass there by ``TIGHT`` (x / sqrt(x² + 1e-12): 3e-13) is not.
PROBE_STEPS = 4
#: A half-precision term: beyond float32's ``STEPS``, within this many of float16's.
HALF_STEPS = 8

#: The student's backward at another x and upstream: ``(x.grad, None)`` or ``(None, failure)``.
At = Callable[[torch.Tensor, float], tuple[Any, "Verdict | None"]]
Gradient = Callable[[torch.Tensor], torch.Tensor]


def term_scale(x: torch.Tensor, upstream: float) -> float:
    """``|upstream|`` times the largest of the gradient's terms, 3x²/(1+A) and S/(1+A)²."""
    x = x.detach().double()
    A, S = x.abs().sum(), (x ** 3).sum()
    terms = torch.cat([(3 * x ** 2 / (1 + A)).reshape(-1), (S / (1 + A) ** 2).reshape(1)])
    return abs(upstream) * float(terms.abs().max())


def _error(got: Any, right: torch.Tensor) -> float | None:
    """The largest error of a float64 ``got`` of ``right``'s shape, else None."""
    if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
            and got.shape == right.shape):
        return None
    err = float((got.detach().cpu() - right).abs().max()) if got.numel() else 0.0
    return err if err == err else None  # NaN: not a rounding


def beyond_float64(verdict: Verdict, got: Any, x: torch.Tensor, upstream: float,
                   right: torch.Tensor, apply: Any) -> Verdict:
    """A passing ``verdict`` of the backward (within the grader's rtol) made a failing one,
    unnamed, when ``got`` is further from ``right`` (the float64 gradient times ``upstream``)
    than ``TIGHT`` of the largest term: no float64 computation of it is. Not when the
    forward, ``apply(x)`` (one more call), returns another dtype: autograd then hands backward
    the upstream gradient in that dtype, rounded, and the forward's check tells the dtype."""
    if not verdict.ok or upstream == 0:
        return verdict
    err, scale = _error(got, right), term_scale(x, upstream)
    if err is None or err <= TIGHT * scale:
        return verdict
    out, failure = call(apply, "MyOp.apply", x.detach().clone())
    if failure is not None or not (isinstance(out, torch.Tensor) and out.dtype == x.dtype):
        return verdict
    return Verdict(False, (
        f"x.grad after MyOp.apply(x).backward({fmt(upstream)}) at x = {describe(x)} is within "
        f"rtol=1e-07 of the float64 gradient but off by {err:.2g} ({err / scale:.1g} of its "
        f"largest term): float64 arithmetic, in any order or form of the formula, is within "
        f"{TIGHT:g} of it."), None,
        Evidence({"x": plain(x), "upstream": upstream}, plain(right), plain(got), err,
                 tolerance_text(0, TIGHT * scale)))


def rounding_sized(got: Any, x: torch.Tensor, upstream: float, gradient: Gradient,
                   dtype: torch.dtype = torch.float32) -> float | None:
    """``err / scale`` when ``got``'s error of ``upstream * gradient(x)`` is more than
    float64's rounding and no more than ``STEPS`` of float32's rounding steps of the largest
    term, else None. (A term in float16 or bfloat16 is off by up to a few percent, where a
    formula wrong on part of the input may be too: not told as a rounding; ``dtype``
    float16 asks for half's rounding instead: past float32's, within ``HALF_STEPS`` of it.)"""
    if upstream == 0 or x.dtype != torch.float64:
        return None
    err, scale = _error(got, upstream * gradient(x)), term_scale(x, upstream)
    low, high = TIGHT, STEPS * torch.finfo(torch.float32).eps
    if dtype == torch.float16:
        low, high = high, HALF_STEPS * torch.finfo(torch.float16).eps
    if err is None or not low * scale < err <= high * scale:
        return None
    return err / scale


def partly_lower(got: Any, x: torch.Tensor, upstream: float, gradient: Gradient,
                 at: At | None) -> tuple[str, str] | None:
    """``(NAME, advice)`` when ``got`` is off by float32's or float16's rounding's size only
    (``gradient``: the grader's float64 one) and the student's backward is exact at
    ``PROBE_X`` (``at``: one more call), where either loses nothing; else None."""
    dtype = torch.float32
    relative = rounding_sized(got, x, upstream, gradient)
    if relative is None:
        dtype = torch.float16
        relative = rounding_sized(got, x, upstream, gradient, dtype)
    if relative is None or at is None:
        return None
    probe = torch.tensor(PROBE_X, dtype=torch.float64)
    try:
        other, failure = at(probe, PROBE_UPSTREAM)
    except Exception:  # noqa: BLE001 - the student's code: no confirmation, no name
        return None
    err = _error(other, PROBE_UPSTREAM * gradient(probe)) if failure is None else None
    eps = torch.finfo(torch.float64).eps
    if err is None or err > PROBE_STEPS * eps * term_scale(probe, PROBE_UPSTREAM):
        return None
    if dtype == torch.float16:
        return NAME, half_advice(relative)
    return NAME, (
        f"It is the right gradient to within float32 rounding ({relative:.1g} of its largest "
        f"term) for a float64 x, and asked again at x = {list(PROBE_X)} with upstream "
        f"{PROBE_UPSTREAM:g}, where every term of the gradient is exact in float32, it is "
        "exact: part of backward is computed in float32 and mixed into the float64 result. "
        "One float32 tensor does it: a sign made by (x > 0).float() - (x < 0).float(), "
        "torch.sign(x).float() or torch.ones(x.shape) (float32 by default), a tensor from "
        "torch.tensor(...) or torch.zeros(n) without a dtype, .float() on one term or on "
        "grad_output; a 0-d float64 tensor such as S times a float32 vector is float32. "
        "gradcheck's default rtol=1e-3 passes it, but float64 work must stay in float64: "
        "make every tensor in x's dtype (torch.sign(x), torch.ones_like(x), "
        "x.new_tensor(...), dtype=x.dtype).")


def half_advice(relative: float) -> str:
    """What a float64 backward with one term in half precision, confirmed, is told (float16
    and bfloat16 alike: the error's size does not tell them apart)."""
    return (
        f"It is the right gradient to within half-precision rounding ({relative:.1g} of its "
        f"largest term, past float32's) for a float64 x, and asked again at x = "
        f"{list(PROBE_X)} with upstream {PROBE_UPSTREAM:g}, where every term of the gradient "
        "is exact in float16 and bfloat16, it is exact: part of backward is computed in half "
        "precision (float16 or bfloat16) and mixed into the float64 result. One half tensor "
        "does it: .half(), .bfloat16() or .to(torch.float16) on the sign, on one term or on "
        "grad_output, or a tensor made with dtype=torch.float16; a 0-d float64 tensor such as "
        "S times a half vector is half. gradcheck's default rtol=1e-3 passes it, but float64 "
        "work must stay in float64: make every tensor in x's dtype (torch.sign(x), "
        "torch.ones_like(x), x.new_tensor(...), dtype=x.dtype).")


def rounding_sized_advice(got: Any, x: torch.Tensor, upstream: float, gradient: Gradient
                          ) -> str | None:
    """What a gradient off by rounding's size, not confirmed as a lower dtype, is told: what
    was established, no cause; None when its error is not of that size."""
    relative = rounding_sized(got, x, upstream, gradient)
    if relative is None:
        return None
    return (f"Its error is {relative:.1g} of the gradient's largest term: within float32's "
            f"rounding of it, beyond float64's ({TIGHT:g}). Something in backward is computed "
            "less exactly than the derived formula in float64: a tensor "
            "or cast in a lower dtype (float32, the default of torch.tensor and torch.ones), "
            "or an approximation (finite differences, a sign smoothed by an epsilon, rounding). "
            "Return grad_output * (3x²/(1+A) - S·sign(x)/(1+A)²) computed in x's dtype.")
