"""q2_microbatch: an answer kept between calls on the same objects (red team rt-5: a cache
keyed by ``w.data_ptr()``), told when the grader's third call, after it changed ``w``'s values
in place as a training step does, gets the answer of the call before back; and one kept for
the same ``w`` and a batch of the same shape (red team rt-9: keyed by ``w``'s values and
``X.shape``), told when the fourth call, the next batch at the same ``w``, gets it back."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ..result import Verdict

NAME = "answer-cached"


def _stale(verdict: Verdict, got: Any, previous: Any, head: str, cause: str) -> Verdict:
    """A wrong answer of a later call (``head`` says which), named ``answer-cached`` with
    ``cause`` when it is exactly ``previous``, the call before's, else ``second-call-differs``."""
    if verdict.misconception is not None:
        return verdict
    cached = (isinstance(got, torch.Tensor) and isinstance(previous, torch.Tensor)
              and got.shape == previous.shape and torch.equal(got, previous))
    head = f"{head}: {verdict.message.rstrip()} "
    if not cached:
        return dataclasses.replace(verdict, message=head + "The calls before gave the right "
                                   "answer: something they left behind changed this one.",
                                   misconception="second-call-differs")
    return dataclasses.replace(verdict, message=head + cause, misconception=NAME)


def after_step(verdict: Verdict, got: Any, previous: Any) -> Verdict:
    """A wrong answer of the third call on the same objects, after the grader changed ``w``'s
    values in place: ``answer-cached`` when it is the answer of the call before (the gradient
    at ``w``'s old values)."""
    return _stale(verdict, got, previous, "Called a third time on the same objects, after w's "
                  "values were changed in place (as a training step changes them)", (
                      "It is exactly the answer of the call before, the gradient at w's old "
                      "values: an answer kept between calls for the same w (a cache keyed by "
                      "id(w) or w.data_ptr()) goes stale when w changes in place, as it does at "
                      "every training step. Compute the gradient from w's values at each call."))


def next_batch(verdict: Verdict, got: Any, previous: Any) -> Verdict:
    """A wrong answer of the fourth call, a new ``X`` and ``y`` of the same shapes at the same
    ``w``: ``answer-cached`` when it is the answer of the call before (the previous batch's)."""
    return _stale(verdict, got, previous, "Called a fourth time, on the next batch (a new X and "
                  "y of the same shapes) at the same w", (
                      "It is exactly the answer of the call before, for the previous batch: an "
                      "answer kept for the same w and a batch of the same shape (a cache keyed "
                      "by w and X.shape) is wrong for every new batch a data loader hands over. "
                      "Compute the gradient from X and y at each call."))
