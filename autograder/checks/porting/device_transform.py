"""q4_device: ``predict``'s output passed through a final transform (blind round zx).

The contract asks ``predict`` for the model's output as it is, ``model(batch)`` on the device.
A ``predict`` that turns it into probabilities or labels first ("a prediction is a probability
for each class": ``torch.softmax(output, -1)``, ``log_softmax``, ``sigmoid``, ``tanh``,
``relu``, ``argmax``, probabilities thresholded) returns something the grader can make
itself: on the failing path only, each transform is applied to the grader's expected output
and compared with the answer (``output-transformed``). A transform that gives the identity's
values on the drawn data (relu of an all-positive output) is never claimed, and when several
transforms give the answer (a one-output model's softmax is all 1.0; its log_softmax, and a
relu or a threshold of an all-negative output, are all 0), every one that fits is told.

On ``meta`` nothing holds values, so nothing is named there.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ..describing import describe, expected_text
from ..result import Verdict
from .common import allclose

NAME = "output-transformed"

#: Looser than the checks' own tolerance: the student's transform of a float32 output computed
#: on a GPU differs from the grader's of its CPU reference by more than the output itself.
#: Naming needs only to tell transforms apart, and the identity is excluded at this tolerance.
RTOL, ATOL = 1e-4, 1e-5

ADVICE = ("predict must return the model's output as it is, model(batch) on the device: a "
          "softmax or sigmoid belongs in the loss (cross_entropy and "
          "binary_cross_entropy_with_logits take the raw output) or to whoever reads the "
          "probabilities, and labels to whoever needs them.")


def transforms(expected: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    """What each final transform a student might apply makes of ``expected`` (the grader's
    output, computed in float64 on the CPU), with how to say it."""
    e = expected.detach().cpu().double()
    last = e.dim() - 1

    def dim(d: int) -> str:
        return "dim=-1)" if d == last else "dim=0) (across the batch)" if d == 0 else f"dim={d})"

    made = [(f"softmax(output, {dim(d)}", torch.softmax(e, d)) for d in range(e.dim())]
    made += [(f"log_softmax(output, {dim(d)}", torch.log_softmax(e, d)) for d in range(e.dim())]
    made += [("sigmoid(output)", torch.sigmoid(e)), ("tanh(output)", torch.tanh(e)),
             ("relu(output)", torch.relu(e))]
    if e.dim() >= 1 and e.numel():
        labels = e.argmax(-1)
        made += [("argmax(output, dim=-1) (a class label per row)", labels),
                 ("argmax(output, dim=-1, keepdim=True) (a class label per row)",
                  labels.unsqueeze(-1)),
                 ("one_hot(argmax(output, dim=-1)) (a class label per row)",
                  torch.nn.functional.one_hot(labels, e.shape[-1]).double()),
                 ("sigmoid(output) > 0.5 (probabilities thresholded; the same as output > 0)",
                  (e > 0).double()),
                 ("softmax(output, dim=-1) > 0.5 (probabilities thresholded)",
                  (torch.softmax(e, -1) > 0.5).double())]
    return made


def fitting(got: Any, reference: torch.Tensor, unlike: torch.Tensor | None = None) -> list[str]:
    """How to say each transform of ``reference`` that ``got`` is, leaving out any that gives
    ``reference`` itself (the identity fits as well there) and, with ``unlike``, any that
    gives the same of ``unlike`` as of ``reference`` (the data cannot tell the two apart)."""
    if not isinstance(got, torch.Tensor) or got.device.type == "meta" or got.is_complex() \
            or reference.device.type == "meta":
        return []
    answer = got.detach().cpu().double()
    ref = reference.detach().cpu().double()
    others = dict(transforms(unlike)) if unlike is not None else {}
    found = []
    for said, made in transforms(ref):
        if made.shape != answer.shape or not allclose(answer, made, RTOL, ATOL):
            continue
        if made.shape == ref.shape and allclose(made, ref, RTOL, ATOL):
            continue  # the identity gives these values too
        other = others.get(said)
        if other is not None and allclose(made, other, RTOL, ATOL):
            continue
        found.append(said)
    return found


def said(found: list[str]) -> str:
    """The transforms found, as one phrase."""
    if len(found) == 1:
        return found[0]
    return (f"any of {', '.join(found[:-1])} or {found[-1]} (on these values they give the "
            "same answer, so any of them may be what your predict computes)")


def transformed(verdict: Verdict, got: Any, expected: torch.Tensor, shown: str) -> Verdict:
    """``verdict``, named ``output-transformed`` when it failed on the answer's values, shape
    or dtype and ``got`` is a final transform of ``expected`` (the grader's output)."""
    if verdict.ok or verdict.misconception not in (None, "wrong-shape", "wrong-dtype"):
        return verdict
    found = fitting(got, expected)
    if not found:
        return verdict
    head = (verdict.message.rstrip() if verdict.misconception is None else
            f"{shown} is {describe(got)}; expected the model's output, "
            f"{expected_text(expected)}.")
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": NAME, "established": f"the answer is {' or '.join(found)} of the grader's output",
        "calls": []}])
    return dataclasses.replace(verdict, misconception=NAME, evidence=evidence, message=(
        f"{head} That is {said(found)}, with output = model(batch): the model's output passed "
        f"through a final transform, not the output itself. {ADVICE}"))
