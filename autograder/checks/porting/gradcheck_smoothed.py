"""q3_gradcheck: sign(x) smoothed to keep it finite at 0 (``sign-smoothed``, blind round zx).

A backward that writes the derivative of |x| as ``x / (x.abs() + 1e-6)``, ``x / sqrt(x**2 +
eps)``, ``tanh(k*x)`` or a softsign-like ``k*x / (1 + |k*x|)`` ("a safe sign") is off at every
entry by a little, most where |x| is smallest: the derivative of |x| each entry implies is
sign(x) times a factor slightly below 1 that rises towards 1 as |x| grows. gradcheck's
rtol=1e-3 may pass it; the grader's float64 tolerance does not. Away from 0, where the
contract's inputs lie, sign(x) is exact; ``x / x.abs()`` and ``x / x.abs().clamp(min=eps)``
are exact there and pass.

Named when the failing gradient shows that pattern (each entry's implied derivative of |x| has
sign(x)'s sign, is no more than 1 in magnitude, short of it by an amount that never grows with
|x| and is clearly short at the smallest |x|), confirmed by one more call of the student's
backward at ``PROBE``, whose entries span three decades: the same pattern, short by more at
0.01 than at 10.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..describing import fmt

NAME = "sign-smoothed"

#: The confirming input: magnitudes from 0.01 to 10 (three decades) and both signs.
PROBE = (0.01, -0.03, 0.1, -0.3, 1.0, -3.0, 10.0)
#: Below this |S|/(1+A)² times the upstream, the derivative of |x| barely moves the gradient.
MIN_WEIGHT = 1e-6


def implied_abs_derivative(got: torch.Tensor, x: torch.Tensor, upstream: float
                           ) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The derivative of |x| each entry of ``got`` implies, the first term 3x²/(1+A) taken as
    right, and how far float64 rounding can move each; None when the weight of the derivative
    of |x| in the gradient is too small to read it (or ``got`` is not a tensor of x's size)."""
    if not isinstance(got, torch.Tensor) or got.numel() != x.numel():
        return None
    x = x.detach().double()
    got = got.detach().double().reshape(x.shape)
    S, A = (x ** 3).sum(), x.abs().sum()
    weight = upstream * S / (1 + A) ** 2  # how much d|x|/dx moves each entry
    if float(weight.abs()) < MIN_WEIGHT or not bool(torch.isfinite(got).all()):
        return None
    first = upstream * 3 * x ** 2 / (1 + A)
    used = (first - got) / weight
    noise = 1e-12 * (1 + (first.abs() + got.abs()) / weight.abs())
    return used, noise


def smoothing_shortfall(got: torch.Tensor, x: torch.Tensor, upstream: float
                        ) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(|x|, shortfall)`` sorted by |x|, where shortfall is 1 - |implied d|x|/dx|, when
    ``got`` fits a smoothed sign: the implied derivative has sign(x)'s sign at every entry
    away from 0, is at most 1 in magnitude, short of 1 by an amount that never grows with
    |x|, and clearly short at the smallest |x|. None otherwise."""
    implied = implied_abs_derivative(got, x, upstream)
    if implied is None:
        return None
    used, noise = (t.reshape(-1) for t in implied)
    x = x.detach().double().reshape(-1)
    away = x != 0  # at 0 any value in [-1, 1] is a subgradient: not evidence
    if int(away.sum()) < 2:
        return None
    x, used, noise = x[away], used[away], noise[away]
    order = torch.argsort(x.abs())
    size, used, noise = x.abs()[order], (used * torch.sign(x))[order], noise[order]
    short = 1 - used
    if bool((short >= 1 - noise).any()) or bool((short < -noise).any()):
        return None  # sign(x)'s sign lost, or more than 1 in magnitude: not a smoothing
    for i in range(len(short) - 1):
        if bool((short[i + 1:] > short[i] + noise[i] + noise[i + 1:]).any()):
            return None  # short by more at a larger |x|: not a smoothing
    if not float(short[0]) > 100 * float(noise[0]) or not float(short[0]) > float(short[-1]):
        return None  # not clearly short where |x| is smallest
    return size, short


def smoothed_sign(got: torch.Tensor, x: torch.Tensor, upstream: float,
                  again: Callable[[torch.Tensor], tuple[Any, Any]] | None
                  ) -> tuple[str, str] | None:
    """``(NAME, what the student is told)`` when the failing ``got`` (the student's gradient
    times ``upstream`` at ``x``) fits a smoothed sign and ``again`` (the student's gradient,
    times the same upstream, at another x, and the failure there or None) confirms it at
    ``PROBE``; else None."""
    if again is None or not isinstance(got, torch.Tensor) or got.dtype != torch.float64:
        return None
    seen = smoothing_shortfall(got, x, upstream)
    if seen is None:
        return None
    probe = torch.tensor(PROBE, dtype=torch.float64)
    try:
        other, failure = again(probe)
    except Exception:  # noqa: BLE001 - the student's code: no confirmation, no name
        return None
    confirmed = smoothing_shortfall(other, probe, upstream) if failure is None else None
    if confirmed is None:
        return None
    size, short = confirmed
    # three decades apart, a smoothing is short by clearly more at 0.01 than at 10
    if not float(short[0]) > 10 * max(float(short[-1]), 0.0) or float(short[0]) <= 1e-12:
        return None
    at, by = seen
    return NAME, (
        "Its error is largest where |x| is smallest: the derivative of |x| it implies "
        f"has sign(x)'s sign but falls short of 1 in size, by {short_text(by[0])} at "
        f"|x| = {fmt(float(at[0]), 3)} and {short_text(by[-1])} at |x| = "
        f"{fmt(float(at[-1]), 3)}; asked again at x = {list(PROBE)}, by {short_text(short[0])} "
        f"at |x| = 0.01 and {short_text(short[-1])} at |x| = 10. That is sign(x) smoothed to "
        "keep it finite at 0 (x / (|x| + eps), x / sqrt(x² + eps), tanh(k·x), softsign): away "
        "from 0 the derivative of |x| is exactly sign(x), and an epsilon added to avoid 0 "
        "changes every entry. The contract's inputs stay away from 0: use torch.sign(x) (0 at "
        "0, a subgradient there).")


def short_text(short: torch.Tensor) -> str:
    """A shortfall, as told (rounding's noise below 0 shown as 0)."""
    value = float(short)
    return "0" if value <= 0 else fmt(value, 2)
