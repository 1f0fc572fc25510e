"""q2_saved: a frozen network, whose parameters do not require grad, on a batch that does not.

``count_saved`` that calls ``net.requires_grad_(True)`` before a tracked run ("a tracked run
must build the graph", blind round zk) is right on every network whose parameters require
grad, so no earlier case shows it. On a frozen network nothing needs a backward: a tracked
forward saves nothing, ``(0, 0)``; with only the first Linear frozen, that layer saves nothing
and the layers after it save as usual. The unfreezing call counts another network (the same
layers unfrozen) and leaves the caller's network unfrozen. A hidden case, drawn last, asks a
frozen network and one whose first Linear is frozen; named ``network-unfrozen`` when the
caller's frozen parameters come back requiring grad, or the answer is the counts of the same
network unfrozen.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..describing import plain
from ..probes import changes, snapshot
from ..result import PASS, Evidence, Verdict
from .saved_cached import count_pair, mode_counts
from .saved_left_alone import judge_left_alone
from .saved_reference import draw_case, layout_copy, predict

UNFROZEN = "network-unfrozen"
#: A partly frozen network counted as if wholly frozen (blind round zs: an early ``return (0,
#: 0)`` on ``not all(p.requires_grad ...)``, ``all`` written for ``any``).
PARTLY = "partly-frozen-as-frozen"
PARTLY_HINT = ("(0, 0) is what a wholly frozen network saves, but here only the first Linear is "
               "frozen: the layers after it still require grad, so their forward saves tensors "
               "(the input each one multiplies, the outputs Sigmoid and Tanh keep). Deciding "
               "from the requires_grad flags (`if not all(p.requires_grad ...)`) treats one "
               "frozen layer as a frozen network: count what the pack hook sees instead.")
#: What an answer that unfroze the network (or counted it unfrozen) is told.
FROZEN_HINT = ("A frozen network (every parameter with requires_grad False) on inputs that do "
               "not require grad records nothing to save: no backward could ever need it, so "
               "a tracked forward packs only what the layers that still require grad (and "
               "those after them) keep. Switching requires_grad on (net.requires_grad_(True)) "
               "measures another network than the one given, and changes the caller's: "
               "leave the flags as they are and count the forward as it runs.")


def draw_frozen(rng: np.random.Generator) -> list[tuple[nn.Module, torch.Tensor]]:
    """A network of two Linear layers or more made frozen, and another with its first Linear
    frozen, each with a batch that does not require grad, in a drawn dtype."""
    dtypes = (torch.float32, torch.float64)
    frozen, batch = draw_case(rng, dtype=dtypes[int(rng.integers(2))], min_linear=2)
    frozen.requires_grad_(False)
    partly, other = draw_case(rng, dtype=dtypes[int(rng.integers(2))], min_linear=2)
    next(m for m in partly if isinstance(m, nn.Linear)).requires_grad_(False)
    return [(frozen, batch), (partly, other)]


def _unfrozen(net: nn.Module) -> nn.Module:
    return copy.deepcopy(net).requires_grad_(True)


def _switched_on(before: dict, net: nn.Module) -> list[str]:
    """The caller's frozen parameters that now require grad (as ``changes`` words them)."""
    return [c for c in changes(before, net, "net") if c.endswith(".requires_grad became True")]


def judge_frozen(count_saved: Callable, net: nn.Module, inputs: torch.Tensor, track: bool,
                 shown: str) -> Verdict:
    """``count_saved(net, inputs, track)`` on a (partly) frozen ``net``: the counts of ``net``
    as it is, and the network left frozen."""
    given = layout_copy(inputs)
    before = snapshot(net), snapshot(given)
    got, failure = call(count_saved, "count_saved", net, given, track)
    if failure is not None:
        return _backward_raised(failure, net, inputs)
    switched = _switched_on(before[0], net)
    left = judge_left_alone(net, given, before, shown)
    if switched:
        return Verdict(False, f"{shown} switched requires_grad on for the caller's frozen "
                       f"parameters: {'; '.join(switched)}. {FROZEN_HINT}", UNFROZEN,
                       left.evidence)
    if not left.ok:
        return left
    expected = mode_counts(predict(net, inputs), track)
    answer = count_pair(got)
    if answer == expected:
        return PASS
    evidence = Evidence(inputs={"call": shown}, expected=list(expected), got=plain(got))
    message = (f"{shown} returned {answer if answer else plain(got)}; expected {expected} from "
               "the grader's own hook run on this network, whose parameters are "
               f"{_which(net)}.")
    if answer is None:
        return Verdict(False, message, "wrong-type", evidence)
    if answer == (0, 0) and any(p.requires_grad for p in net.parameters()):
        return Verdict(False, f"{message} {PARTLY_HINT}", PARTLY, evidence)
    unfrozen = mode_counts(predict(_unfrozen(net), inputs), track)
    if answer != unfrozen:
        return Verdict(False, message, None, evidence)
    return Verdict(False, f"{message} These are the counts of the same network unfrozen "
                   f"{unfrozen}. {FROZEN_HINT}", UNFROZEN, evidence)


#: What a call that raised because nothing requires grad on a frozen network is told.
BACKWARD_HINT = ("On this frozen network nothing requires grad, so a backward after the forward "
                 "raises: counting what autograd saves needs only the forward, no backward.")


#: What any other call that raised on a wholly frozen network is told (blind round zp: an
#: ``assert calls > 0`` after a tracked forward).
SAVES_NOTHING_HINT = ("This network is frozen (every parameter with requires_grad False) and "
                      "its input does not require grad, so a tracked forward saves nothing and "
                      "(0, 0) is the answer: code that expects something saved (an assert that "
                      "the count is above 0, a division by the count, indexing the first saved "
                      "tensor) fails on it. Count what the hook sees and return it as it is.")


def _backward_raised(failure: Verdict, net: nn.Module, inputs: torch.Tensor) -> Verdict:
    """``failure`` with what it missed: a backward on a frozen network, or (on a wholly frozen
    one) code that expected the forward to save something."""
    if "does not require grad" in failure.message:
        hint = BACKWARD_HINT
    elif not inputs.requires_grad and not any(p.requires_grad for p in net.parameters()):
        hint = SAVES_NOTHING_HINT
    else:
        return failure
    return Verdict(False, f"{failure.message} {hint}", failure.misconception,
                   failure.evidence, failure.traceback)


def _which(net: nn.Module) -> str:
    flags = [p.requires_grad for p in net.parameters()]
    return ("all frozen (requires_grad False)" if not any(flags)
            else "frozen in the first Linear (requires_grad False)")


def check_frozen(count_saved: Callable, cases: list[tuple[nn.Module, torch.Tensor]],
                 track: bool, describe_call: Callable[..., str]) -> tuple[Verdict, Any]:
    """Each frozen case in turn; the first failing verdict with its (net, inputs)."""
    for net, inputs in cases:
        verdict = judge_frozen(count_saved, net, inputs, track, describe_call(net, inputs, track))
        if not verdict.ok:
            return verdict, (net, inputs)
    return PASS, None
