"""q2_saved: counts kept per ``id(net)`` that come back for another network.

A sealed worker decodes every call's network anew and frees it after the call, so a later
network often gets the id of one that is gone: a cache keyed by ``id(net)`` then answers a new
network with the counts it kept for an earlier one. Its answers change between identical calls
(the ids do), which is not a counter that carries over: a carried-over count grows by this
call's own counts, while these are exactly another network's. Named ``counts-cached`` (as a
cache keyed by the module, ``saved_cached``) when a wrong answer is the right counts of a
different network the check gave in an earlier call, in the same mode, and not zero, or the
lesson network's tracked counts (asked by the notebook or the public test before the check).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from torch import nn

from ..probes import recorded_call
from ..result import Evidence, Verdict
from .saved_cached import CACHED, count_pair, mode_counts, rows_text
from .saved_reference import LESSON_COUNTS, predict

HINT = ("The answer was kept per network (a dict keyed by the module or by id(net)) and "
        "returned again for a network that is not the same one: Python reuses the id of an "
        "object that is gone for a new one, so a cache keyed by id(net) answers a new network "
        "with an old network's counts, and a cache keyed by the module answers its earlier "
        "batch's. What autograd saves depends on the inputs as well as the layers: the network "
        "and the batch of this call. Run the forward and count on every call, from zero.")


def layers(net: nn.Module) -> str:
    """``Sequential(Linear(3, 2), Tanh())``."""
    return "Sequential(" + ", ".join(
        f"Linear({m.in_features}, {m.out_features})" if isinstance(m, nn.Linear)
        else f"{type(m).__name__}()" for m in net) + ")"


def recycled(verdict: Verdict, seq: list[Any], net: nn.Module, inputs: torch.Tensor,
             earlier: list[tuple[nn.Module, torch.Tensor]], track: bool, shown: str) -> Verdict:
    """``verdict`` (wrong, unnamed or ``carried-over``, on ``net`` and ``inputs``, whose calls
    in modes ``track``, ``not track``, ``track`` answered ``seq``) named ``CACHED`` when one of
    those answers is wrong and equal to the counts of another network of ``earlier`` (the
    check's calls before this one) on its batch in the same mode; else ``verdict``."""
    if verdict.ok or verdict.misconception not in (None, "carried-over"):
        return verdict
    for mode, got in zip((track, not track, track), seq):
        answer, right = count_pair(got), mode_counts(predict(net, inputs), mode)
        if answer is None or answer == right or answer == (0, 0):
            continue
        other = next((f"another network, {layers(n)}, on the batch of {rows_text(b)} it was given "
                      "in an earlier call" for n, b in earlier
                      if n is not net and mode_counts(predict(n, b), mode) == answer), None)
        if other is None and mode and answer == LESSON_COUNTS:
            other = ("the lesson's network, Sequential(Linear(4, 8), ReLU(), Linear(8, 1)), on "
                     "its torch.ones(3, 4), asked before the check (by the notebook or the public "
                     "test)")
        if other is None:
            continue
        call = shown if mode == track else shown.replace(f"track={track}", f"track={mode}")
        probe = {"id": CACHED, "established": f"{answer} are the counts of {other}",
                 "calls": [recorded_call("this call", (net, inputs, mode), list(right),
                                         list(answer))]}
        return dataclasses.replace(
            verdict, misconception=CACHED,
            message=(f"{call} returned {answer}; expected {right} from the grader's own hook run "
                     f"on this network and batch. {answer} are the counts of {other}: an "
                     f"earlier call's answer came back for this one. {HINT}"),
            evidence=dataclasses.replace(
                verdict.evidence if verdict.evidence else Evidence(),
                inputs={"call": call}, expected=list(right), got=list(answer), probes=[probe]))
    return verdict
