"""q2_saved: which saved tensors a wrong count left out (or counted twice).

A count that is short in both the number of tensors and the bytes left some saved tensors out.
Which ones is found by matching the difference against groups of the tensors the grader's own
hook run saved, each group a property a count can test: the network's output (the result a last
Tanh, Sigmoid or ReLU saves is the output itself), the batch (a leaf), the saved weights
(``weight.t()``, sharing a parameter's storage), the second saves of a tensor saved twice, every
tensor sharing its storage with another, the saved results of operations or their saved inputs,
what one module type saves, non-float tensors, tensors of one element, non-contiguous ones
(``saved_groups``).

One network can fit several groups (the output and the batch of the same shape; the output and
an activation saved twice), so a group is named only when networks of the grader's own, one that
ends in an activation and one that ends in a Linear, on which every group gives its own count,
single it out (``named_by_groups``; only where the network's output is among the groups that fit:
the other kinds have their own confirmations). Otherwise the message says what was established:
the difference, and every group it is exactly the size of (``established``), never a cause.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..result import Verdict
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


@dataclass(frozen=True)
class Group:
    """Saved tensors of one kind, in one forward.

    Attributes:
        key: what kind (``"output"``, ``"leaves"``, ``"module:Tanh"``...): the same key on
            another network is the same property.
        what: the group in words, for the message.
        members: the indices of its tensors, in pack order.
        count: how many tensors.
        nbytes: their ``numel() * element_size()``, added up.
    """

    key: str
    what: str
    members: tuple[int, ...]
    count: int
    nbytes: int


@dataclass
class _Saved:
    tensor: torch.Tensor
    leaf: bool
    module: int | None


def _record(net: nn.Module, inputs: torch.Tensor) -> tuple[list[_Saved], torch.Tensor,
                                                             list[tuple[nn.Module, Any, Any]]]:
    """One tracked forward of the grader's ``net`` under a pack hook: each saved tensor
    (detached) with whether it was a leaf and which of ``net``'s layers saved it (a Sequential
    is run layer by layer; another module as one), the output, and each layer with its input
    and output (detached)."""
    saved: list[_Saved] = []
    layers: list[tuple[nn.Module, Any, Any]] = []
    current: list[int | None] = [None]

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(_Saved(tensor.detach(), tensor.is_leaf, current[0]))
        return saved[-1].tensor  # detached: no cycle through the graph (saved_reference)

    x = layout_copy(inputs)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), \
            torch.enable_grad():
        if isinstance(net, nn.Sequential):
            for index, layer in enumerate(net):
                current[0] = index
                y = layer(x)
                layers.append((layer, x.detach(), y.detach()))
                x = y
        else:
            x = net(x)
    return saved, x.detach(), layers


def _storage(t: torch.Tensor) -> int | None:
    return t.untyped_storage().data_ptr() if t.numel() else None


def _shape(t: torch.Tensor) -> str:
    return f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')}"


def saved_groups(net: nn.Module, inputs: torch.Tensor) -> tuple[tuple[int, int], list[Group]]:
    """The tracked count of ``net`` on ``inputs`` and the groups of its saved tensors (every
    non-empty one, in a fixed order of keys)."""
    saved, out, layers = _record(net, inputs)
    tensors = [s.tensor for s in saved]
    params = {_storage(p) for p in net.parameters()}
    storages = [_storage(t) for t in tensors]
    seen: set[int | None] = set()
    repeats = []
    for i, ptr in enumerate(storages):
        if ptr is not None and ptr in seen:
            repeats.append(i)
        seen.add(ptr)

    def role(i: int, which: int) -> bool:  # 1: the layer's output, 0: its input
        module = saved[i].module
        if module is None:
            return False
        other = layers[module][1 + which]
        return isinstance(other, torch.Tensor) and storages[i] is not None \
            and storages[i] == _storage(other)

    output = [i for i, ptr in enumerate(storages) if ptr is not None and ptr == _storage(out)]
    by = sorted({type(layers[s.module][0]).__name__ for s in saved if s.module is not None})
    owner = ({type(layers[saved[i].module][0]).__name__ for i in output
              if saved[i].module is not None} or {"the last layer"})
    leaves = [i for i, s in enumerate(saved) if s.leaf and storages[i] not in params]
    weights = [i for i, ptr in enumerate(storages) if ptr in params]
    kinds: list[tuple[str, str, list[int]]] = [
        ("output", f"{' and '.join(sorted(owner))}'s saved result, which is the network's "
         f"output", output),
        ("leaves", "the batch the first Linear saves (a leaf)", leaves),
        ("weights", "the Linears' saved weights (weight.t(), a view of each weight)", weights),
        ("weights-and-leaves", "the saved weights and the saved batch together",
         sorted(set(leaves) | set(weights))),
        ("repeats", "the second save of each tensor saved twice (an activation's result, saved "
         "again by the next Linear)", repeats),
        ("one-element", "the saved tensors of one element",
         [i for i, t in enumerate(tensors) if t.numel() == 1]),
        ("non-contiguous", "the non-contiguous saved tensors",
         [i for i, t in enumerate(tensors) if not t.is_contiguous()]),
        ("shared", "every saved tensor that shares its storage with another saved tensor (both "
         "saves of an activation's result)",
         [i for i, ptr in enumerate(storages) if ptr is not None and storages.count(ptr) > 1]),
        ("results", "the saved results of the layers (what an activation returns and keeps)",
         [i for i in range(len(saved)) if role(i, 1)]),
        ("layer-inputs", "the saved inputs of the layers (the batch and each hidden activation "
         "a Linear keeps)", [i for i in range(len(saved)) if role(i, 0)]),
        *((f"module:{name}", f"everything the {name} layers save",
           [i for i, s in enumerate(saved) if s.module is not None
            and type(layers[s.module][0]).__name__ == name]) for name in by),
        ("non-float", "the saved tensors that are not floating point",
         [i for i, t in enumerate(tensors) if not t.is_floating_point()]),
    ]
    nbytes = [t.numel() * t.element_size() for t in tensors]
    groups = [Group(key, f"{what}: {', '.join(_shape(tensors[i]) for i in members)}",
                    tuple(members), len(members), sum(nbytes[i] for i in members))
              for key, what, members in kinds if members]
    return (len(tensors), sum(nbytes)), groups


def _difference(got: Any, tracked: tuple[int, int]) -> tuple[int, int] | None:
    """``tracked - got`` where both the count and the bytes differ the same way, else None."""
    if pair_problem(got):
        return None
    n, b = tracked[0] - int(got[0]), tracked[1] - int(got[1])
    return (n, b) if (n > 0 and b > 0) or (n < 0 and b < 0) else None


def _fitting(groups: list[Group], difference: tuple[int, int]) -> list[Group]:
    """The groups whose count and bytes are exactly the difference (left out when positive,
    counted twice when negative)."""
    n, b = (abs(v) for v in difference)
    return [g for g in groups if (g.count, g.nbytes) == (n, b)]


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
    difference = _difference(got, tracked)
    if tracked != tuple(pred.tracked) or difference is None or difference[0] < 0:
        return verdict
    keys = [g.key for g in _fitting(groups, difference)]
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


def established(verdict: Verdict, net: nn.Module, inputs: torch.Tensor, got: Any,
                track: bool) -> Verdict:
    """``verdict`` (a wrong tracked ``got``, no mistake named) with what its difference from
    the right count is exactly the size of, among the groups of saved tensors; as it was where
    it is none or the count and the bytes do not differ the same way."""
    if verdict.ok or verdict.misconception is not None or not track or pair_problem(got):
        return verdict
    tracked, groups = saved_groups(net, inputs)
    difference = _difference(got, tracked)
    if difference is None:
        return verdict
    fitting, seen = [], set()
    for g in _fitting(groups, difference):  # one set of tensors said once, by its first kind
        if g.members not in seen:
            seen.add(g.members)
            fitting.append(g)
    if not fitting:
        return verdict
    n, b = (abs(v) for v in difference)
    fewer = difference[0] > 0
    tensors = f"{n} saved tensor{'s' if n != 1 else ''} and {b} bytes"
    said = f"{tensors} {'fewer' if fewer else 'more'} than the grader's count"
    twice = "" if fewer else ", counted a second time"
    if len(fitting) == 1:
        what = (f"exactly as many as {fitting[0].what}{twice}. The sizes match; that alone "
                "does not show these are the ones.")
    else:
        what = ("exactly as many as each of these: " + "; ".join(g.what for g in fitting)
                + f"{twice}. The sizes match; which of them it is, if any, this network does "
                "not tell.")
    return dataclasses.replace(verdict, message=f"{verdict.message.rstrip()} The answer has "
                                                f"{said}: {what}")
