"""q3_gradcheck: a custom ``autograd.Function`` and a numerical check of its backward.

The op is ``f(x) = S / (1 + A)`` with ``S = sum(x**3)`` and ``A = sum(|x|)``; its gradient is
``3x² / (1 + A) - S·sign(x) / (1 + A)²``. Graded inputs are drawn away from 0, where ``|x|`` has a kink,
as the contract promises; the backward's check also tries one input with zeros, for advice only
(``gradcheck_kink``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call, call_backward, call_backward_each
from ..describing import describe, fmt, plain
from ..probes import InputClass, Subject, explain, numbers_of
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import allclose, first_failure, judge_tensor, with_diagnosis
from .gradcheck_kink import judge_at_kink, with_zeros

QUESTION = "q3_gradcheck"
RTOL, ATOL = 1e-7, 1e-9
MATCH_RTOL, MATCH_ATOL = 1e-6, 1e-9
GRADCHECK = {"eps": 1e-6, "atol": 1e-8}

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


def draw_x(rng: np.random.Generator, dtype: torch.dtype = torch.float64,
           requires_grad: bool = False) -> torch.Tensor:
    """2-8 values with |x| in [0.2, 3], so finite differences never straddle the kink at 0;
    both signs occur, or a dropped sign(x) would go unseen."""
    size = int(rng.integers(2, 9))
    signs = rng.permutation(np.resize([-1.0, 1.0], size))
    values = rng.uniform(0.2, 3.0, size) * signs
    return torch.tensor(values, dtype=dtype, requires_grad=requires_grad)


def forward_value(x: torch.Tensor) -> torch.Tensor:
    """``sum(x**3) / (1 + sum(|x|))`` in float64."""
    x = x.detach().double()
    return (x ** 3).sum() / (1 + x.abs().sum())


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


def judge_forward(my_op: Callable, MyOp: Any, x: torch.Tensor) -> Verdict:
    """``my_op(x)`` and ``MyOp.apply(x)`` against the float64 formula."""
    expected = forward_value(x)
    for name, fn in (("my_op", my_op), ("MyOp.apply", getattr(MyOp, "apply", None))):
        got, failure = call(fn, name, x.clone())
        if failure:
            return failure
        verdict = judge_tensor(got, expected, f"{name}({describe(x)})", dtype=x.dtype,
                               rtol=RTOL, atol=ATOL, inputs={"x": plain(x)}, shapes=((), (1,)))
        if not verdict.ok:
            return with_diagnosis(verdict, lambda: (None, "The forward is sum(x**3) divided by "
                                                          "1 + sum(abs(x))."))
    return PASS


def forward_subject(my_op: Callable, x: torch.Tensor) -> Subject:
    """What the probes need to explain a wrong forward (its class: negative entries, against
    the same magnitudes made positive)."""
    def classes(args: tuple) -> list[InputClass]:
        (x_,) = args
        return [InputClass("negative", (x_.abs(),), "Is abs(x) (or the sign of x) handled "
                           "differently from the formula, sum(x**3) / (1 + sum(abs(x)))?")] \
            if (x_ < 0).any() else []

    def same(got: Any, expected: torch.Tensor) -> bool:
        return (isinstance(got, torch.Tensor) and got.numel() == 1
                and allclose(got.reshape(()), expected, RTOL, ATOL))

    return Subject("my_op", my_op, (x,), ("x",), forward_value, same, numbers_of,
                   classes=classes)


def student_backward(MyOp: Any, x: torch.Tensor, upstream: float) -> tuple[Any, Verdict | None]:
    """Run the student's forward and backward with a non-unit upstream gradient, as one step
    (wherever their code runs); return ``x.grad``."""
    leaf = x.detach().clone().requires_grad_()
    _, failure = call_backward(getattr(MyOp, "apply", None), "MyOp.apply(x).backward",
                               (leaf,), torch.tensor(upstream, dtype=leaf.dtype))
    if failure is not None and "does not require grad" in failure.message:
        failure = Verdict(False, f"MyOp.apply(x) returned a result that does not require grad "
                          f"for an x that does ({failure.message}); return the value computed "
                          "in forward, a 0-d tensor.", "wrong-type",
                          Evidence({"x": plain(leaf)}), failure.traceback)
    if failure is None and leaf.grad is None:
        failure = Verdict(False, "After MyOp.apply(x).backward(), x.grad is None: backward must "
                          "return the gradient with respect to x.", "no-gradient",
                          Evidence({"x": plain(leaf)}))
    return leaf.grad, failure


def numeric_grad(apply: Any, x: torch.Tensor) -> tuple[torch.Tensor | None, Verdict | None]:
    """Central differences of the student's forward in float64 (what gradcheck compares the
    backward with), computed here from forward values alone."""
    eps, grads = GRADCHECK["eps"], []
    for i in range(x.numel()):
        values = []
        for step in (eps, -eps):
            probe = x.detach().clone().double()
            probe.view(-1)[i] += step
            out, failure = call(apply, "MyOp.apply", probe)
            if failure is not None:
                return None, failure
            if not (isinstance(out, torch.Tensor) and out.numel() == 1):
                return None, Verdict(False, f"MyOp.apply(x) returned {describe(out)}; expected "
                                     "a 0-d tensor.", "wrong-type", Evidence({"x": plain(probe)}))
            values.append(float(out.detach().double().reshape(())))
        grads.append((values[0] - values[1]) / (2 * eps))
    return torch.tensor(grads, dtype=torch.float64).reshape(x.shape), None


def diagnose_backward(got: torch.Tensor, x: torch.Tensor,
                      upstream: float) -> tuple[str | None, str]:
    """Name a wrong backward by replaying each known mistake (with and without the upstream)."""
    for name in ("quotient-term-missing", "sign-dropped"):
        for factor in (upstream, 1.0):
            if allclose(got, factor * analytic_grad(x, name), MATCH_RTOL, MATCH_ATOL):
                return name, MISTAKES[name]
    if allclose(got, analytic_grad(x), MATCH_RTOL, MATCH_ATOL):
        return "upstream-ignored", MISTAKES["upstream-ignored"]
    right = analytic_grad(x)
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
    region = wrong_on_region(got, x, upstream)
    if region is not None:
        return "abs-derivative-wrong-in-region", region
    return None, "Derive it with the quotient rule: 3x²/(1+A) - S·sign(x)/(1+A)²."


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


def wrong_on_region(got: torch.Tensor, x: torch.Tensor, upstream: float) -> str | None:
    """A gradient right at every entry outside one of ``REGIONS`` and wrong at every entry in
    it, where it is the formula with one other constant in place of sign(x): the derivative
    of |x| taken right on part of the input only. What the student is told, or None when the
    evidence does not show that (a wrong entry outside the region, a right one in it, an
    empty side, a derivative of |x| that varies over the region)."""
    x = x.detach().double()
    got = got.detach().double().reshape(x.shape)
    S, A = (x ** 3).sum(), x.abs().sum()
    weight = upstream * S / (1 + A) ** 2  # how much d|x|/dx moves each entry
    if float(weight.abs()) < 1e-6:
        return None
    expected = upstream * analytic_grad(x)
    right = torch.tensor([allclose(g.reshape(1), e.reshape(1), MATCH_RTOL, MATCH_ATOL)
                          for g, e in zip(got.reshape(-1), expected.reshape(-1))]).reshape(x.shape)
    # the derivative of |x| each entry's value implies, the first term taken as right
    used = (upstream * 3 * x ** 2 / (1 + A) - got) / weight
    for where, elsewhere, mask in REGIONS:
        inside = mask(x)
        if not inside.any() or inside.all() or not torch.equal(~right, inside):
            continue
        value = used[inside]
        constant = float(value.mean())
        if not allclose(value, torch.full_like(value, constant), 1e-6, 1e-6):
            return None  # not one derivative of |x| there: something else differs
        signs = torch.sign(x[inside])
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


def judge_backward(MyOp: Any, x: torch.Tensor, upstream: float) -> Verdict:
    """The student's backward times ``upstream`` against the grader's analytic gradient."""
    got, failure = student_backward(MyOp, x, upstream)
    if failure:
        return failure
    verdict = judge_tensor(got, upstream * analytic_grad(x),
                           f"x.grad after MyOp.apply(x).backward({fmt(upstream)}) at "
                           f"x = {describe(x)}", dtype=x.dtype, rtol=RTOL, atol=ATOL,
                           inputs={"x": plain(x), "upstream": upstream})
    return with_diagnosis(verdict, lambda: diagnose_backward(got, x, upstream))


def judge_backward_at_kink(MyOp: Any, x: torch.Tensor, upstream: float) -> Verdict:
    """The student's backward at an ``x`` with entries equal to 0: finite, the formula at the
    other entries, a subgradient at the zeros (``gradcheck_kink``)."""
    got, failure = student_backward(MyOp, x, upstream)
    if failure:
        return failure
    verdict = judge_at_kink(got, x, upstream, upstream * analytic_grad(x), rtol=RTOL, atol=ATOL)
    return with_diagnosis(verdict, lambda: diagnose_backward(got, x, upstream))


def check_forward(my_op: Callable, MyOp: Any, rng: np.random.Generator, *,
                  points: float = 1.0) -> CheckResult:
    """Forward values on fresh float64 inputs."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(3):
        x = draw_x(rng)
        verdict = judge_forward(my_op, MyOp, x)
        if not verdict.ok:
            verdict = explain(verdict, forward_subject(my_op, x), None)
            break
    return finish(QUESTION, "forward", verdict, seed=seed, points=points,
                  passed_message="my_op's forward matched on fresh inputs.")


def check_backward(MyOp: Any, rng: np.random.Generator, *, points: float = 1.0) -> CheckResult:
    """Backward with non-unit upstream gradients, on fresh float64 inputs away from 0; then,
    for advice only, one with one or two entries equal to 0 (drawn last: the earlier inputs
    stay the seed's own)."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(3):
        upstream = float(rng.uniform(1.5, 4.0) * rng.choice([-1.0, 1.0]))
        verdict = judge_backward(MyOp, draw_x(rng), upstream)
        if not verdict.ok:
            break
    kink = PASS
    if verdict.ok:
        upstream = float(rng.uniform(1.5, 4.0) * rng.choice([-1.0, 1.0]))
        kink = judge_backward_at_kink(MyOp, with_zeros(rng, draw_x(rng)), upstream)
    result = finish(QUESTION, "backward", verdict, seed=seed, points=points,
                    passed_message="MyOp's backward matched the analytic gradient.")
    if kink.ok:
        return result
    # the contract promises graded inputs away from 0: a backward wrong only at a zero entry
    # is told, not scored
    return dataclasses.replace(result, misconception=kink.misconception, message=(
        f"{result.message} Advice, not scored (graded inputs stay away from 0): "
        f"{kink.message}"))


def check_gradcheck(MyOp: Any, rng: np.random.Generator, *, points: float = 1.0) -> CheckResult:
    """gradcheck's test of ``MyOp.apply`` on fresh float64 inputs away from 0: the backward
    against central differences of the forward (eps=1e-6, atol=1e-8, rtol=1e-3), with both
    sides computed from the student's own op and compared here."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(2):
        x = draw_x(rng)
        analytic, failure = student_backward(MyOp, x, 1.0)
        numeric, failure = (None, failure) if failure else numeric_grad(MyOp.apply, x)
        if failure is not None:
            verdict = failure
        elif not allclose(analytic, numeric, 1e-3, GRADCHECK["atol"]):
            verdict = first_failure([lambda: judge_backward(MyOp, x, 1.0),
                                     lambda: judge_backward(MyOp, x, 0.0)])
            if verdict.ok:  # the backward matched the formula, yet finite differences disagree
                verdict = Verdict(False, f"gradcheck of MyOp.apply failed at x = {describe(x)}: "
                                  "the forward and backward disagree numerically.",
                                  "gradcheck-failed", Evidence({"x": plain(x)}, plain(numeric),
                                                               plain(analytic)))
        if not verdict.ok:
            break
    return finish(QUESTION, "gradcheck", verdict, seed=seed, points=points,
                  passed_message="gradcheck passed on fresh float64 inputs.")


def judge_two_graphs(MyOp: Any, x1: torch.Tensor, x2: torch.Tensor, upstream: float) -> Verdict:
    """``MyOp.apply(x1)`` and ``MyOp.apply(x2)`` recorded, then the first graph's backward and
    the second's: each gradient must be what the same backward gives with its graph alone
    (a backward wrong either way is ``check_backward``'s to score, not this check's)."""
    leaves = [x.detach().clone().requires_grad_() for x in (x1, x2)]
    shown = (f"With two graphs alive (y1 = MyOp.apply(x1), y2 = MyOp.apply(x2) at x1 = "
             f"{describe(x1)}, x2 = {describe(x2)}, then y1.backward({fmt(upstream)}) and "
             f"y2.backward({fmt(upstream)}))")
    _, failure = call_backward_each(getattr(MyOp, "apply", None), "MyOp.apply", tuple(leaves),
                                    torch.tensor(upstream, dtype=x1.dtype))
    if failure is not None and failure.misconception == "raised":
        failure = dataclasses.replace(
            failure, message=f"{shown}, it raised {failure.message.split(' raised ', 1)[-1]}")
    if failure:
        return failure
    inputs = {"x1": plain(x1), "x2": plain(x2), "upstream": upstream}
    for which, (leaf, x) in enumerate(zip(leaves, (x1, x2)), 1):
        if leaf.grad is not None and allclose(leaf.grad, upstream * analytic_grad(x), RTOL, ATOL):
            continue
        alone, failure = student_backward(MyOp, x, upstream)
        if failure is not None or (leaf.grad is not None
                                   and allclose(leaf.grad, alone, MATCH_RTOL, MATCH_ATOL)):
            continue  # the backward's own mistake, the same with one graph
        return Verdict(False, f"{shown}, x{which}.grad is {describe(leaf.grad)}; with its graph "
                       f"alone it is {describe(alone)}: backward read state kept outside ctx (on "
                       "the class, in a global), which the later forward overwrote. Keep what "
                       "backward needs on ctx (ctx.save_for_backward(x)), one per graph.",
                       "state-outside-ctx", Evidence(inputs, plain(alone), plain(leaf.grad)))
    return PASS


def check_two_graphs(MyOp: Any, rng: np.random.Generator, *, points: float = 1.0
                     ) -> CheckResult:
    """Two forwards of ``MyOp.apply`` on fresh float64 inputs of one size before either
    backward: each graph's backward must use its own input (kept on ctx)."""
    seed = seed_of(rng)
    verdict = PASS
    for _ in range(2):
        x1 = draw_x(rng)
        x2 = x1.flip(0) * torch.tensor(rng.uniform(0.5, 1.5, x1.numel()), dtype=x1.dtype)
        upstream = float(rng.uniform(1.5, 4.0) * rng.choice([-1.0, 1.0]))
        verdict = judge_two_graphs(MyOp, x1, x2, upstream)
        if not verdict.ok:
            break
    return finish(QUESTION, "two_graphs", verdict, seed=seed, points=points,
                  passed_message="Each of two graphs alive together got its own gradient.")
