"""What a call left on its arguments, and its answer, as the worker reports them to the judge:
each tensor or module argument's state after the call (``wire.UNCHANGED`` where it is exactly
what the judge sent), the parameters a call replaced, the hooks it left, and the answer's
encoding with the arguments whose memory it views.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from . import wire


def args_after(args: list, before: dict[int, list], sent: list | None = None) -> list:
    """The state of each tensor/module argument after the call (the judge mirrors it),
    with the names of module parameters that are new objects now (``module.to`` may
    replace them). An argument whose state is exactly what the judge sent for it (``sent``:
    the request's encoded arguments), with no hook added and no parameter replaced, is
    ``wire.UNCHANGED`` instead: the judge leaves its own object alone then, as it does for a
    full state equal to what it sent, and neither side writes or reads that state again
    (most calls change none of their arguments)."""
    after = []
    for i, arg in enumerate(args):
        given = sent[i] if sent is not None and i < len(sent) else None
        if isinstance(arg, nn.Module):
            state = wire.encode(arg)
            state["replaced"] = [name for name, p in arg.named_parameters()
                                 if before.get(id(p)) != ["before", i, name]]
            # hooks the call left on the module (it arrived without any): the judge
            # mirrors their number, for the checks that score what a call changed
            state["hooks"] = {name: count for name, m in arg.named_modules()
                              if (count := hook_count(m))}
            # and on its parameters (gradient hooks: red team rt-8's make_optimizer zeroed
            # every gradient with them)
            state["param_hooks"] = {name: count for name, p in arg.named_parameters()
                                    if (count := tensor_hook_count(p))}
            after.append(unless_unchanged(state, given))
        elif isinstance(arg, torch.Tensor):
            state = wire.encode(arg)
            if tensor_hook_count(arg):  # hooks the call left on it (it arrived without)
                state["hooks"] = tensor_hook_count(arg)
            after.append(unless_unchanged(state, given))
        elif isinstance(arg, list):  # a plain list the call may have changed in place
            try:
                value = wire.encode(arg)
            except wire.WireError:  # grown past what the wire carries: left as it was
                after.append(None)
                continue
            after.append(wire.UNCHANGED if given is not None and value == given else
                         {"t": "list-after", "value": value})
        else:
            after.append(None)
    return after

def encode_result(result: Any, args: list, before: dict[int, list]) -> dict:
    if isinstance(result, torch.optim.Optimizer):
        # identity matters: is each parameter the module's own, now or before the call?
        refs = {**before, **param_refs(args, "now")}
        return wire.encode_optimizer(result, 0, refs)
    items = result if isinstance(result, (list, tuple)) else [result]
    encoded = wire.encode(result)
    aliases = [alias_of(item, args) for item in items]
    if any(a is not None for a in aliases):
        encoded["aliases"] = aliases if isinstance(result, (list, tuple)) else aliases[0]
    return encoded


def unless_unchanged(state: dict, given: Any) -> dict:
    """``wire.UNCHANGED`` for a tensor's or module's ``state`` that is ``given`` (what the judge
    sent) with no hook added and no parameter replaced; else ``state`` itself."""
    if given is None or any(state.get(key) for key in wire.CHANGES):
        return state
    if {k: v for k, v in state.items() if k not in wire.CHANGES} == given:
        return wire.UNCHANGED
    return state


def param_refs(args: list, when: str) -> dict[int, list]:
    """``id(parameter) -> [when, argument index, name]`` for every module argument."""
    return {id(p): [when, i, name] for i, a in enumerate(args) if isinstance(a, nn.Module)
            for name, p in a.named_parameters()}


def alias_of(item: Any, args: list) -> int | None:
    """The index of the tensor argument whose memory ``item`` (an array) views: exactly, or
    in another arrangement (squeezed, flattened, transposed: the judge finds which, in
    ``running.judge.aliasing``)."""
    if not isinstance(item, np.ndarray):
        return None
    for i, arg in enumerate(args):
        if isinstance(arg, torch.Tensor) and arg.device.type == "cpu":
            view = arg.detach().numpy()
            if view.__array_interface__["data"][0] == item.__array_interface__["data"][0] \
                    and view.strides == item.strides and view.shape == item.shape:
                return i
            if np.may_share_memory(item, view):
                return i
    return None


def tensor_hook_count(tensor: torch.Tensor) -> int:
    """Backward and post-accumulate-grad hooks registered on ``tensor``."""
    return sum(len(getattr(tensor, name, None) or {}) for name in (
        "_backward_hooks", "_post_accumulate_grad_hooks"))


def hook_count(module: nn.Module) -> int:
    """Forward, forward-pre and backward hooks registered on ``module`` itself."""
    return sum(len(getattr(module, name, None) or {}) for name in (
        "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"))
