"""Checks for the ``autograd-exercises`` assignment."""

from __future__ import annotations

from functools import partial

from ..registry import Check, index
from . import accumulation

ASSIGNMENT = "autograd-exercises"

CHECKS = index([
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_uncleared", ("square_grads",),
          "square_grads(p0, repeats, clear=False) on fresh leaf values (negative, fractional, "
          "large) and repeat counts: the gradient must grow by 2*p0 each backward.",
          partial(accumulation.check_square_grads, clear=False)),
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_cleared", ("square_grads",),
          "square_grads(p0, repeats, clear=True) on fresh leaf values and repeat counts: every "
          "gradient must be 2*p0.",
          partial(accumulation.check_square_grads, clear=True)),
    Check(ASSIGNMENT, accumulation.QUESTION, "reuse_raises", ("reuse_raises",),
          "reuse_raises against the grader's own run of the experiment in this torch build.",
          accumulation.check_reuse_raises),
])
