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

from typing import Any, Callable

import numpy as np
import torch

from ..calling import call_observed, describe, plain
from ..context import call_context
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from ...worker.arrangements import STAND_IN_BACKWARD
from .gradcheck import QUESTION, draw_x


#: Rounds per dtype, each a correct and a broken op in a drawn order.
ROUNDS = 3


def run_with_op(check_my_op: Callable, x: torch.Tensor, broken: bool
                ) -> tuple[Any, Verdict | None, list[torch.dtype]]:
    """Call ``check_my_op(x)`` with a stand-in op in its ``MyOp``/``my_op`` globals (the
    lesson's op, or one whose backward lacks the quotient term); return the dtypes the
    stand-in was run in too (heard from the worker: for messages only)."""
    with call_context(swap_globals={"MyOp": "stand_in", "my_op": "stand_in_apply"},
                      **{STAND_IN_BACKWARD: "broken" if broken else "lesson"}):
        got, observed, failure = call_observed(check_my_op, "check_my_op", x.clone())
    seen = [getattr(torch, name) for name in observed.get("dtypes", [])
            if isinstance(getattr(torch, name, None), torch.dtype)]
    return got, failure, seen


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
                       "my_op (or MyOp.apply) itself.", "op-not-called", evidence)
    if any(dtype != torch.float64 for dtype in seen):
        return Verdict(False, f"{shown} returned False: it ran my_op in "
                       f"{', '.join(sorted({str(d) for d in seen}))}. Checking in float32 fails "
                       "even for a correct op: convert x to float64 (x.detach().double()) and "
                       "set requires_grad before gradcheck.", "checking-in-float32", evidence)
    return Verdict(False, f"{shown} returned False: use gradcheck with eps=1e-6 and atol=1e-8 "
                   "on a float64 copy of x that requires grad.", "rejects-correct-op", evidence)


def judge_broken_op(got: Any, failure: Verdict | None, x: torch.Tensor) -> Verdict:
    """With a broken backward, ``check_my_op`` must return False, not raise."""
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
    return Verdict(False, f"{shown} returned {describe(got)}; expected False. Make check_my_op "
                   "return gradcheck's result rather than a constant.", "accepts-broken-op",
                   evidence)


def check_check_my_op(check_my_op: Callable, rng: np.random.Generator, *,
                      points: float = 1.0) -> CheckResult:
    """``check_my_op`` on fresh inputs (float32 or float64, no grad): True for the grader's
    correct op, False for its broken one."""
    seed = seed_of(rng)
    # which op goes first in each round is drawn apart from the inputs (they stay those of
    # earlier runs with the same seed): an answer that follows a pattern of calls instead of
    # checking passes all ROUNDS rounds of both dtypes once in 2**(2*ROUNDS) seeds
    order = np.random.default_rng(None if seed is None else [seed, 1])
    verdict = PASS
    for dtype in (torch.float32, torch.float64):
        x = draw_x(rng, dtype)
        for _ in range(ROUNDS):
            runs = {}
            for broken in sorted((False, True), key=lambda _: order.random()):
                runs[broken] = run_with_op(check_my_op, x, broken=broken)
            got, failure, seen = runs[False]
            verdict = failure or judge_correct_op(got, seen, x)
            if verdict.ok:
                got, failure, _ = runs[True]
                verdict = judge_broken_op(got, failure, x)
            if not verdict.ok:
                break
        if not verdict.ok:
            break
    return finish(QUESTION, "check_my_op", verdict, seed=seed, points=points,
                  passed_message="check_my_op accepted a correct op and rejected a broken one.")
