"""q3_gradcheck: does the student's ``check_my_op`` check ``my_op``, the op the contract names?

Elsewhere one stand-in is both ``MyOp`` and ``my_op``, so a ``check_my_op`` that checks
``MyOp.apply`` (or an op of its own) cannot be told from one that checks ``my_op``. Here the
two names are two stand-ins whose backwards differ, one right and one broken, in both
assignments: the answer must be gradcheck's verdict on ``my_op``. Which stand-in is broken is
the judge's alone (``arrangements.STAND_IN_BACKWARD`` as ``{label: kind}``); the worker's
request names only the labels, the same in both rounds (docs/security.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch

from ..calling import describe, plain
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .gradcheck import QUESTION, draw_x
from .common import name_raised
from .selfcheck import RAISES, run_with_op

#: ``MyOp`` and ``my_op`` as two stand-ins.
TWO_OPS = {"MyOp": "stand_in", "my_op": "stand_in_b_apply"}
#: Whether ``my_op``'s backward is right in a round; ``MyOp``'s is the other.
ROUNDS = (True, False)


def choice(my_op_right: bool) -> dict[str, str]:
    """The judge's backward for each stand-in: ``my_op`` right and ``MyOp`` broken, or the
    reverse."""
    right, wrong = "lesson", "broken"
    return {"stand_in_b": right if my_op_right else wrong,
            "stand_in": wrong if my_op_right else right}


def judge_answers(answers: dict[bool, Any], x: torch.Tensor) -> Verdict:
    """``answers``: what ``check_my_op(x)`` returned with ``my_op`` right (True) and broken
    (False), ``MyOp`` the other each time. Answers that follow ``MyOp`` checked another op."""
    shown = f"check_my_op({describe(x)})"
    evidence = Evidence({"x": plain(x)}, {"my_op right": True, "my_op broken": False},
                        {("my_op right" if k else "my_op broken"): plain(v)
                         for k, v in answers.items()})
    if any(not isinstance(v, (bool, np.bool_)) for v in answers.values()):
        return Verdict(False, f"{shown} returned {describe(answers.get(True))} with a right "
                       f"my_op and {describe(answers.get(False))} with a broken one; expected "
                       "True or False: return what gradcheck returns.", "wrong-type", evidence)
    if all(bool(v) == right for right, v in answers.items()):
        return PASS
    if all(bool(v) != right for right, v in answers.items()):
        return Verdict(False, f"{shown} returned False with a right my_op (and MyOp.apply "
                       "broken) and True with a broken my_op (and MyOp.apply right): it checked "
                       "another op than my_op. Run gradcheck on my_op itself, the name the "
                       "contract gives: torch.autograd.gradcheck(my_op, (x64,), ...).",
                       "checks-another-op", evidence)
    return Verdict(False, f"{shown} returned {bool(answers[True])} with a right my_op and "
                   f"{bool(answers[False])} with a broken one (MyOp.apply the other each time): "
                   "return gradcheck's verdict on my_op.", None, evidence)


def check_check_my_op_which_op(check_my_op: Callable, rng: np.random.Generator, *,
                               points: float = 1.0) -> CheckResult:
    """``check_my_op`` with ``my_op`` and ``MyOp`` two stand-ins, one right and one broken
    (both ways, in a drawn order, float32 and float64 inputs): its verdict must be ``my_op``'s."""
    seed = seed_of(rng)
    order = np.random.default_rng(None if seed is None else [seed, 2])
    verdict = PASS
    for dtype in (torch.float32, torch.float64):
        x = draw_x(rng, dtype)
        answers, seen = {}, set()
        for right in sorted(ROUNDS, key=lambda _: order.random()):
            got, failure, dtypes = run_with_op(check_my_op, x, swap=TWO_OPS,
                                               choice=choice(right))
            if failure is not None:
                verdict = name_raised(failure, RAISES)
                break
            answers[right], seen = got, seen | {str(d).replace("torch.", "") for d in dtypes
                                                 if d != torch.float64}
        verdict = verdict if not verdict.ok else judge_answers(answers, x)
        if not verdict.ok and verdict.misconception is None and seen and not answers[True]:
            # heard, so it only words a result that already failed (docs/security.md)
            verdict = dataclasses.replace(verdict, misconception="checking-in-float32",
                                          message=f"{verdict.message} It ran the ops in "
                                          f"{', '.join(sorted(seen))}: convert x to float64 "
                                          "(x.detach().double()) before gradcheck.")
        if not verdict.ok:
            break
    return finish(QUESTION, "check_my_op_which_op", verdict, seed=seed, points=points,
                  passed_message="check_my_op gave my_op's verdict when MyOp.apply was "
                  "another op.")
