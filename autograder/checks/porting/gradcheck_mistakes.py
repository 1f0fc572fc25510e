"""q3_gradcheck: the diagnosis of a wrong backward.

The hand-derived gradient and the grader's replays of each known way of getting it wrong:
a term of the quotient rule missing or slipped, sign(x) dropped, the upstream gradient
ignored, on one term only, added or applied twice, and the derivative of |x| right on part of
the input only.
"""

from __future__ import annotations

import torch

from ..describing import fmt
from .common import allclose
from .gradcheck_layout import Again, laid_out
from .gradcheck_partial import At, partly_lower, rounding_sized_advice
from .gradcheck_precision import lower_precision
from .gradcheck_rows import per_dim
from .gradcheck_smoothed import implied_abs_derivative, smoothed_sign

MATCH_RTOL, MATCH_ATOL = 1e-6, 1e-9

MISTAKES = {
    "quotient-term-missing": "It matches 3x²/(1+A) alone: the quotient rule's second term, "
                             "-S·sign(x)/(1+A)², is missing.",
    "sign-dropped": "It matches the gradient with sign(x) left out of the second term: the "
                    "derivative of |x| is sign(x), so -S·sign(x)/(1+A)².",
    "upstream-ignored": "It matches the gradient without the upstream factor: multiply by the "
                        "grad_output that backward receives.",
}

#: What backward must do with the upstream gradient, told after each way of getting it wrong.
WHOLE = ("backward must return grad_output times the whole derivative, "
         "grad_output * (3x²/(1+A) - S·sign(x)/(1+A)²)")
PARENTHESES = (f"Multiplication binds tighter than subtraction: {WHOLE}, so put parentheses "
               "around the whole quotient-rule expression before multiplying.")

#: The upstream gradient g used on part of the gradient only (operator precedence:
#: ``g * 3*x**2/(1+A) - S*sign(x)/(1+A)**2`` scales the first term alone), added, or applied
#: twice: the id, what the student's backward returns, ``(g, first, second) -> tensor`` with
#: the right gradient ``first + second``, and what the student is told. Each is right when g
#: is 1, or gives the plain gradient or one term alone when g is 0, so each is named only at
#: an upstream other than 0 and 1 (``diagnose_upstream``).
UPSTREAM_SLIPS = {
    "upstream-on-first-term": (
        "upstream-on-one-term", lambda g, first, second: g * first + second,
        "It matches grad_output·3x²/(1+A) - S·sign(x)/(1+A)²: grad_output scales the first "
        f"term only. {PARENTHESES}"),
    "upstream-on-second-term": (
        "upstream-on-one-term", lambda g, first, second: first + g * second,
        "It matches 3x²/(1+A) - grad_output·S·sign(x)/(1+A)²: grad_output scales the second "
        f"term only. {PARENTHESES}"),
    "upstream-added": (
        "upstream-added", lambda g, first, second: g + first + second,
        "It matches grad_output + (3x²/(1+A) - S·sign(x)/(1+A)²): the upstream gradient is "
        f"added, but the chain rule has it multiplied: {WHOLE}."),
    "upstream-applied-twice": (
        "upstream-applied-twice", lambda g, first, second: g * g * (first + second),
        "It matches grad_output² times the gradient: the upstream gradient is multiplied in "
        f"twice. Multiply by it once: {WHOLE}."),
}

#: Slips in the quotient rule, d(u/v) = (u'·v - u·v')/v² with u = S, u' = 3x², v = 1 + A and
#: v' = sign(x) (or the product rule on S·(1+A)⁻¹): the id, the gradient the slip gives,
#: ``(x, S, A, sign) -> tensor``, and what the student is told. A factor dropped from either
#: term, the first term missing, the subtracted term's sign, the denominator not squared.
SLIPS = {
    "first-term-over-v-squared": (
        "quotient-factor-dropped", lambda x, S, A, s: (3 * x ** 2 - S * s) / (1 + A) ** 2,
        "It matches (3x² - S·sign(x))/(1+A)²: the first term lost its factor (1+A). In the "
        "quotient rule (u'·v - u·v')/v², with u = S and v = 1+A, the first term is "
        "3x²·(1+A)/(1+A)², which is 3x²/(1+A)."),
    "second-term-without-S": (
        "quotient-factor-dropped", lambda x, S, A, s: 3 * x ** 2 / (1 + A) - s / (1 + A) ** 2,
        "It matches 3x²/(1+A) - sign(x)/(1+A)²: the second term lost its factor S. In the "
        "quotient rule (u'·v - u·v')/v², u·v' is S·sign(x)."),
    "x-squared-without-3": (
        "quotient-factor-dropped", lambda x, S, A, s: x ** 2 / (1 + A) - S * s / (1 + A) ** 2,
        "It matches x²/(1+A) - S·sign(x)/(1+A)²: the factor 3 is missing from the derivative "
        "of x³, which is 3x²."),
    "first-term-missing": (
        "quotient-term-missing", lambda x, S, A, s: -S * s / (1 + A) ** 2,
        "It matches -S·sign(x)/(1+A)² alone: the first term, 3x²/(1+A) (from the derivative of "
        "S = sum(x³), with 1+A held fixed), is missing."),
    "second-term-added": (
        "quotient-sign-flipped", lambda x, S, A, s: 3 * x ** 2 / (1 + A) + S * s / (1 + A) ** 2,
        "It matches 3x²/(1+A) + S·sign(x)/(1+A)²: the second term is added, but the quotient "
        "rule (u'·v - u·v')/v² subtracts it: -S·sign(x)/(1+A)², since 1/(1+A) falls as |x| "
        "grows."),
    "numerator-reversed": (
        "quotient-sign-flipped",
        lambda x, S, A, s: (S * s - 3 * x ** 2 * (1 + A)) / (1 + A) ** 2,
        "It matches the gradient with its sign flipped, (u·v' - u'·v)/v²: the quotient rule's "
        "numerator is u'·v - u·v' (the top's derivative times the bottom comes first), here "
        "3x²·(1+A) - S·sign(x)."),
    "over-v-not-v-squared": (
        "quotient-denominator-not-squared",
        lambda x, S, A, s: (3 * x ** 2 * (1 + A) - S * s) / (1 + A),
        "It matches (3x²·(1+A) - S·sign(x))/(1+A): the quotient rule divides by the "
        "denominator squared, (1+A)², not by (1+A)."),
    "second-term-over-v": (
        "quotient-denominator-not-squared",
        lambda x, S, A, s: 3 * x ** 2 / (1 + A) - S * s / (1 + A),
        "It matches 3x²/(1+A) - S·sign(x)/(1+A): the second term is divided by (1+A) once, but "
        "the derivative of 1/(1+A) is -sign(x)/(1+A)², so it is S·sign(x)/(1+A)²."),
}


def analytic_grad(x: torch.Tensor, mistake: str | None = None) -> torch.Tensor:
    """The hand-derived gradient in float64, or one of its known wrong forms."""
    x = x.detach().double()
    S, A = (x ** 3).sum(), x.abs().sum()
    first = 3 * x ** 2 / (1 + A)
    if mistake in SLIPS:
        return SLIPS[mistake][1](x, S, A, torch.sign(x))
    if mistake == "quotient-term-missing":
        return first
    sign = torch.ones_like(x) if mistake == "sign-dropped" else torch.sign(x)
    return first - S * sign / (1 + A) ** 2


def diagnose_backward(got: torch.Tensor, x: torch.Tensor, upstream: float,
                      again: Again | None = None, at: At | None = None
                      ) -> tuple[str | None, str]:
    """Name a wrong backward by replaying each known mistake (with and without the upstream).
    ``again``, when given, is the student's gradient times the same upstream at another x (or
    the failure there): one more call that confirms a guess (``gradcheck_smoothed``,
    ``gradcheck_layout``); ``at`` the same at another upstream too (``gradcheck_partial``)."""
    for name in ("quotient-term-missing", "sign-dropped"):
        for factor in (upstream, 1.0):
            if allclose(got, factor * analytic_grad(x, name), MATCH_RTOL, MATCH_ATOL):
                return name, MISTAKES[name]
    if allclose(got, analytic_grad(x), MATCH_RTOL, MATCH_ATOL):
        return "upstream-ignored", MISTAKES["upstream-ignored"]
    right = analytic_grad(x)
    dropped = upstream_sign_dropped(got, x, upstream, right, at)
    if dropped is not None:
        return dropped
    for slip, (name, _, told) in SLIPS.items():
        wrong = analytic_grad(x, slip)
        if allclose(wrong, right, MATCH_RTOL, MATCH_ATOL):
            continue  # the slip changes nothing at this x: it cannot be told here
        for factor in (upstream, 1.0):
            if allclose(got, factor * wrong, MATCH_RTOL, MATCH_ATOL):
                return name, told
    upstream_slip = diagnose_upstream(got, x, upstream)
    if upstream_slip is not None:
        return upstream_slip
    smoothed = smoothed_sign(got, x, upstream, again)  # gradcheck_smoothed
    if smoothed is not None:
        return smoothed
    region = wrong_on_region(got, x, upstream)
    if region is not None:
        return "abs-derivative-wrong-in-region", region
    one_dim = per_dim(got, x, upstream, MATCH_RTOL, MATCH_ATOL)  # a 2-D x (gradcheck_rows)
    if one_dim is not None:
        return one_dim
    lower = lower_precision(got, x, upstream, upstream * right)  # gradcheck_precision
    if lower is not None:
        return lower
    partly = partly_lower(got, x, upstream, analytic_grad, at)  # one term's dtype
    if partly is not None:
        return partly
    layout = laid_out(got, x, upstream, analytic_grad, again)  # gradcheck_layout
    if layout is not None:
        return layout
    return None, (rounding_sized_advice(got, x, upstream, analytic_grad)
                  or "Derive it with the quotient rule: 3x²/(1+A) - S·sign(x)/(1+A)².")


#: The upstream gradient's sign dropped (``grad_output.abs()``): at a negative upstream it
#: gives what the whole gradient's sign flipped gives, so it is named only where the same
#: backward at the upstream negated (positive) is right (red team rt-5)
UPSTREAM_SIGN = ("upstream-sign-dropped",
                 "It is right at a positive upstream and has the opposite sign at this negative "
                 "one: the upstream gradient's sign is dropped (grad_output.abs(), or a square "
                 "root of its square). The chain rule multiplies by grad_output itself, sign "
                 f"and all: {WHOLE}.")


def upstream_sign_dropped(got: torch.Tensor, x: torch.Tensor, upstream: float,
                          right: torch.Tensor, at: At | None) -> tuple[str, str] | None:
    """``UPSTREAM_SIGN`` when ``got`` is ``|upstream|`` times the right gradient at a negative
    upstream and the student's backward at ``-upstream`` is right (one more call, ``at``);
    None otherwise (no ``at``: the flipped quotient rule's replay may name it)."""
    if at is None or upstream >= -0.1 or allclose(right, -right, MATCH_RTOL, MATCH_ATOL) \
            or not allclose(got, -upstream * right, MATCH_RTOL, MATCH_ATOL):
        return None
    other, failure = at(x, -upstream)
    if failure is not None or not isinstance(other, torch.Tensor) or other.shape != x.shape:
        return None
    if not allclose(other.detach().cpu().double(), -upstream * right, MATCH_RTOL, MATCH_ATOL):
        return None
    return UPSTREAM_SIGN


def diagnose_upstream(got: torch.Tensor, x: torch.Tensor,
                      upstream: float) -> tuple[str, str] | None:
    """The upstream gradient used on one term only, added, or applied twice, when ``got``
    matches that and nothing else: named only at an upstream other than 0 and 1 (where each
    is the right gradient or the plain one) and when the slip's gradient differs from the
    right one and from the plain one at this x. None when the evidence does not show one."""
    if abs(upstream - 1.0) < 0.1 or abs(upstream) < 0.1:
        return None  # every such slip is invisible (or the plain gradient) at this upstream
    x = x.detach().double()
    S, A = (x ** 3).sum(), x.abs().sum()
    first, second = 3 * x ** 2 / (1 + A), -S * torch.sign(x) / (1 + A) ** 2
    right, plain_grad = upstream * (first + second), first + second
    found = []
    for slip, (name, grad, told) in UPSTREAM_SLIPS.items():
        wrong = grad(upstream, first, second)
        if (allclose(wrong, right, MATCH_RTOL, MATCH_ATOL)
                or allclose(wrong, plain_grad, MATCH_RTOL, MATCH_ATOL)):
            continue  # the slip changes nothing at this x, or reads as the upstream ignored
        if allclose(got, wrong, MATCH_RTOL, MATCH_ATOL):
            found.append((name, told))
    return found[0] if len(found) == 1 else None  # two fit: the evidence cannot tell which


#: Where a derivative of |x| can be right on one side and wrong on the other: the region, as
#: told, its complement, as told, and the mask. sign(x) is one constant on each of x < 0 and
#: x > 0; a mask (x > 0, as for ReLU), a constant, or sign(x) kept on one side of |x| = 1
#: only is right on part of the input and wrong on the rest.
REGIONS = (
    ("x < 0", "x > 0", lambda x: x < 0),
    ("x > 0", "x < 0", lambda x: x > 0),
    ("|x| < 1", "|x| > 1", lambda x: x.abs() < 1),
    ("|x| > 1", "|x| < 1", lambda x: x.abs() > 1),
)


#: How far a region's derivative of |x| must be from sign(x) at each of its entries: a wrong
#: one (0, the other side's ±1, a constant) is off by far more; one a hair from sign(x) is a
#: smoothed sign (``gradcheck_smoothed``), not a wrong region, and would be told as "taken as
#: 1.00, but ... 1 there".
REGION_GAP = 0.01


def wrong_on_region(got: torch.Tensor, x: torch.Tensor, upstream: float) -> str | None:
    """A gradient right at every entry outside one of ``REGIONS`` and wrong at every entry in
    it, where it is the formula with one other constant in place of sign(x): the derivative
    of |x| taken right on part of the input only. What the student is told, or None when the
    evidence does not show that (a wrong entry outside the region, a right one in it, an
    empty side, a derivative of |x| that varies over the region beyond float64's rounding, or
    one within ``REGION_GAP`` of sign(x) at an entry)."""
    implied = implied_abs_derivative(got, x, upstream)
    if implied is None:
        return None
    used, noise = implied
    x = x.detach().double()
    got = got.detach().double().reshape(x.shape)
    expected = upstream * analytic_grad(x)
    right = torch.tensor([allclose(g.reshape(1), e.reshape(1), MATCH_RTOL, MATCH_ATOL)
                          for g, e in zip(got.reshape(-1), expected.reshape(-1))]).reshape(x.shape)
    for where, elsewhere, mask in REGIONS:
        inside = mask(x)
        if not inside.any() or inside.all() or not torch.equal(~right, inside):
            continue
        value = used[inside]
        constant = float(value.mean())
        if bool(((value - constant).abs() > noise[inside] + noise[inside].max()).any()):
            return None  # not one derivative of |x| there: something else differs
        signs = torch.sign(x[inside])
        if bool(((value - signs).abs() < REGION_GAP).any()):
            return None  # about sign(x) there: not a wrong derivative of |x|
        there = (f"{int(signs[0])} there" if bool((signs == signs[0]).all())
                 else "-1 where x < 0 and 1 where x > 0")
        taken = str(round(constant)) if abs(constant - round(constant)) < 1e-6 \
            else fmt(constant, 3)
        return (f"It is right where {elsewhere} and wrong at every {where} (entries "
                f"{inside.nonzero().reshape(-1).tolist()}): there it matches the gradient with "
                f"d|x|/dx taken as {taken}, but the derivative of |x| is sign(x), {there}"
                + (" (the mask (x > 0) gives 0 there: it is ReLU's derivative, not |x|'s)"
                   if taken == "0" and where == "x < 0" else "")
                + ". Use torch.sign(x) in the second term, -S·sign(x)/(1+A)².")
    return None
