"""q2_saved: which saved tensors a wrong count left out (or counted twice).

A count that is short in both the number of tensors and the bytes left some saved tensors out.
Which ones is found by matching the difference against groups of the tensors the grader's own
hook run saved, each group a property a count can test: the network's output (the result a last
Tanh, Sigmoid or ReLU saves is the output itself), the batch (a leaf), the saved weights
(``weight.t()``, sharing a parameter's storage), the second saves of a tensor saved twice, every
tensor sharing its storage with another, the saved results of operations or their saved inputs,
what one module type saves, non-float tensors, tensors of one element, non-contiguous ones
(``saved_groups``).

One network can fit several groups (the output and the batch of the same shape), so this module
says what was established: the difference, and every group it is exactly the size of
(``established``), never a cause. Naming a group as a known mistake, confirmed on networks of
the grader's own, is ``saved_named.named_by_groups``'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..result import Verdict
from .saved_reference import layout_copy
from .saved_subject import pair_problem


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


def difference(got: Any, tracked: tuple[int, int]) -> tuple[int, int] | None:
    """``tracked - got`` where both the count and the bytes differ the same way, else None."""
    if pair_problem(got):
        return None
    n, b = tracked[0] - int(got[0]), tracked[1] - int(got[1])
    return (n, b) if (n > 0 and b > 0) or (n < 0 and b < 0) else None


def fitting(groups: list[Group], difference: tuple[int, int]) -> list[Group]:
    """The groups whose count and bytes are exactly the difference (left out when positive,
    counted twice when negative)."""
    n, b = (abs(v) for v in difference)
    return [g for g in groups if (g.count, g.nbytes) == (n, b)]


def established(verdict: Verdict, net: nn.Module, inputs: torch.Tensor, got: Any,
                track: bool) -> Verdict:
    """``verdict`` (a wrong tracked ``got``, no mistake named) with what its difference from
    the right count is exactly the size of, among the groups of saved tensors; as it was where
    it is none or the count and the bytes do not differ the same way."""
    if verdict.ok or verdict.misconception is not None or not track or pair_problem(got):
        return verdict
    tracked, groups = saved_groups(net, inputs)
    diff = difference(got, tracked)
    if diff is None:
        return verdict
    fits, seen = [], set()
    for g in fitting(groups, diff):  # one set of tensors said once, by its first kind
        if g.members not in seen:
            seen.add(g.members)
            fits.append(g)
    if not fits:
        return verdict
    n, b = (abs(v) for v in diff)
    fewer = diff[0] > 0
    tensors = f"{n} saved tensor{'s' if n != 1 else ''} and {b} bytes"
    said = f"{tensors} {'fewer' if fewer else 'more'} than the grader's count"
    twice = "" if fewer else ", counted a second time"
    if len(fits) == 1:
        what = (f"exactly as many as {fits[0].what}{twice}. The sizes match; that alone "
                "does not show these are the ones.")
    else:
        what = ("exactly as many as each of these: " + "; ".join(g.what for g in fits)
                + f"{twice}. The sizes match; which of them it is, if any, this network does "
                "not tell.")
    return dataclasses.replace(verdict, message=f"{verdict.message.rstrip()} The answer has "
                                                f"{said}: {what}")
