"""q1's ``reuse_raises``: the outcome of the lesson's experiment (a second ``backward()`` through
one stored result), compared with what this torch build does."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..describing import describe, plain
from ..result import CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .accumulation import QUESTION


def observe_reuse_raises() -> bool:
    """Run the experiment in this torch build: does a second backward on one result raise?"""
    p = torch.tensor(2.0, requires_grad=True)
    q = p ** 2
    q.backward()
    try:
        q.backward()
    except RuntimeError:
        return True
    return False


#: why an experiment finds no error where a plain second backward raises (blind round zzp: the
#: experiment's first backward kept the graph)
RETAINED = (" An experiment whose first backward passed retain_graph=True kept the saved values, so "
            "its second backward succeeded: the question is about a plain backward().")


def check_reuse_raises(reuse_raises: Any, rng: np.random.Generator, *,
                       points: float = 1.0) -> CheckResult:
    """Compare the student's ``reuse_raises`` with what the grader observes in this torch."""
    seed = seed_of(rng)
    truth = observe_reuse_raises()
    evidence = Evidence(expected=truth, got=plain(reuse_raises))
    if not isinstance(reuse_raises, bool):
        verdict = Verdict(False, f"reuse_raises is {describe(reuse_raises)}; it must be True or "
                          "False, the outcome of your experiment.", "wrong-type", evidence)
    elif reuse_raises != truth:
        verdict = Verdict(
            False,
            f"reuse_raises is {reuse_raises}, but a second backward() on one stored result of "
            f"p ** 2 {'does' if truth else 'does not'} raise RuntimeError here: after the first "
            "backward the saved values are freed. Try it: q = p ** 2; q.backward(); q.backward()."
            + (RETAINED if truth else ""), "reuse-misjudged", evidence)
    else:
        verdict = Verdict(True, evidence=evidence)
    return finish(QUESTION, "reuse_raises", verdict, seed=seed, points=points,
                  passed_message="reuse_raises matches what this torch build does.")
