"""q4_vjp: ``v.backward(weights)`` for a vector ``v`` is a vector-Jacobian product.

For ``v = x ** 2`` the reference is ``2 * x * weights``, computed in float64 numpy; the dtype
of the answer must be x's own, and the caller's tensors must come back untouched.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..calling import call_then_again
from ..describing import EXPECTED_DIGITS, describe, error_text, plain, tolerance_text
from ..probes import InputClass, Subject, explain, numbers_of
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import (
    array_error,
    arrays_close,
    dtype_name,
    first_match,
    flat,
    handed_out_again,
    reused,
    short,
)
from .vjp_dtype import LEAF_HINT
from .vjp_dtype import lost as dtype_lost
from .vjp_flattened import named as reshaped_named
from .vjp_half import HINT as HALF_HINT
from .vjp_half import ONE_TERM, confirmed
from .vjp_layout import draw_non_square, draw_three_d
from .vjp_layout import named as layout_named
from .vjp_leaf import named as leaf_named
from .vjp_mean import AVERAGED, patterns
from .vjp_mean import confirmed as mean_confirmed
from .vjp_overwritten import named as overwritten_named
from .vjp_precision import confirmed as precision_confirmed
from .vjp_range import draw_large
from .vjp_range import named as range_named
from .vjp_rearranged import patterns as transposed_patterns  # .T, and t().reshape
from .vjp_repeat import confirmed as repeat_confirmed
from .vjp_repeat import draw_repeat
from .vjp_sqrt import HINT as SQRT_HINT
from .vjp_sqrt import SQRT, at_negative_weights, sign_patterns
from .vjp_sqrt import confirmed as sqrt_confirmed
from .vjp_squeezed import size_one_dropped
from .vjp_transposed import confirmed as transposed_confirmed
from .vjp_weights import TWICE_HINT, mixed_weights
from .vjp_xsign import X_SIGN
from .vjp_xsign import confirmed as xsign_confirmed
from .vjp_xsign import sign_patterns as x_sign_patterns

QUESTION = "q4_vjp"
#: (rtol, atol) per dtype: float32 rounding of 2*x*w, and float64 to near machine precision.
TOLERANCES = {torch.float32: (1e-5, 1e-6), torch.float64: (1e-10, 1e-12)}
LESSON_VJP = np.array([4.0, 12.0])


def draw_cases(rng: np.random.Generator) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """1-D float32, 2-D float64, then a random one; weights never all equal to one."""
    def case(shape: tuple[int, ...], dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        x = rng.uniform(-5.0, 5.0, size=shape)
        weights = rng.uniform(-3.0, 3.0, size=shape)
        weights.flat[0] = 1.5 + rng.uniform(0.0, 1.0)  # one weight surely not 1 (nor 0)
        return torch.from_numpy(x).to(dtype), torch.from_numpy(weights).to(dtype)

    dtypes = (torch.float32, torch.float64)
    cases = [
        case((int(rng.integers(2, 8)),), torch.float32),
        case((int(rng.integers(1, 5)), int(rng.integers(2, 5))), torch.float64),
        case(tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 3)))),
             dtypes[int(rng.integers(2))]),
    ]
    # the input classes the contract allows beyond those, drawn last so that the cases above
    # stay those of earlier runs with the same seed (docs/probes.md lists them per question):
    # a dimension of size 1; an x that requires grad and carries a stale .grad; a
    # non-contiguous (transposed) view
    n = int(rng.integers(2, 5))
    size_one = case(((1,), (1, n), (n, 1))[int(rng.integers(3))], dtypes[int(rng.integers(2))])
    tracked_x, tracked_w = case((int(rng.integers(2, 6)),), dtypes[int(rng.integers(2))])
    tracked_x.requires_grad_()
    tracked_x.grad = torch.from_numpy(rng.uniform(-1.0, 1.0, tuple(tracked_x.shape))).to(
        tracked_x.dtype)
    wide_x, wide_w = case((int(rng.integers(2, 5)), int(rng.integers(2, 5))),
                          dtypes[int(rng.integers(2))])
    return cases + [size_one, (tracked_x, tracked_w), (wide_x.t(), wide_w.t())]


def draw_twins(rng: np.random.Generator, cases: list[tuple[torch.Tensor, torch.Tensor]]
               ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """For each case, other values in the same input class (shape, dtype, strides,
    ``requires_grad``): the grader's other inputs for a second call (``call_again``)."""
    twins = []
    for x, weights in cases:
        twin, twin_w = replica(x), weights.clone()
        with torch.no_grad():
            twin.copy_(torch.from_numpy(rng.uniform(-5.0, 5.0, tuple(x.shape))))
            twin_w.copy_(torch.from_numpy(rng.uniform(-3.0, 3.0, tuple(x.shape))))
        twins.append((twin, twin_w))
    return twins


def replica(x: torch.Tensor) -> torch.Tensor:
    """A private copy of ``x`` in its input class: strides, ``requires_grad`` and ``.grad`` kept."""
    copied = x.detach().clone()  # clone keeps a transposed view's strides
    if x.requires_grad:
        copied.requires_grad_()
        if x.grad is not None:
            copied.grad = x.grad.detach().clone()
    return copied


def expected_vjp(x: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
    """``2 * x * weights`` in float64."""
    return 2.0 * x.detach().double().numpy() * weights.detach().double().numpy()


def judge_vjp(got: Any, x: torch.Tensor, weights: torch.Tensor, half: bool = True,
              sqrt: bool = True, mean: bool = True, xsign: bool = True) -> Verdict:
    """Type, then shape, then dtype, then values of ``vjp_square(x, weights)`` (``half``: an
    answer of exactly half may be named ``one-product-term``; ``sqrt``: one NaN where the
    weights are negative, ``weights-through-sqrt``; ``mean``: divided by a count of x's,
    ``vjp-averaged``; ``xsign``: x's signs lost, ``x-sign-dropped``)."""
    expected = expected_vjp(x, weights)
    rtol, atol = TOLERANCES[x.dtype]
    shown = shown_call(x)
    inputs = {"x": plain(x), "weights": plain(weights)}
    evidence = Evidence(inputs, expected.tolist(), plain(got), tolerance=tolerance_text(rtol, atol))
    if not isinstance(got, torch.Tensor):
        return Verdict(False, f"{shown} returned {describe(got)}; expected a tensor: the leaf's "
                       ".grad after backward.", "wrong-type", evidence)
    if tuple(got.shape) != tuple(x.shape):
        return Verdict(False, f"{shown} returned shape {tuple(got.shape)}; expected x's shape "
                       f"{tuple(x.shape)}: one gradient entry per entry of x."
                       f"{size_one_dropped(got, x)}", "wrong-shape", evidence)
    if got.dtype != x.dtype:
        return Verdict(False, f"{shown} returned dtype {dtype_name(got.dtype)} for "
                       f"{dtype_name(x.dtype)} inputs: {dtype_lost(got.dtype, x.dtype)}",
                       "dtype-lost", evidence)
    values = got.detach().cpu().double().numpy()
    err = array_error(values, expected)
    evidence = Evidence(inputs, expected.tolist(), values.tolist(), err, evidence.tolerance)
    if arrays_close(values, expected, rtol, atol):
        return Verdict(True, evidence=evidence)
    name, hint = _diagnose(values, x, weights, rtol, atol, half, sqrt, mean, xsign)
    return Verdict(False, f"{shown} returned {short(values)}; expected "
                   f"{short(expected, EXPECTED_DIGITS)} (largest error {error_text(err)}, "
                   f"{evidence.tolerance}). {hint}".rstrip(), name,
                   evidence)


def judge_called_again(verdict: Verdict, got: Any, x: torch.Tensor,
                       twin: tuple[torch.Tensor, torch.Tensor]) -> Verdict:
    """A wrong answer that holds the gradient of the second call (``call_again``, on ``twin``):
    the tensor returned was changed by that later call, named ``result-reused``."""
    if verdict.ok or not isinstance(got, torch.Tensor) or got.shape != twin[0].shape:
        return verdict
    values = got.detach().cpu().double().numpy()
    if not arrays_close(values, expected_vjp(*twin), *TOLERANCES.get(got.dtype, TOLERANCES[
            torch.float32])):
        return verdict
    return reused(shown_call(x), "vjp_square", "a tensor", "Return a fresh leaf's gradient each "
                  f"call, not a tensor kept between calls. {LEAF_HINT}", verdict.evidence)


def shown_call(x: torch.Tensor) -> str:
    return f"vjp_square(x {tuple(x.shape)} {dtype_name(x.dtype)}, weights)"


def _diagnose(values: np.ndarray, x: torch.Tensor, weights: torch.Tensor, rtol: float,
              atol: float, half: bool = True, sqrt: bool = True,
              mean: bool = True, xsign: bool = True) -> tuple[str | None, str]:
    """Match a wrong gradient against the known mistakes."""
    xs, ws = x.detach().double().numpy(), weights.detach().double().numpy()
    if sqrt and at_negative_weights(values, expected_vjp(x, weights), weights, rtol, atol):
        return SQRT, SQRT_HINT
    name, hint = first_match(values, expected_vjp(x, weights), [
        ("weights-ignored", 2.0 * xs,
         "This is 2*x, the gradient of v.sum(): the weights were ignored. Call "
         "v.backward(weights) so that each v[i] counts weights[i] times."),
        ("weights-applied-twice", 2.0 * xs * ws ** 2, TWICE_HINT),
        *sign_patterns(xs, ws),
        *(x_sign_patterns(xs, ws) if xsign else []),
        *mixed_weights(xs, ws),
        *transposed_patterns(xs, ws),
        (ONE_TERM, xs * ws if half else None, HALF_HINT),
        # after the half: a mean over 2 entries halves too, told when another input is not half
        *(patterns(expected_vjp(x, weights)) if mean else []),
        ("returned-value-not-grad", xs ** 2 * ws,
         "These are the weighted values of x ** 2, not a gradient: return the leaf's .grad."),
        ("returned-value-not-grad", xs ** 2,
         "These are the values of x ** 2, not a gradient: return the leaf's .grad after "
         "v.backward(weights)."),
        ("lesson-constant", LESSON_VJP if xs.shape == (2,) else None,
         "These are the lesson's numbers for x=[2, 3]: use the x and weights you are given."),
    ], lambda a, b: arrays_close(a, b, rtol, atol))
    return name, hint  # no guessed cause: the probes look for one (check_vjp)


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(x, weights)`` a probe can step out of, with the nearest input outside."""
    x, weights = args
    classes = []
    if x.requires_grad:
        classes.append(InputClass("requires-grad", (x.detach().clone(), weights),
                                  "Does an x that requires grad (or its stale .grad) reach the "
                                  "answer, or a NumPy step refuse it?"))
    if not x.is_contiguous():
        classes.append(InputClass("non-contiguous", (x.contiguous(), weights.contiguous()),
                                  "Does something assume contiguous memory (.view, .numpy, "
                                  "strides)?"))
    if 1 in x.shape:
        keep = tuple(2 if n == 1 else n for n in x.shape)
        grown = (torch.cat([x.detach()] * 2, dim=list(x.shape).index(1))
                 if x.dim() else x.detach()).reshape(keep)
        grown_w = torch.cat([weights] * 2, dim=list(x.shape).index(1)).reshape(keep)
        classes.append(InputClass("size-1-dimension", (grown, grown_w),
                                  "Does something drop a dimension of size 1 (.squeeze())?"))
    if x.dim() >= 2:  # the same entries in one dimension, as tracked (or not) as x
        classes.append(InputClass("multi-dimensional", (flat(x), weights.reshape(-1)),
                                  "Does something work on 1-D tensors only (torch.dot, "
                                  "torch.inner, a loop over x's entries, torch.func.vmap "
                                  "over the first dimension)? x may have any "
                                  "shape: y.backward(weights) works for every shape."))
    if x.dtype == torch.float32:
        classes.append(InputClass("float32", (x.detach().double(), weights.double()),
                                  "Does something assume float64?"))
    else:
        classes.append(InputClass("float64", (x.detach().float(), weights.float()),
                                  "Does something assume float32?"))
    return classes


def subject(vjp_square: Callable, x: torch.Tensor, weights: torch.Tensor) -> Subject:
    """What the probes need to explain a wrong ``vjp_square``."""
    def same(got: Any, expected: np.ndarray) -> bool:
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != expected.shape:
            return False
        rtol, atol = TOLERANCES.get(got.dtype, TOLERANCES[torch.float32])
        return arrays_close(got.detach().cpu().double().numpy(), expected, rtol, atol)

    return Subject("vjp_square", vjp_square, (x, weights), ("x", "weights"), expected_vjp,
                   same, numbers_of,
                   variations={1: lambda w: [w * 2 - 1]}, classes=input_classes)


def check_vjp(vjp_square: Callable, rng: np.random.Generator, *, points: float = 1.0) -> CheckResult:
    """Call ``vjp_square`` on fresh 1-D, 2-D and (last) 3-D inputs in float32 and float64, each call
    followed by one on other inputs of its class before its answer is read; compare values."""
    seed = seed_of(rng)
    verdict = PASS
    cases = draw_cases(rng)
    twins = draw_twins(rng, cases)  # drawn after the cases, then the repeat after the twins:
    # the first case's shape and dtype asked again with fresh values (vjp_repeat)
    cases.append(draw_repeat(rng, cases[0][0]))
    twins += draw_twins(rng, cases[-1:])
    cases.append(draw_large(rng))  # a few entries of x of 1e3-1e5 (vjp_range)
    twins += draw_twins(rng, cases[-1:])
    # drawn last: a 2-D x of unequal sizes, both over 1; the 2-D x's above may all be square,
    # where a gradient laid out in x's sizes reversed is the right one (vjp_layout)
    cases.append(draw_non_square(rng))
    twins += draw_twins(rng, cases[-1:])
    cases.append(draw_three_d(rng))  # drawn last too: a 3-D x (vjp_layout)
    twins += draw_twins(rng, cases[-1:])
    for i, ((x, weights), twin) in enumerate(zip(cases, twins)):
        # the student gets copies: the reference must not see anything their code does to x;
        # a second call on other inputs comes before the answer is read (``call_again``)
        given = (replica(x), weights.clone())
        stale = None if given[0].grad is None else given[0].grad.clone()
        got, failure, back = call_then_again(vjp_square, "vjp_square", given, twin)
        verdict = failure or judge_called_again(judge_vjp(got, x, weights), got, x, twin)
        verdict = handed_out_again(verdict, back, shown_call(x), "a tensor",
                                   "Return a fresh leaf's gradient each call.")
        # None, and the pullback in x.grad: a leaf cloned from x without detach (vjp_leaf)
        verdict = leaf_named(verdict, got, given[0], stale, expected_vjp(x, weights), TOLERANCES)
        # the right values in another layout: transposed, rearranged, x's sizes reversed
        verdict = layout_named(verdict, vjp_square, got, x, weights, TOLERANCES)
        verdict = transposed_confirmed(verdict, vjp_square, x, TOLERANCES)  # raised, 2-D
        verdict = reshaped_named(verdict, tuple(x.shape))  # raised: weights.flatten() on a 2-D x
        if verdict.misconception == ONE_TERM:  # half here: and on another drawn input?
            other = cases[1 if i == 0 else 0]
            verdict = confirmed(verdict, vjp_square, other, (replica(other[0]), other[1].clone()),
                                TOLERANCES, lambda: judge_called_again(
                                    judge_vjp(got, x, weights, half=False), got, x, twin),
                                shown_call(other[0]))
        if verdict.misconception == AVERAGED:  # a count of x's: and of another shape's?
            verdict = mean_confirmed(verdict, vjp_square, x, weights, TOLERANCES,
                                     lambda: judge_called_again(judge_vjp(
                                         got, x, weights, half=False, mean=False), got, x, twin))
        if verdict.misconception == SQRT:  # NaN at the negative weights: and negated?
            verdict = sqrt_confirmed(verdict, vjp_square, (replica(x), -weights), TOLERANCES,
                                     lambda: judge_called_again(judge_vjp(
                                         got, x, weights, sqrt=False), got, x, twin))
        if verdict.misconception == X_SIGN:  # x's signs lost: on x negated too?
            verdict = xsign_confirmed(verdict, vjp_square, x, weights, cases[:i] + cases[i + 1:],
                                      TOLERANCES, replica, lambda: judge_called_again(judge_vjp(
                                          got, x, weights, xsign=False), got, x, twin))
        verdict = precision_confirmed(verdict, vjp_square, got, x, weights)
        verdict = range_named(verdict, vjp_square, got, x, weights, TOLERANCES)  # a clamp
        if not verdict.ok:  # an answer that depends on the earlier calls with its key?
            verdict = repeat_confirmed(verdict, vjp_square, x, weights, [
                pair for pairs in zip(cases[:i], twins[:i]) for pair in pairs
                if (pair[0].shape, pair[0].dtype) == (x.shape, x.dtype)], TOLERANCES)
            verdict = overwritten_named(verdict, vjp_square, got, x, weights, TOLERANCES, replica)
            verdict = explain(verdict, subject(vjp_square, replica(x), weights), got)
            break
    return finish(QUESTION, "vjp_square_values", verdict, seed=seed, points=points,
                  passed_message="vjp_square matched 2 * x * weights on fresh shapes and dtypes.")
