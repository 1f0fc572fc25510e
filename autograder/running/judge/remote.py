"""Stand-ins for the student's names on the judge's side of the wall.

A function of the student's becomes a ``RemoteFunction`` (made by ``namespace``'s
``RemoteNamespace``, the ``env`` that otter's test functions receive) that sends its arguments
as data and decodes what comes back. After each call the judge's tensor and module arguments
are updated to the state the worker reported, so a check that inspects its own arguments (a
stale ``.grad``, the caller's tensor modified in place, a model left in training mode) sees
what the student's code did.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ...checks import context
from ...checks.calling import UnreadableAnswer
from ...worker import stand_in, wire
from .aliasing import rebuilt_view
from .handles import handles_of
from .reports import clean_observed, remote_error, worker_text
from .worker_client import WorkerClient


class RemoteFunction:
    """Calls ``target`` (``"square_grads"``, ``"MyOp.apply"``) in the worker."""

    is_remote = True

    def __init__(self, client: WorkerClient, target: str, backward: Any = None,
                 per_argument: bool = False):
        self.client, self.target, self.backward = client, target, backward
        self.per_argument = per_argument
        self.__name__ = target.rsplit(".", 1)[-1]
        self.last_observed: dict = {}

    def with_backward(self, upstream: Any, per_argument: bool = False) -> "RemoteFunction":
        """The same function, followed by ``result.backward(upstream)`` in the worker; with
        ``per_argument``, called once per argument (all forwards first, then each result's
        backward in the arguments' order: graphs alive together)."""
        return RemoteFunction(self.client, self.target, upstream, per_argument)

    def __getattr__(self, name: str) -> "RemoteFunction":
        if name.startswith("__"):
            raise AttributeError(name)
        return RemoteFunction(self.client, f"{self.target}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = context.current()
        message = {"op": "call", "target": self.target,
                   "args": [wire.encode(a) for a in args],
                   "kwargs": {k: wire.encode(v) for k, v in kwargs.items()},
                   "context": context.for_worker(request)}
        handles = handles_of(self.client)
        keep = [handles.of(a) for a in args]  # the same objects there, call after call
        if any(handle is not None for handle in keep):
            message["keep"] = keep
        if self.backward is not None:
            message["backward"] = wire.encode(self.backward)
            if self.per_argument:
                message["per_argument"] = True
        reply = self.client.request(message, self.client.limits.call_timeout,
                                    answer=answerer(request))
        observed = reply.get("observed")
        self.last_observed = clean_observed(observed if isinstance(observed, dict) else {})
        before = {(i, name): p for i, a in enumerate(args) if isinstance(a, nn.Module)
                  for name, p in a.named_parameters()}
        budget = wire.Budget()  # one for the reply: the arguments' states and the result
        mirror_arguments(args, reply.get("args_after"), budget, message["args"])
        if "error" in reply:
            raise remote_error(reply["error"])
        return decode_result(reply.get("ok"), args, before, budget)


def answerer(request: dict) -> Any:
    """What answers the worker's questions during a call under ``request``: the stand-in op's
    backward, computed here from the choice the judge kept (``None``: no question expected).
    Each question is untrusted data, decoded within a budget; a malformed one gets an error
    that says nothing of the choice."""
    kind = request.get(stand_in.STAND_IN_BACKWARD)
    if kind is None:
        return None
    asked = 0

    def answer(question: Any) -> dict:
        # the judge's CPU is outside the worker's one-core cap: a call that loops on the
        # stand-in's backward with large tensors had the judge work beside its worker (red
        # team rt-s5: 1.5 cores for one submission); gradcheck on the checks' inputs asks a
        # handful of questions of a few elements each
        nonlocal asked
        asked += 1
        if asked > MAX_QUESTIONS:
            return {"error": f"the grader answers at most {MAX_QUESTIONS} backward questions "
                             "of a stand-in op in one call"}
        try:
            backward, budget = question["backward"], wire.Budget()
            x = wire.decode_tensor(backward["x"], budget=budget)
            grad_output = wire.decode_tensor(backward["grad_output"], budget=budget)
            if x.numel() > MAX_QUESTION_ELEMENTS or grad_output.numel() > MAX_QUESTION_ELEMENTS:
                return {"error": f"the grader answers backward questions of a stand-in op on "
                                 f"tensors of at most {MAX_QUESTION_ELEMENTS} elements"}
            return {"ok": wire.encode(stand_in.stand_in_gradient(kind, x, grad_output))}
        except (wire.WireError, KeyError, TypeError, ValueError, RuntimeError):
            return {"error": "not a backward question the grader can answer"}

    return answer


#: Backward questions of the stand-in op the judge answers in one call, and their size
MAX_QUESTIONS, MAX_QUESTION_ELEMENTS = 1000, 10_000


def decode_result(data: Any, args: tuple, before: dict, budget: wire.Budget) -> Any:
    try:
        if isinstance(data, dict) and data.get("t") == "optimizer":
            return wire.decode_optimizer(data, 0,
                                         resolve=lambda ref: _own_param(args, before, ref),
                                         budget=budget)
        value = wire.decode(data, budget=budget)
    except wire.WireError as exc:  # the decoder raises nothing else
        raise UnreadableAnswer(str(exc)) from None
    aliases = data.get("aliases") if isinstance(data, dict) else None
    if aliases is None:
        return value
    if isinstance(value, (list, tuple)) and isinstance(aliases, list):
        items = [_aliased(v, a, args) for v, a in zip(value, aliases)]
        return items if isinstance(value, list) else tuple(items)
    return _aliased(value, aliases, args)


def _aliased(value: Any, index: Any, args: tuple) -> Any:
    """An array the worker reported as sharing argument ``index``'s memory: make it a view of
    the judge's own argument, so that writing to it changes that argument, as it did there
    (``aliasing``: a reshaped or transposed view too)."""
    if not (isinstance(index, int) and 0 <= index < len(args) and isinstance(value, np.ndarray)):
        return value
    arg = args[index]
    if isinstance(arg, torch.Tensor) and arg.device.type == "cpu":
        view = rebuilt_view(value, arg.detach().numpy())
        if view is not None:
            return view
    return value


def _own_param(args: tuple, before: dict, ref: Any) -> Any:
    """The judge's own parameter object for a worker reference: ``["now", i, name]`` is the
    module argument's parameter after the call, ``["before", i, name]`` the one it had before
    (a different object when the call replaced it, as ``module.to`` may)."""
    if not (isinstance(ref, list) and len(ref) == 3 and ref[0] in ("now", "before")
            and isinstance(ref[1], int) and 0 <= ref[1] < len(args)
            and isinstance(args[ref[1]], nn.Module)):
        return None
    if ref[0] == "before":
        return before.get((ref[1], worker_text(ref[2], 200)))
    return dict(args[ref[1]].named_parameters()).get(worker_text(ref[2], 200))


def mirror_arguments(args: tuple, after: Any, budget: wire.Budget,
                     sent: list | None = None) -> None:
    """Give the judge's tensor/module arguments the state the worker reported after the call.
    An argument the worker reports exactly as the judge sent it (``sent``: the encoded
    arguments) is left alone: the judge's own object, its ``grad`` and its parameters stay
    the ones the checks hold, as they would where the call runs in-process."""
    if not isinstance(after, list):
        return
    for i, (arg, state) in enumerate(zip(args, after)):
        if sent is not None and i < len(sent) and _unchanged(sent[i], state):
            continue
        try:
            if isinstance(arg, torch.Tensor) and isinstance(state, dict):
                _mirror_tensor(arg, wire.decode_tensor(state, budget=budget))
                _mirror_tensor_hooks(arg, state.get("hooks"))
            elif isinstance(arg, list) and isinstance(state, dict) \
                    and state.get("t") == "list-after":
                value = wire.decode(state.get("value"), budget=budget)
                if isinstance(value, list):
                    arg[:] = value  # the caller's list as the call left it, in place
            elif isinstance(arg, nn.Module) and isinstance(state, dict):
                _mirror_module(arg, state, budget)
        except (wire.WireError, RuntimeError, TypeError, ValueError, KeyError):
            continue  # a state we cannot mirror leaves the judge's copy as it was




def _unchanged(sent: Any, state: Any) -> bool:
    """Whether the worker's state of an argument after the call is the encoding the judge
    sent for it (values, grad, flags, a module's layers and training flag), with no hook
    added and no parameter replaced."""
    if not isinstance(state, dict):
        return False
    if state == wire.UNCHANGED:  # the worker's word for "what you sent"
        return True
    if state.get("t") == "list-after":
        return state.get("value") == sent
    if any(state.get(key) for key in wire.CHANGES):
        return False
    return {k: v for k, v in state.items() if k not in wire.CHANGES} == sent


def _mirror_tensor(arg: torch.Tensor, state: torch.Tensor) -> None:
    if state.device.type != "meta" and arg.device.type != "meta" and state.shape == arg.shape:
        with torch.no_grad():
            if state.dtype != arg.dtype:
                # the call gave the worker's tensor another dtype (``x.data = x.data.double()``):
                # the judge's tensor takes it too, so that the checks see what the caller would
                arg.data = state.detach()
            elif _layout(state) != _layout(arg):
                # the call gave the worker's tensor another layout (``t.data = t.data
                # .contiguous()``, ``set_``): the judge's tensor gets new memory too, so that
                # a view is cut loose from its base here as it was there
                arg.data = state.detach().to(arg.dtype)
            else:
                arg.copy_(state.detach().to(arg.dtype))
    if arg.is_leaf and state.is_leaf and arg.requires_grad != state.requires_grad:
        arg.requires_grad_(state.requires_grad)
    if arg.is_leaf and arg.requires_grad:
        arg.grad = state.grad


def _layout(t: torch.Tensor) -> list[tuple[int, int]]:
    """The strides that place ``t``'s elements (those of its dimensions longer than 1)."""
    return [(n, s) for n, s in zip(t.shape, t.stride()) if n > 1]


def _mirror_grad(param: torch.Tensor, value: torch.Tensor) -> None:
    """The worker's gradient on a module's parameter, on the judge's: a call that ran backward
    through the caller's network leaves a ``.grad`` there, as it would in-process."""
    if not (isinstance(param, nn.Parameter) and param.requires_grad and value.requires_grad):
        return
    grad = value.grad
    if grad is None or (grad.device.type == param.device.type and grad.shape == param.shape):
        param.grad = None if grad is None else grad.detach().to(param.dtype)


def _mirror_tensor_hooks(arg: torch.Tensor, count: Any) -> None:
    """As many no-op hooks on the judge's tensor as the call left on the worker's copy (which
    arrived without any; at most 16), so that a count of the caller's hooks sees them, as it
    would where the student's code runs in-process."""
    if isinstance(count, int) and not isinstance(count, bool) and arg.requires_grad:
        for _ in range(max(0, min(count, 16))):
            arg.register_hook(_no_op_hook)


def _mirror_module(arg: nn.Module, state: dict, budget: wire.Budget) -> None:
    """Values, training flag, and new parameter objects where the worker's call made new
    ones (so that an optimizer holding the old ones is told apart, as it was there)."""
    tensors = state.get("state") or {}
    if not isinstance(tensors, dict):
        return
    replaced = state.get("replaced") if isinstance(state.get("replaced"), list) else []
    own_names = dict(arg.named_parameters())
    for name in replaced[:len(own_names)]:  # only names of its own parameters mean anything
        if not isinstance(name, str) or name not in own_names:
            continue
        owner_name, _, leaf = name.rpartition(".")
        try:
            owner = arg.get_submodule(owner_name) if owner_name else arg
        except AttributeError:
            continue
        old = owner._parameters.get(leaf)
        if isinstance(old, nn.Parameter):
            owner._parameters[leaf] = nn.Parameter(old.detach().clone(),
                                                   requires_grad=old.requires_grad)
    own = arg.state_dict(keep_vars=True)
    with torch.no_grad():
        for name, encoded in tensors.items():
            if name in own:
                value = wire.decode_tensor(encoded, budget=budget)
                if name in replaced and name in own_names \
                        and value.device.type != own[name].device.type:
                    # moved to another device (meta) by the call: a new parameter there, as
                    # the worker's module has, so that where the model went shows here too
                    owner_name, _, leaf = name.rpartition(".")
                    owner = arg.get_submodule(owner_name) if owner_name else arg
                    owner._parameters[leaf] = nn.Parameter(value.detach(),
                                                           requires_grad=value.requires_grad)
                elif value.device.type != own[name].device.type:
                    # moved in place: the same object there, its contents swapped
                    # (``torch.__future__.set_swap_module_params_on_conversion(True)``, red
                    # team rt-8: a correct model.to(device) read as never moved, since
                    # ``.data =`` does not cross to meta)
                    _swapped_in(arg, name, own[name], value, name in own_names)
                elif value.device.type == "meta" or value.shape == own[name].shape:
                    own[name].data = value.detach()
                if (isinstance(own[name], nn.Parameter)
                        and own[name].requires_grad != value.requires_grad):
                    # a call that turned tracking off on the caller's net must show here too
                    # (the checks score what the call changed: checks/probes/, changes)
                    own[name].requires_grad_(value.requires_grad)
                _mirror_grad(own[name], value)
    arg.train(bool(state.get("training", arg.training)))
    wire.set_modes(arg, state.get("modes"))
    _mirror_rates(arg, state.get("arch"))
    _mirror_hooks(arg, state.get("hooks"))
    param_hooks = state.get("param_hooks")
    if isinstance(param_hooks, dict):
        for name, param in arg.named_parameters():
            _mirror_tensor_hooks(param, param_hooks.get(name))


def _swapped_in(arg: nn.Module, name: str, own: torch.Tensor, value: torch.Tensor,
                parameter: bool) -> None:
    """``own`` (the judge's parameter or buffer ``name``) made to hold ``value``, on another
    device, as the same object where torch can swap its contents (``swap_tensors``), else as
    a new one in its place."""
    fresh = (nn.Parameter(value.detach(), requires_grad=own.requires_grad) if parameter
             else value.detach())
    try:
        torch.utils.swap_tensors(own, fresh)
        return
    except (RuntimeError, TypeError):  # weak references to it, a subclass: replaced instead
        pass
    owner_name, _, leaf = name.rpartition(".")
    owner = arg.get_submodule(owner_name) if owner_name else arg
    (owner._parameters if parameter else owner._buffers)[leaf] = fresh


def _mirror_rates(arg: nn.Module, arch: Any) -> None:
    """Each Dropout layer's ``p`` as the call left it on the worker's copy (a call that set it
    by hand shows here, as it would where the student's code runs in-process)."""
    layers = list(arg) if isinstance(arg, nn.Sequential) else [arg]
    if not isinstance(arch, list) or len(arch) != len(layers):
        return
    for layer, item in zip(layers, arch):
        if isinstance(layer, nn.Dropout) and isinstance(item, list) and len(item) == 2 \
                and item[0] == "Dropout" and isinstance(item[1], dict):
            p = item[1].get("p")
            if isinstance(p, (int, float)) and not isinstance(p, bool) and 0.0 <= p <= 1.0:
                layer.p = float(p)


def _mirror_hooks(arg: nn.Module, hooks: Any) -> None:
    """As many no-op forward hooks on each submodule as the call left on the worker's copy
    (which arrived without any), so that a count of the caller's hooks sees them, as it would
    where the student's code runs in-process. At most 16 per submodule."""
    if not isinstance(hooks, dict) or not hooks:
        return
    modules = dict(arg.named_modules())
    for name, count in list(hooks.items())[:len(modules)]:
        if name in modules and isinstance(count, int) and not isinstance(count, bool):
            for _ in range(max(0, min(count, 16))):
                modules[name].register_forward_hook(_no_op_hook)


def _no_op_hook(*_: Any) -> None:
    return None
