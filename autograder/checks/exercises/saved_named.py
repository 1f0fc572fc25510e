"""q2_saved: a short count named as one known group of saved tensors left out, confirmed on
networks of the grader's own (``named_by_groups``; the groups are ``saved_groups``'s).

One network can fit several groups (the output and the batch of the same shape; the output and
an activation saved twice), so a group is named only when two more networks, one that ends in
an activation and one that ends in a Linear, on which every group gives its own count, single it
out, and only where the network's output is among the groups that fit: the other kinds have
their own confirmations.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..result import Verdict
from .saved_groups import Group, difference, fitting, saved_groups
from .saved_patterns import EVERY_PACK, OUTPUT, matches
from .saved_reference import ACTIVATIONS, Predictions, layout_copy
from .saved_subject import pair_problem

#: The groups that are a known mistake, by group key: named with that mistake's own hint.
NAMED = {
    "output": OUTPUT,
    "leaves": "leaves-left-out",
    "weights": "weights-left-out",
    "weights-and-leaves": "weights-and-leaves-left-out",
    "repeats": "unique-storages",
    "one-element": "small-tensors-skipped",
}
#: The seed of the confirming networks' values.
CONFIRM_SEED = 20265


def confirming(activation: type[nn.Module]) -> list[tuple[nn.Sequential, torch.Tensor]]:
    """Linear(3, 4), ``activation``, Linear(4, 1), ``activation`` on a batch of 5 rows, and the
    same without its last activation: on the first every group gives its own count (the output,
    (5, 1), is no other group's size; nothing saved is non-contiguous, so the saved weights are
    not the non-contiguous tensors too), on the second the output is not saved at all."""
    rng = np.random.default_rng(CONFIRM_SEED)
    with torch.random.fork_rng(devices=[]):
        net = nn.Sequential(nn.Linear(3, 4), activation(), nn.Linear(4, 1), activation())
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    inputs = torch.from_numpy(rng.standard_normal((5, 3))).float()
    return [(net, inputs), (nn.Sequential(*list(net)[:-1]), inputs)]


def _layers(net: nn.Sequential) -> str:
    return "Sequential(" + ", ".join(
        f"Linear({m.in_features}, {m.out_features})" if isinstance(m, nn.Linear)
        else f"{type(m).__name__}()" for m in net) + ")"


def _without(tracked: tuple[int, int], groups: list[Group], key: str) -> tuple[int, int]:
    group = next((g for g in groups if g.key == key), None)
    return tracked if group is None else (tracked[0] - group.count, tracked[1] - group.nbytes)


def named_by_groups(verdict: Verdict, count_saved: Callable,
                    cases: list[tuple[nn.Module, torch.Tensor, Predictions]], failing: int,
                    got: Any, track: bool) -> Verdict:
    """``verdict`` (a wrong tracked ``got`` on ``cases[failing]``, no mistake named) named when
    its difference from the right count is exactly the saved tensor that is the network's output
    and, maybe, other groups too (``saved_groups``), and two calls on networks of the grader's
    own single out one group that is a known mistake, consistent with the earlier networks'
    right answers; else ``verdict`` as it was."""
    if verdict.ok or verdict.misconception is not None or not track:
        return verdict
    net, inputs, pred = cases[failing]
    tracked, groups = saved_groups(net, inputs)
    diff = difference(got, tracked)
    if tracked != tuple(pred.tracked) or diff is None or diff[0] < 0:
        return verdict
    keys = [g.key for g in fitting(groups, diff)]
    if "output" not in keys:
        return verdict
    # the earlier networks were answered right: a group left out there must be empty
    for earlier_net, earlier_inputs, _ in cases[:failing]:
        _, earlier = saved_groups(earlier_net, earlier_inputs)
        keys = [k for k in keys if all(g.key != k for g in earlier)]
    last = [m for m in net.modules() if not list(m.children())][-1:]
    activation = type(last[0]) if last and isinstance(last[0], ACTIVATIONS) else nn.Tanh
    answers, shown = [], []
    for other_net, other_inputs in confirming(activation):
        answer, failure = call(count_saved, "count_saved", other_net, layout_copy(other_inputs),
                               True)
        if failure is not None or pair_problem(answer):
            return verdict
        answers.append(tuple(int(v) for v in answer))
        shown.append((other_net, other_inputs, saved_groups(other_net, other_inputs)))
    agree = [k for k in keys if all(_without(right, other, k) == answer for
                                    (_, _, (right, other)), answer in zip(shown, answers))]
    if len(agree) != 1 or agree[0] not in NAMED:
        return verdict
    name = NAMED[agree[0]]
    hint = dict(matches(tuple(int(v) for v in got), pred, track)).get(name)
    if hint is None:
        return verdict
    calls = "; ".join(
        f"{_layers(n)} on a batch {tuple(x.shape)} returned {answer}, "
        + (f"not {right}" if answer != right else "right" if any(
            g.key == "output" for g in other) else "right, as its output is not saved")
        for (n, x, (right, other)), answer in zip(shown, answers))
    if agree[0] == "output":
        hint = hint.replace(f" {EVERY_PACK}", "")
        confirm = (f" On networks of the grader's own, {calls}: the same tensor left out, and "
                   f"nothing else. {EVERY_PACK}")
    else:
        confirm = (" (Told apart from the network's output, the same size on this network, on "
                   f"networks of the grader's own: {calls}.)")
    base = verdict.message.rstrip()
    return dataclasses.replace(verdict, misconception=name,
                               message=f"{base} {hint}{confirm}")
