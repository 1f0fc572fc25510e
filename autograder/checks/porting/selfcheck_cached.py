"""q3_gradcheck: a ``check_my_op`` that caches its verdict by ``x`` (``verdict-cached``).

gradcheck's verdict depends on the op as well as on ``x``. A student who remembers it for every
``x`` already checked (``functools.lru_cache`` keyed by x's values, a dict keyed by x's bytes or
tuple, the last result kept) answers an ``x`` seen before with the verdict of whichever op was
asked there first: the grader's rounds ask a correct and a broken op at one ``x``, so one of
them gets the other's verdict (``accepts-broken-op`` or ``op-not-called`` before this).

Asked at two fresh inputs, the correct op first at one and the broken op first at the other,
such a check gives gradcheck's verdict to the first op at each and repeats it to the second:
True, True at the first and False, False at the second. A constant answer, or a check of
another op bound before the call, does not give False to the broken op at a fresh ``x``, and a
check that follows the op gives the second op its own verdict. Both answers are to the judge's
own choice of backward: measured, not heard.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

import numpy as np
import torch

from ..describing import describe
from ..result import Verdict

NAME = "verdict-cached"

#: The failures a cached verdict shows as: the broken op accepted, the correct op rejected
#: without running it.
SHOWN_AS = ("accepts-broken-op", "op-not-called", "rejects-correct-op")

ADVICE = ("gradcheck's verdict depends on the op (my_op) as well as on x: a cache keyed by x "
          "(functools.lru_cache on x's values, a dict keyed by x's bytes, the last result "
          "kept) returns a stale verdict once my_op changes, which is what a check of a "
          "changed op is for. Run gradcheck on every call, on a float64 copy of x.")


def cached(verdict: Verdict, ask: Callable[[torch.Tensor, bool], Any],
           fresh: Callable[[], torch.Tensor]) -> Verdict:
    """``verdict`` (one of ``SHOWN_AS``) named ``verdict-cached`` when, at two ``fresh()``
    inputs, ``ask(x, broken)`` answers True then True (correct op first) at one and False then
    False (broken op first) at the other; any other verdict, or other answers, as it is. Only
    such a failing verdict costs the four calls."""
    if verdict.ok or verdict.misconception not in SHOWN_AS:
        return verdict
    calls = []
    for first_broken in (False, True):
        x = fresh()
        for broken in (first_broken, not first_broken):
            got = ask(x, broken)
            if not isinstance(got, (bool, np.bool_)):
                return verdict
            calls.append({"x": describe(x), "op": "broken" if broken else "correct",
                          "got": bool(got)})
    if [c["got"] for c in calls] != [True, True, False, False]:
        return verdict
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": "at a fresh x the first op asked gets gradcheck's verdict "
        "and the other op asked at the same x gets the same one", "calls": calls}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{shown(verdict.message)} Asked "
        f"at a fresh x with a correct my_op it returned True, then at that same x with a broken "
        f"my_op True again; at another fresh x with the broken op first it returned False, then "
        f"with the correct op False again: it repeats the verdict of the first op asked at an "
        f"x, so the verdict is cached by x. {ADVICE}"))


def shown(message: str) -> str:
    """The failing call and its answer, from the verdict's message (``check_my_op(...) with a
    ... my_op returned True``), with the answer gradcheck gives; the advice that followed it
    (a constant, an op not called) is left out: it is not the cause."""
    found = re.match(r"(.*? returned (True|False))", message, re.S)
    if found is None:
        return message.rstrip()
    return f"{found.group(1)}; gradcheck says {found.group(2) == 'False'}."
