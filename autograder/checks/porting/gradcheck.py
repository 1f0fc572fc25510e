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
from .gradcheck_inputs import deep_x, judge_float32, named_at_shape, near_zero, near_zero_x
from .gradcheck_kink import judge_at_kink, with_zeros
from .gradcheck_layout import Again, refused_reversed
from .gradcheck_mistakes import MATCH_ATOL, MATCH_RTOL, analytic_grad, diagnose_backward
from .gradcheck_norm import matrix_norm
from .gradcheck_partial import beyond_float64
from .gradcheck_shapes import only_1d, shaped_xs

QUESTION = "q3_gradcheck"
RTOL, ATOL = 1e-7, 1e-9
GRADCHECK = {"eps": 1e-6, "atol": 1e-8}


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


def judge_backward(MyOp: Any, x: torch.Tensor, upstream: float) -> Verdict:
    """The student's backward times ``upstream`` against the grader's analytic gradient."""
    got, failure = student_backward(MyOp, x, upstream)
    if failure:  # a gradient of x's sizes reversed, refused: gradcheck_layout
        return refused_reversed(failure, x, upstream, analytic_grad, again_at(MyOp, upstream))
    right = upstream * analytic_grad(x)
    verdict = judge_tensor(got, right, f"x.grad after MyOp.apply(x).backward({fmt(upstream)}) "
                           f"at x = {describe(x)}", dtype=x.dtype, rtol=RTOL, atol=ATOL,
                           inputs={"x": plain(x), "upstream": upstream})
    verdict = beyond_float64(verdict, got, x, upstream, right, getattr(MyOp, "apply", None))
    return with_diagnosis(verdict, lambda: diagnose_backward(
        got, x, upstream, again_at(MyOp, upstream),
        lambda other, up: student_backward(MyOp, other, up)))


def again_at(MyOp: Any, upstream: float) -> Again:
    """The student's backward at another x with the same upstream: one more call, for a
    diagnosis to confirm its guess (``(x.grad, None)``, or ``(None, the failure)``)."""
    return lambda other: student_backward(MyOp, other, upstream)


def judge_backward_at_kink(MyOp: Any, x: torch.Tensor, upstream: float) -> Verdict:
    """The student's backward at an ``x`` with entries equal to 0: finite, the formula at the
    other entries, a subgradient at the zeros (``gradcheck_kink``)."""
    got, failure = student_backward(MyOp, x, upstream)
    if failure:
        return failure
    verdict = judge_at_kink(got, x, upstream, upstream * analytic_grad(x), rtol=RTOL, atol=ATOL)
    return with_diagnosis(verdict, lambda: diagnose_backward(got, x, upstream,
                                                             again_at(MyOp, upstream)))


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
    if verdict.ok:  # x of another shape, drawn last (the inputs above stay the seed's own)
        for x in shaped_xs(rng):
            verdict = judge_forward(my_op, MyOp, x)
            if not verdict.ok:
                verdict = only_1d(verdict, x, lambda flat: judge_forward(my_op, MyOp, flat).ok,
                                  "my_op")
                verdict = matrix_norm(verdict, x, lambda: call(my_op, "my_op", x.clone())[0],
                                      "my_op")
                break
    if verdict.ok:  # a 3-D x, drawn last (red team rt-8: sums per matrix)
        deep = deep_x(rng)
        verdict = judge_forward(my_op, MyOp, deep)
        verdict = named_at_shape(verdict, deep, lambda flat: judge_forward(my_op, MyOp, flat).ok,
                                 "my_op", "my_op")
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
        verdict = judge_shaped_backward(MyOp, rng)
    if verdict.ok:
        verdict = judge_more_backward(MyOp, rng)
    result = finish(QUESTION, "backward", verdict, seed=seed, points=points,
                    passed_message="MyOp's backward matched the analytic gradient at every input it was given.")
    if kink.ok:
        return result
    # the contract promises graded inputs away from 0: a backward wrong only at a zero entry
    # is told, not scored
    return dataclasses.replace(result, misconception=kink.misconception, message=(
        f"{result.message} Advice, not scored (graded inputs stay away from 0): "
        f"{kink.message}"))


def judge_shaped_backward(MyOp: Any, rng: np.random.Generator) -> Verdict:
    """The backward at a 2-D and a 0-d x (drawn last: ``gradcheck_shapes``)."""
    for x in shaped_xs(rng):
        upstream = float(rng.uniform(1.5, 4.0) * rng.choice([-1.0, 1.0]))
        verdict = judge_backward(MyOp, x, upstream)
        if not verdict.ok:
            verdict = only_1d(verdict, x, lambda flat: judge_backward(MyOp, flat, upstream).ok,
                              "MyOp's forward and backward")
            return matrix_norm(verdict, x, lambda: call(getattr(MyOp, "apply", None),
                                                        "MyOp.apply", x.clone())[0],
                               "MyOp's forward")
    return PASS


def judge_more_backward(MyOp: Any, rng: np.random.Generator) -> Verdict:
    """The backward at a 3-D x, at an x with entries near (not at) 0, and at a float32 x,
    drawn last (``gradcheck_inputs``: red team rt-8)."""
    deep, near, x32 = deep_x(rng), near_zero_x(rng), draw_x(rng).to(torch.float32)
    ups = [float(rng.uniform(1.5, 4.0) * rng.choice([-1.0, 1.0])) for _ in range(3)]
    verdict = judge_backward(MyOp, deep, ups[0])
    if not verdict.ok:
        return named_at_shape(verdict, deep, lambda flat: judge_backward(MyOp, flat, ups[0]).ok,
                              "MyOp's forward and backward", "MyOp's backward")
    verdict = judge_backward(MyOp, near, ups[1])
    if not verdict.ok:
        got, _ = student_backward(MyOp, near, ups[1])
        return near_zero(verdict, got, near, ups[1] * analytic_grad(near))
    got, failure = student_backward(MyOp, x32, ups[2])
    return judge_float32(got, failure, x32, ups[2], ups[2] * analytic_grad(x32.double()),
                         lambda: judge_backward(MyOp, x32.double(), ups[2]).ok)


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
    if all(leaf.grad is None or not leaf.grad.detach().any() for leaf in leaves):
        # nothing to tell apart: a backward that gives no gradient keeps no state at all
        # (red-team round rt-3: a MyOp computing nothing earned this check's points)
        return Verdict(False, f"{shown}, x1.grad and x2.grad are "
                       f"{describe(leaves[0].grad)} and {describe(leaves[1].grad)}: no "
                       "gradient reached either leaf, so whether each graph keeps its own input "
                       "cannot be seen, and this check's points are for a backward that does. "
                       "Return the gradient from backward: grad_output times the derivative at "
                       "the input saved on ctx (ctx.save_for_backward(x) in forward).",
                       "no-gradient", Evidence(inputs, None, None))
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
