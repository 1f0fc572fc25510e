"""q3_gradcheck, second half: does the student's ``check_my_op`` tell a right op from a wrong one?

The grader has a correct and a broken stand-in op put in place of ``MyOp``/``my_op`` in the
globals the student's function reads (``call_context(swap_globals=...)``, applied wherever the
student's code runs), calls it, and the student's names are restored whatever happens.

What the judge measures and what it only hears (docs/security.md): points go on the answer,
True for the correct op and False for the broken one, against which op the judge itself
asked for. The dtypes the stand-ins record are taken in the student's process (a cell can
rewrite them), so they only choose the wording of a result that already failed (returned
False for a correct op): they never decide points.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ...worker.stand_in import STAND_IN_BACKWARD, STAND_IN_SCALE
from ..calling import call_observed
from ..context import call_context
from ..describing import describe, plain
from ..probes import side_effects
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import name_raised, sentence
from .gradcheck import QUESTION, draw_x
from .selfcheck_cached import cached
from .selfcheck_scaled import draw_scaled, judge_scaled_op
from .selfcheck_second import second_order

#: Rounds per dtype, each a correct and a broken op in a drawn order.
ROUNDS = 3
#: The half-precision dtypes asked about last (their inputs drawn last, so the earlier ones stay
#: those of earlier runs with the same seed): the contract's x is any floating dtype.
HALF_DTYPES = (torch.float16, torch.bfloat16)
#: What raising for a half-precision x means.
HALF_RAISES = (("BFloat16", "numpy-bfloat16",
                "x.numpy() has no bfloat16 (NumPy has no such dtype): make the float64 copy in "
                "torch, x.detach().double().requires_grad_(), which takes any floating dtype."),
               ("", "raises-for-half-precision",
                "x may arrive in any floating dtype, float16 and bfloat16 included: make the "
                "float64 copy with x.detach().double().requires_grad_()."))
#: The student's op names, both the one stand-in for a call (its backward the judge's choice).
STAND_IN = {"MyOp": "stand_in", "my_op": "stand_in_apply"}

#: What gradcheck raises for inputs none of which requires grad (before it runs the op).
NO_INPUT_REQUIRES_GRAD = "gradcheck expects at least one input tensor to require gradient"
#: How to make the copy: it is cut off from the caller's graph without any no_grad.
THE_COPY = ("x.detach().double().requires_grad_() (detach() already cuts the copy off from "
            "the caller's graph: no torch.no_grad() is needed for it)")
#: What rejecting a correct op means where autograd recorded none of its calls.
NO_GRAPH = (", so my_op recorded no graph: gradcheck has no analytical gradient to compare with "
            "the numerical one and rejects every op, right or wrong (it returns False, or "
            "raises without raise_exception=False). ")
#: What a check whose op ran without autograd is told, by how the stand-in was called
#: (``stand_in.GRAD_MODES``, the first of these found): (misconception, message).
AUTOGRAD_OFF = {
    "inference_mode": (
        "check-without-autograd",
        "It ran my_op under torch.inference_mode(), where autograd records nothing" + NO_GRAPH
        + "Call gradcheck with autograd on, outside any torch.inference_mode() or "
        f"torch.no_grad() block, on a copy made with {THE_COPY}."),
    "no_grad": (
        "check-without-autograd",
        "It ran my_op with autograd off (inside `with torch.no_grad():`, under a "
        "@torch.no_grad() decorator or torch.set_grad_enabled(False))" + NO_GRAPH
        + "Call gradcheck with autograd on, outside any torch.no_grad() block, on a copy "
        f"made with {THE_COPY}."),
    "inference_tensor": (
        "check-without-autograd",
        "It ran my_op on a copy made under torch.inference_mode(): autograd can neither record "
        "an op on such an inference tensor nor save it for backward, so gradcheck fails for "
        "every op, right or wrong. Make the copy with autograd on, outside inference_mode: "
        f"{THE_COPY}."),
    "input_without_grad": (
        "copy-without-requires-grad",
        "It ran my_op on a tensor that does not require grad (a copy made without "
        "requires_grad_(), or detached after it)" + NO_GRAPH + "Hand gradcheck a float64 "
        f"copy that requires grad, {THE_COPY}, and let it pass that copy to my_op as it is."),
}


class Seen(list):
    """The dtypes the stand-in was run in (heard), with ``modes``: how autograd met each of
    its calls (``stand_in.grad_mode``: ``recording``, ``no_grad``...), heard too."""

    def __init__(self, dtypes: list[torch.dtype], modes: list[str] | None = None):
        super().__init__(dtypes)
        self.modes = list(modes or [])


def autograd_off(modes: list[str], dtypes: list[str]) -> tuple[str, str] | None:
    """The misconception and advice for a check none of whose calls of the stand-in autograd
    recorded (``modes``: ``stand_in.grad_mode`` of each), or ``None``; ``dtypes``: those
    other than float64 it ran in, told too (each of the two fails a correct op)."""
    if not modes or "recording" in modes:
        return None
    mode = next((m for m in AUTOGRAD_OFF if m in modes), None)
    if mode is None:
        return None
    name, told = AUTOGRAD_OFF[mode]
    also = (f" It also ran my_op in {', '.join(sorted(set(dtypes)))}: gradcheck needs float64."
            if dtypes else "")
    return name, told + also


def raised_without_autograd(failure: Verdict, seen: list, modes: list[str]) -> Verdict:
    """A correct op's check that raised, named ``autograd_off`` when the stand-in's calls say
    so, or ``copy-without-requires-grad`` when gradcheck refused an input that requires no
    grad (before running the op); other failures as they are. Heard (``seen``, ``modes``):
    it only words a result that already failed."""
    if failure.misconception not in ("raised", "gradcheck-raises"):
        return failure
    found = autograd_off(modes, [str(d).replace("torch.", "") for d in seen
                                 if d not in (torch.float64, "float64")])
    if found is None and NO_INPUT_REQUIRES_GRAD in failure.message:
        found = ("copy-without-requires-grad", "gradcheck refused the input before running "
                 "my_op: none of its inputs requires grad (a copy made without "
                 "requires_grad_(), or detached after it). Pass gradcheck a float64 copy that "
                 f"requires grad: {THE_COPY}.")
    if found is None:
        return failure
    return dataclasses.replace(failure, misconception=found[0],
                               message=f"{sentence(failure.message)} {found[1]}")


def run_with_op(check_my_op: Callable, x: torch.Tensor, broken: bool = False,
                scale: tuple[float, float] | None = None
                ) -> tuple[Any, Verdict | None, Seen, int]:
    """Call ``check_my_op(x)`` with a stand-in op in its ``MyOp``/``my_op`` globals (the
    lesson's op, or one whose backward lacks the quotient term as ``broken`` says; with
    ``scale``, ``(factor, offset)``: that op times the factor, its forward shifted by the
    offset, ``selfcheck_scaled``); return the
    dtypes the stand-in was run in and the tensors autograd saved during the call too (heard
    from the worker: for messages only). A call
    that changed the caller's x (its values, requires_grad, .grad) fails as
    ``modified-input``: the contract checks a float64 copy."""
    arg = x.clone()
    before = side_effects.snapshot(arg)
    scaled = {} if scale is None else {STAND_IN_SCALE: list(scale)}
    with call_context(swap_globals=STAND_IN, count_saved_tensors=True, **scaled,
                      **{STAND_IN_BACKWARD: "broken" if broken else "lesson"}):
        got, observed, failure = call_observed(check_my_op, "check_my_op", arg)
    seen = Seen([getattr(torch, name) for name in observed.get("dtypes", [])
                 if isinstance(getattr(torch, name, None), torch.dtype)],
                observed.get("grad_modes", []))
    seen.graph_backwards = observed.get("graph_backwards", 0)  # heard (selfcheck_second)
    changed = side_effects.changes(before, arg, "x")
    if failure is None and changed:
        failure = Verdict(False, f"check_my_op({describe(x)}) changed the caller's tensor: "
                          f"{'; '.join(changed)}. Run gradcheck on a float64 copy and leave x "
                          "as it was: x.detach().to(torch.float64).requires_grad_() (for a "
                          "float64 x, x.double() is x itself, so requires_grad_() on it marks "
                          "the caller's tensor).", "modified-input", Evidence({"x": plain(x)}))
    return got, failure, seen, int(observed.get("saved_tensors", 0))


def judge_correct_op(got: Any, seen: list[torch.dtype], x: torch.Tensor) -> Verdict:
    """With a correct op, ``check_my_op`` must return True. ``seen`` (heard) is read only
    after the answer has failed, to name the likely mistake."""
    shown = f"check_my_op({describe(x)}) with a correct my_op"
    evidence = Evidence({"x": plain(x)}, True, plain(got))
    if not isinstance(got, (bool, np.bool_)):
        return Verdict(False, f"{shown} returned {describe(got)}; expected True or False: return "
                       "what gradcheck returns.", "wrong-type", evidence)
    if got:
        return Verdict(True, evidence=evidence)
    if not seen:
        return Verdict(False, f"{shown} returned False without calling my_op: run gradcheck on "
                       "my_op itself.", "op-not-called", evidence)
    off = autograd_off(getattr(seen, "modes", []),
                       [str(d).replace("torch.", "") for d in seen if d != torch.float64])
    if off is not None:  # heard: it only words a result that already failed
        return Verdict(False, f"{shown} returned False. {off[1]}", off[0], evidence)
    if any(dtype != torch.float64 for dtype in seen):
        return Verdict(False, f"{shown} returned False: it ran my_op in "
                       f"{', '.join(sorted({str(d) for d in seen}))}. Checking in float32 fails "
                       "even for a correct op: convert x to float64 (x.detach().double()) and "
                       "set requires_grad before gradcheck.", "checking-in-float32", evidence)
    return Verdict(False, f"{shown} returned False: use gradcheck with eps=1e-6 and atol=1e-8 "
                   "on a float64 copy of x that requires grad.", "rejects-correct-op", evidence)


def judge_broken_op(got: Any, failure: Verdict | None, x: torch.Tensor,
                    seen: list[torch.dtype] | None = None, saved: int = 0) -> Verdict:
    """With a broken backward, ``check_my_op`` must return False, not raise. ``seen`` and
    ``saved`` (heard) only word the message: True after autograd ran (``saved`` tensors)
    without the stand-in ever run means another op was checked, one bound before the call."""
    shown = f"check_my_op({describe(x)}) with a my_op whose backward is wrong"
    if failure is not None:
        if "GradcheckError" in failure.message:
            return Verdict(False, f"{shown} raised GradcheckError instead of returning False: "
                           "pass raise_exception=False to gradcheck.", "gradcheck-raises",
                           failure.evidence, failure.traceback)
        return failure
    evidence = Evidence({"x": plain(x)}, False, plain(got))
    if isinstance(got, (bool, np.bool_)) and not got:
        return Verdict(True, evidence=evidence)
    if seen is not None and not seen and saved > 0 and got is True:
        return Verdict(False, f"{shown} returned True without running the op found under the "
                       "names my_op and MyOp when it was called (the grader had put a broken "
                       "one there): it checked another op, bound before the call, such as a "
                       "default argument (op=MyOp.apply) or a reference kept when its cell "
                       "ran. Look my_op up inside check_my_op, when it runs.", "op-bound-early",
                       evidence)
    # nothing ran for a half-precision x, after float32 and float64 x were checked (round zs)
    if seen is not None and not seen and saved == 0 and got is True \
            and x.dtype in HALF_DTYPES:
        return Verdict(False, f"{shown} returned True without running my_op for this x (a "
                       f"{str(x.dtype).replace('torch.', '')} x): a verdict it never checked. "
                       "Run gradcheck for every x, whatever its dtype: convert it to float64 "
                       "first (x.detach().double().requires_grad_()).", "op-not-called",
                       evidence)
    return Verdict(False, f"{shown} returned {describe(got)}; expected False. Make check_my_op "
                   "return gradcheck's result rather than a constant.", "accepts-broken-op",
                   evidence)


def check_check_my_op(check_my_op: Callable, rng: np.random.Generator, *,
                      points: float = 1.0) -> CheckResult:
    """``check_my_op`` on fresh inputs (float32 or float64, then float16 and bfloat16, no
    grad): True for the grader's correct op, False for its broken one."""
    seed = seed_of(rng)
    # which op goes first in each round is drawn apart from the inputs (they stay those of
    # earlier runs with the same seed): an answer that follows a pattern of calls instead of
    # checking passes all ROUNDS rounds of both dtypes once in 2**(2*ROUNDS) seeds
    order = np.random.default_rng(None if seed is None else [seed, 1])
    verdict = PASS
    for dtype in (torch.float32, torch.float64):
        x = telling_x(rng, dtype)
        for _ in range(ROUNDS):
            runs = {}
            for broken in sorted((False, True), key=lambda _: order.random()):
                runs[broken] = run_with_op(check_my_op, x, broken=broken)
            got, failure, seen, _ = runs[False]
            verdict = (raised_without_autograd(failure, seen, seen.modes) if failure
                       else second_order(judge_correct_op(got, seen, x), got, True,
                                         seen.graph_backwards))
            if verdict.ok:
                got, failure, seen, saved = runs[True]
                verdict = judge_broken_op(got, failure, x, seen, saved)
            if not verdict.ok:
                verdict = cached(verdict, lambda x_, broken: run_with_op(check_my_op, x_,
                                                                         broken)[0],
                                 lambda: telling_x(rng, dtype))
                break
        if not verdict.ok:
            break
    if verdict.ok:
        verdict = judge_half_precision(check_my_op, [telling_x(rng, d) for d in HALF_DTYPES])
    if verdict.ok:  # drawn apart, so that the inputs above stay those of earlier runs
        x, scale = draw_scaled(np.random.default_rng(None if seed is None else [seed, 2]),
                               telling_x)
        got, failure, seen, _ = run_with_op(check_my_op, x, scale=scale)
        verdict = (raised_without_autograd(failure, seen, seen.modes) if failure
                   else judge_scaled_op(got, x, scale))
    return finish(QUESTION, "check_my_op", verdict, seed=seed, points=points,
                  passed_message="check_my_op accepted a correct op and rejected a broken one, at every x "
                    "it was given.")


def telling_x(rng: np.random.Generator, dtype: torch.dtype) -> torch.Tensor:
    """``draw_x``'s values in ``dtype``, drawn again while the broken op's gradient there is
    within 5 % of the right one's largest entry: where ``S = sum(x**3)`` is near 0 (values
    close to opposites, or made exact opposites by rounding to 8 bits) the missing
    quotient-rule term is below gradcheck's own rtol=1e-3, and a correct ``check_my_op``
    rightly says True for the broken op (one grading seed in a few thousand drew such an x)."""
    for _ in range(100):
        x = draw_x(rng).to(dtype)
        v = x.double()
        scale = 1 + v.abs().sum()
        if abs(float((v ** 3).sum())) / scale ** 2 >= 0.05 * float((3 * v ** 2 / scale).max()):
            break
    return x


def judge_half_precision(check_my_op: Callable, xs: list[torch.Tensor]) -> Verdict:
    """``check_my_op`` at float16 and bfloat16 inputs (values away from 0, exact at their
    precision): gradcheck at ``x.double()`` says True for the correct op and False for the
    broken one; raising for such an x is named."""
    for x in xs:
        for broken in (False, True):
            got, failure, seen, saved = run_with_op(check_my_op, x, broken=broken)
            if failure is not None and failure.misconception == "raised":
                return name_raised(failure, HALF_RAISES)
            verdict = (judge_broken_op(got, failure, x, seen, saved) if broken
                       else raised_without_autograd(failure, seen, seen.modes) if failure
                       else judge_correct_op(got, seen, x))
            if not verdict.ok:
                return verdict
    return PASS
