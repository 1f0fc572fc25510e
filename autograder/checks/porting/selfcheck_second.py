"""q3_gradcheck: a ``check_my_op`` that also checks the second derivative (blind round za).

``gradcheck(...) and gradgradcheck(...)`` ("be thorough: the backward must itself
differentiate correctly") rejects a correct op whose backward is not itself differentiable:
one that saves values computed in the forward without a graph, as the grader's stand-in does
(its backward is answered as data). gradgradcheck runs the op's backward with a graph
recorded (``create_graph=True``: grad mode on inside the backward); the stand-in counts such
backwards (``stand_in.fresh_stand_ins``: ``observed["graph_backwards"]``). That count is
heard from the student's process, so it only names a result that already failed: a False for
a correct op (docs/security.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..result import Verdict

NAME = "second-order-checked"

ADVICE = ("check_my_op also ran my_op's backward with a graph recorded (create_graph=True), "
          "as gradgradcheck does to check the second derivative: gradcheck checks the first "
          "derivative, which is what the contract asks about, and a correct backward need not "
          "be twice differentiable (one that saves values computed in the forward without a "
          "graph is not, and the grader's op is not), so the second check rejects a correct "
          "op. Return gradcheck's verdict alone, without gradgradcheck.")

#: Where rejects-correct-op's own advice starts (``selfcheck.judge_correct_op``).
GENERIC = ": use gradcheck with eps=1e-6"
#: The names a False for a correct op gets without this evidence (``selfcheck``).
RENAMED = (None, "rejects-correct-op")


def second_order(verdict: Verdict, got: Any, expected: bool, graph_backwards: Any) -> Verdict:
    """``verdict`` for a correct op at which ``check_my_op`` returned ``got``, named
    ``second-order-checked`` when it is False where gradcheck says ``expected`` True, no other
    cause is named, and the stand-in heard a backward run with grad mode on."""
    if verdict.ok or not expected or verdict.misconception not in RENAMED \
            or not isinstance(got, (bool, np.bool_)) or got \
            or not (isinstance(graph_backwards, int) and graph_backwards > 0):
        return verdict
    said = verdict.message.rstrip()
    if GENERIC in said:  # rejects-correct-op's own advice, which this one replaces
        said = said.split(GENERIC)[0] + "."
    return dataclasses.replace(verdict, misconception=NAME, message=f"{said} {ADVICE}")
