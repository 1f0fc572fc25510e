"""q3_gradcheck, second half: does ``check_my_op`` give gradcheck's verdict at the x it is given?

The grader asks about ops wrong on part of the input space only (at negative entries, at zero
entries, off by a little), at inputs where they are right and where they are wrong, with the
same stand-in arrangement as ``selfcheck``; a wrong verdict is explained by asking again (the
lesson's backward at the same x, other tolerances) and by the probes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ...worker.stand_in import STAND_IN_BACKWARD, fresh_stand_ins, stand_in_gradient
from ..calling import call, call_observed
from ..context import call_context
from ..describing import describe, plain
from ..probes import PROBE_SEED, InputClass, Subject, explain
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import name_raised
from .gradcheck import QUESTION, draw_x
from .selfcheck import STAND_IN, autograd_off, raised_without_autograd, telling_x
from .selfcheck_flat import ROWS, draw_matrix_x, flattened
from .selfcheck_second import second_order
from .selfcheck_tolerance import OFF_BY, tolerance

#: What a raised GradcheckError means (check_my_op must return False, not raise).
RAISES = (("GradcheckError", "gradcheck-raises", "Pass raise_exception=False to gradcheck."),)

#: (stand-in op, the kind of x) asked in this order: an op wrong at negative entries where x
#: has none and where it has some, the right op at an x with a 0 entry (where only atol holds
#: and a looser eps says False), an op wrong only at 0 entries, an op off by 1e-6 that only
#: atol=1e-8 at a zero component of the gradient notices, and the same op where gradcheck's
#: rtol=1e-3 hides it (True there: a check with rtol=0 says False); then, asked last so that
#: the earlier cases' inputs stay those of earlier runs with the same seed, the right backward
#: times 1.005 (False: a check with rtol=1e-2 says True) and times 1.0005 (True: a check with
#: rtol=1e-4 says False), ``selfcheck_tolerance``; and after those an op right for a 1-D x
#: only, at a 2-D x (False: a check at x.flatten() says True), ``selfcheck_flat``; and last the
#: two edges of gradcheck's tolerances, the right backward times 1.0011 and plus 3e-8 (both
#: False: a check whose rtol or atol is a few times the contract's says True: red team rt-9).
REGION_CASES = (("negative", "positive"), ("negative", "mixed"), ("lesson", "zero"),
                ("zero", "zero"), ("offset", "zero"), ("offset", "positive"),
                ("scaled", "telling"), ("nudged", "mixed"), (ROWS, "matrix"),
                ("edged", "telling"), ("offset_edge", "zero"))
CONTRACT = {"eps": 1e-6, "atol": 1e-8}


def draw_region_x(rng: np.random.Generator, kind: str) -> torch.Tensor:
    """``draw_x``'s values (both signs), made all positive, or with one entry set to 0, or
    ``telling_x``'s (where the op without the quotient rule's second term is far off); the
    first case's x is float32 (the contract's "any floating dtype"), the others' drawn."""
    if kind == "matrix":
        return draw_matrix_x(rng)
    float32 = kind == "positive" or rng.random() < 0.5
    if kind == "telling":
        return telling_x(rng, torch.float32 if float32 else torch.float64)
    x = draw_x(rng, torch.float32 if float32 else torch.float64)
    if kind == "positive":
        return x.abs()
    if kind == "zero":
        x[int(rng.integers(0, x.numel()))] = 0.0
    return x


def reference_verdict(stand_in: str, x: torch.Tensor) -> bool:
    """gradcheck of the stand-in op at ``x`` with the contract's settings, run here."""
    op = fresh_stand_ins(
        {}, lambda x_, g: stand_in_gradient(stand_in, x_, g))["stand_in_apply"]
    leaf = x.detach().double().requires_grad_()
    return bool(torch.autograd.gradcheck(op, (leaf,), raise_exception=False, **CONTRACT))


def _zero_free(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x == 0, torch.full_like(x, 0.5), x)


def region_classes(args: tuple) -> list[InputClass]:
    (x,) = args
    out = []
    if (x == 0).any():
        out.append(InputClass("zero-entry", (_zero_free(x),),
                              "Is gradcheck run with the contract's eps=1e-6 and atol=1e-8, at x "
                              "itself? Where an entry of x is 0 the gradient's component is 0, "
                              "so only atol applies, and a larger eps or atol changes the "
                              "verdict."))
    if (x < 0).any():
        out.append(InputClass("negative", (x.abs(),),
                              "Is x changed (abs(), clamp, a fixed or random point) before "
                              "gradcheck? Check at x itself."))
    return out


def region_subject(check_my_op: Callable, stand_in: str, x: torch.Tensor) -> Subject:
    def as_number(v: Any) -> list[float] | None:
        return [float(v)] if isinstance(v, (bool, np.bool_)) else None

    return Subject("check_my_op", check_my_op, (x,), ("x",),
                   lambda x_: reference_verdict(stand_in, x_),
                   lambda got, expected: isinstance(got, (bool, np.bool_)) and got == expected,
                   as_number, classes=region_classes)


def judge_region(got: Any, expected: bool, x: torch.Tensor, stand_in: str = "") -> Verdict:
    shown = f"check_my_op({describe(x)})"
    evidence = Evidence({"x": plain(x)}, expected, plain(got))
    if not isinstance(got, (bool, np.bool_)):
        return Verdict(False, f"{shown} returned {describe(got)}; expected True or False: return "
                       "what gradcheck returns.", "wrong-type", evidence)
    if bool(got) == expected:
        return Verdict(True, evidence=evidence)
    what = OFF_BY.get(stand_in) or (
        "whose backward is right at this x (it is wrong elsewhere)" if expected
        else "whose backward is wrong at this x (it is right elsewhere)")
    return Verdict(False, f"{shown} with a my_op {what} returned {bool(got)}; gradcheck at this "
                   f"x with eps=1e-6 and atol=1e-8 says {expected}.", None, evidence)


def right_at(stand_in: str, x: torch.Tensor) -> bool:
    """Whether the stand-in's backward gives exactly the right gradient at ``x`` (its fault
    term is 0 there: ``negative`` at an x without negative entries, ``zero`` at one without
    zeros), so that no check of the backward at x itself can tell it from the lesson's op."""
    leaf, upstream = x.detach().double(), torch.tensor(1.0, dtype=torch.float64)
    return stand_in != "lesson" and torch.equal(
        stand_in_gradient(stand_in, leaf, upstream),
        stand_in_gradient("lesson", leaf, upstream))


def ask_at(check_my_op: Callable, x: torch.Tensor, backward: str) -> Any:
    """``check_my_op`` at a copy of ``x`` with the stand-in's backward ``backward`` (the
    judge's choice), its answer, or ``None`` where it failed."""
    with call_context(swap_globals=STAND_IN, **{STAND_IN_BACKWARD: backward}):
        again, failure = call(check_my_op, "check_my_op", x.clone())
    return None if failure is not None else again


def checked_elsewhere(verdict: Verdict, check_my_op: Callable, stand_in: str, x: torch.Tensor,
                      got: Any, expected: bool) -> Verdict:
    """A False (no named cause) for an op whose backward is right at ``x``: asked again at the
    same ``x``, True for the lesson's op and False again for this one. The two backwards give
    the same values at ``x`` and the forwards are one, so a check of the op at ``x`` alone
    (in any precision, with any eps or atol) answers both alike: this one ran the backward
    somewhere else too (at -x, at random or fixed inputs). Both answers are to the judge's own
    choice of backward: measured, not heard."""
    if verdict.ok or verdict.misconception is not None or not expected \
            or not isinstance(got, (bool, np.bool_)) or got or not right_at(stand_in, x):
        return verdict
    answers = []
    for backward in ("lesson", stand_in):
        again = ask_at(check_my_op, x, backward)
        if not isinstance(again, (bool, np.bool_)):
            return verdict
        answers.append(bool(again))
    if answers != [True, False]:
        return verdict
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": "checked-other-points", "established": "at the same x, True for the op right "
        "everywhere and False for this op, whose backward is the same at x",
        "calls": [{"backward": "lesson", "got": True}, {"backward": stand_in, "got": False}]}])
    return dataclasses.replace(verdict, misconception="checked-other-points", evidence=evidence,
                               message=f"{verdict.message} Asked again at this x, it returned "
                               "True for an op right everywhere and False again for this one, "
                               "whose backward gives the same values at x: it checked the op "
                               "somewhere other than x too (at -x, at random or fixed inputs). "
                               "check_my_op must check the op at the x it is given: run "
                               "gradcheck on a float64 copy of x itself, and only there.")


def true_regardless(verdict: Verdict, check_my_op: Callable, got: Any,
                    expected: bool) -> Verdict:
    """A True where gradcheck says False (no named cause yet), named ``accepts-broken-op``
    when ``check_my_op`` also says True for an op whose backward is wrong everywhere (the
    quotient rule's second term missing) at an x of the grader's own, where that error is far
    above gradcheck's tolerance: a True that follows no check (red team rt-8: a constant True
    was told "wrong for negative inputs" by the probes). Asked with the judge's own choice of
    backward: measured."""
    if verdict.ok or verdict.misconception is not None or expected \
            or not isinstance(got, (bool, np.bool_)) or not got:
        return verdict
    again = ask_at(check_my_op, telling_x(np.random.default_rng(PROBE_SEED), torch.float64),
                   "broken")
    if not isinstance(again, (bool, np.bool_)) or not again:
        return verdict
    return dataclasses.replace(verdict, misconception="accepts-broken-op", message=(
        f"{verdict.message} Asked about an op whose backward is wrong everywhere (the quotient "
        "rule's second term missing) at an x where gradcheck rejects it by far, it said True "
        "too: its True does not come from checking the op found under the names my_op and "
        "MyOp when it is called (a constant answer, or an op bound before the call, such as a "
        "default argument op=MyOp.apply). Look my_op up when check_my_op runs and return "
        "gradcheck's verdict on a float64 copy of x: torch.autograd.gradcheck(my_op, (x64,), "
        "eps=1e-6, atol=1e-8, raise_exception=False)."))


def check_check_my_op_at_x(check_my_op: Callable, rng: np.random.Generator, *,
                           points: float = 1.0) -> CheckResult:
    """``check_my_op`` asked about ops wrong on part of the input space only, at inputs where
    they are right and where they are wrong: its verdict must be gradcheck's at the x given,
    with the contract's eps and atol."""
    seed = seed_of(rng)
    verdict = PASS
    for stand_in, kind in REGION_CASES:
        x = draw_region_x(rng, kind)
        # not ``alongside`` the student's call: the judge answers the stand-in's backward
        # during that call (nested autograd); with the two at once, a full suite run at load 8
        # saw two correct answers lose points here, so they stay one after the other
        expected = reference_verdict(stand_in, x)
        with call_context(swap_globals=STAND_IN,
                          **{STAND_IN_BACKWARD: stand_in}):
            got, observed, failure = call_observed(check_my_op, "check_my_op", x.clone())
            verdict = (name_raised(failure, RAISES) if failure
                       else judge_region(got, expected, x, stand_in))
            seen = [name for name in observed.get("dtypes", []) if name != "float64"]
            off = autograd_off(observed.get("grad_modes", []), seen) if expected else None
            if expected and failure is not None:
                verdict = raised_without_autograd(verdict, seen, observed.get("grad_modes", []))
            elif off is not None and not verdict.ok and isinstance(got, (bool, np.bool_)):
                # heard, so it only words a result that already failed (docs/security.md)
                verdict = dataclasses.replace(verdict, misconception=off[0],
                                              message=f"{verdict.message} {off[1]}")
            elif not verdict.ok and expected and isinstance(got, (bool, np.bool_)) and not got \
                    and seen:
                # heard, so it only words a result that already failed (docs/security.md)
                verdict = dataclasses.replace(verdict, misconception="checking-in-float32",
                                              message=f"{verdict.message} It ran my_op in "
                                              f"{', '.join(sorted(set(seen)))}: convert x to "
                                              "float64 (x.detach().double()) and set "
                                              "requires_grad before gradcheck.")
            verdict = second_order(verdict, got, expected, observed.get("graph_backwards"))
            if not verdict.ok:
                verdict = checked_elsewhere(verdict, check_my_op, stand_in, x, got, expected)
                verdict = flattened(verdict, got, expected, x,
                                    lambda x_: reference_verdict(stand_in, x_))
                verdict = tolerance(verdict, stand_in, got, expected,
                                    lambda backward: ask_at(check_my_op, x, backward))
                verdict = true_regardless(verdict, check_my_op, got, expected)
                verdict = explain(verdict, region_subject(check_my_op, stand_in, x), got)
                break
    return finish(QUESTION, "check_my_op_at_x", verdict, seed=seed, points=points,
                  passed_message="check_my_op gave gradcheck's verdict at every x it was given.")
