"""What a check may ask the worker to arrange around one call, by name, never by code.

- ``simulate_devices``: ``{"cuda": bool, "mps": bool}``: torch's availability questions
  (``is_available()``, ``device_count()``, ``torch.accelerator``...) answer as told
  (``simulated_devices.py``); ``observed["devices_asked"]``: the device questions the call
  asked (``asked_devices.py``); with ``"as_available": True`` the others answer as told too.
- ``swap_globals``: ``{"name": "stand_in" | "stand_in_apply"}``: for the duration of the call,
  the function's global ``name`` is the grader's stand-in op (``MyOp``-like: ``stand_in``) or its
  ``apply``, so that a check can ask whether the student's own checker notices a broken op;
  with ``stand_in_scale``, ``[scale, offset]``, that op is the lesson's times ``scale``, forward
  and backward, its forward shifted by ``offset``.
  Whether the stand-in's backward is the lesson's or a broken one is *not* in the request:
  its backward asks whoever holds the choice (``ask``: the judge, over the worker's pipe, or
  ``STAND_IN_BACKWARD`` when the student's code runs in the checks' own process), so nothing
  in the student's process (frames, requests, closures, memory) can name it.
- ``overwrite_module_params``: ``torch.__future__.set_overwrite_module_params_on_conversion``.
- ``inference_mode``: the call runs under ``torch.inference_mode()``, where a closed form
  computes as usual and autograd records nothing (``enable_grad`` does not lift it), so that a
  check can tell a gradient computed by hand from one computed with autograd.
- ``count_saved_tensors``: count the tensors autograd saves during the call (a recorded graph).
- ``torch_seed``: seed torch's global generator for the call (restored afterwards), so that a
  diagnostic probe can tell an answer that depends on torch's randomness from one that
  depends on earlier calls (``checks/probes/``).
- ``observe_optimizers``: count the optimizer steps taken during the call by optimizers built
  before it (``observed["optimizer_steps"]["kept"]``) and by those built in it (``"new"``), so
  that a check can tell an optimizer kept from an earlier call from one built for this call.
- ``observe_forward``: the index of the call's module argument: ``observed["forward_devices"]``,
  the device types of the tensors each forward of that module or one of its submodules took
  during the call (forward hooks, removed after it), so that a check can tell a ``predict``
  that ran the model's forward on ``meta`` from one that made an answer to its shape there.
- ``observe_moves``: the index of the call's module argument: ``observed["module_moves"]``,
  each move of that module itself during the call (``Module._apply``, which ``to``, ``cpu``,
  ``cuda``, ``to_empty`` and the dtype casts go through) as ``[before, after]``, the device
  types of its parameters and buffers before and after the move (``"raised"`` when the move
  raised), and, when the call raised, ``observed["raised_by_move"]``: whether its error is the
  one a move of that module raised, so that a check can tell a ``predict`` that moved the
  model back off ``meta`` (``model.to(home)``, ``model.cpu()``) from one that copied its
  output off it; ``observed["move_kinds"]``: the method each move went through
  (``Module.to``, ``Module.to_empty``, ``Module.half``...).
- ``call_first``: ``{"args": [encoded args...], "same": [indices]}``: before the call, the
  same function once on those, the call's own objects at ``same`` (``called_first``).
- ``call_again``: ``[encoded args...]`` (``wire``): after the call, before its answer is
  encoded, the same function called once more on these (the grader's other inputs), that
  answer discarded: a check sees whether a later call changes the first answer as returned.
- ``observe_reuse``: the function's name (for the reader): ``observed["answer_reused"]``, when
  the call's answer lives in memory an earlier answer of the function holds (a pool of
  buffers handed out in turn), how many answers back that one is (``kept_answers``; the
  caller hands the answer over with ``kept_answers.hand_over``).

Whatever the request, every call runs inside ``fenced_modes``: autograd on, torch's other
global modes (default dtype and device, anomaly detection) as the notebook's cells left them,
and everything put back after the call, so that a function that switches autograd off and
never on again (called in a cell, or by a check) costs points on its own question, not on
every question called after it. What the call left changed comes back as ``modes_left``.

What the arrangements observe (the stand-ins' input dtypes, the saved-tensor count) comes back
with the call's result. It is taken in the student's process, where a notebook cell can
replace any of these functions: the judge only hears it, so checks may word advice with it but
never decide points on it (docs/security.md, "What the judge measures and what it only hears").
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from typing import Any, Callable, Iterator

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from . import kept_answers, wire
from .asked_devices import heard_devices
from .called_first import call_first
from .kept_answers import observed_reuse
from .modes import fenced_modes
from .module_moves import observed_moves
from .simulated_devices import simulated_devices
from .stand_in import (
    STAND_IN_BACKWARD,
    STAND_IN_SCALE,
    asked_backward,
    fresh_stand_ins,
    no_judge,
    stand_in_gradient,
)


def globals_of(fn: Any) -> dict | None:
    """The module namespace whose names ``fn``'s code reads, or None: a function's own; a
    decorated function's (``@torch.no_grad()``, ``functools.wraps``), the function it wraps;
    a bound method's, a ``functools.partial``'s and a callable instance's (its class's
    ``__call__``: blind round zzzg's ``check_my_op = _GradChecker()``), the function behind."""
    target = fn
    for _ in range(8):  # each step goes one wrapper in: a chain that long is no checker
        target = inspect.unwrap(target)
        space = getattr(target, "__globals__", None)
        if isinstance(space, dict):
            return space
        if isinstance(target, functools.partial):
            target = target.func
        elif isinstance(target, types.MethodType):
            target = target.__func__
        elif not isinstance(target, type) and callable(target):
            target = type(target).__call__  # a builtin's is a slot wrapper: None below
        else:
            return None
    return None


@contextlib.contextmanager
def swapped_globals(fn: Callable, names: dict[str, Any]) -> Iterator[None]:
    """Replace globals of ``fn`` (its module namespace, ``globals_of``) for the duration of
    the block."""
    space = globals_of(fn)
    if space is None:
        told = " and ".join(names)
        raise TypeError(f"{getattr(fn, '__name__', type(fn).__name__)} reads no module's "
                        f"names, so the grader cannot put its test op in place of {told} for "
                        f"the call: define it with def, looking {told} up when it is called")
    missing = object()
    saved = {k: space.get(k, missing) for k in names}
    space.update(names)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is missing:
                space.pop(k, None)
            else:
                space[k] = v


def _scaled(value: Any) -> tuple[float | None, float]:
    """``stand_in_scale``, ``[scale, offset]``, as a scale in (0, 100] and an offset in
    [-100, 100], or ``(None, 0.0)`` (the lesson's op itself)."""
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        return None, 0.0
    scale, offset = float(value[0]), float(value[1])
    if not (0 < scale <= 100 and -100 <= offset <= 100):
        return None, 0.0
    return scale, offset


@contextlib.contextmanager
def overwrite_module_params(flag: bool) -> Iterator[None]:
    before = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(bool(flag))
    try:
        yield
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(before)


@contextlib.contextmanager
def counted_saved_tensors(observed: dict) -> Iterator[None]:
    """Count pack events (tensors saved for backward) into ``observed["saved_tensors"]``."""
    observed["saved_tensors"] = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        observed["saved_tensors"] += 1
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        yield


@contextlib.contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """torch's global CPU generator seeded with ``seed`` during the block, as it was after."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        yield


@contextlib.contextmanager
def observed_tf32(observed: dict) -> Iterator[None]:
    """After the block, ``observed["tf32"]``: whether float32 matmuls on CUDA may use TF32
    (``torch.backends.cuda.matmul.allow_tf32``, or a float32 matmul precision below
    "highest"), as the student's cells or call left it."""
    try:
        yield
    finally:
        observed["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32
                                or torch.get_float32_matmul_precision() != "highest")


@contextlib.contextmanager
def observed_optimizers(observed: dict) -> Iterator[None]:
    """After the block, ``observed["optimizer_steps"]``: ``{"kept": n, "new": m}``, the steps
    taken in it by optimizers built before it and by those built in it. An optimizer that is
    alive before the block keeps its ``id`` throughout, so the ids noted at construction in
    the block tell the two apart."""
    built: set[int] = set()
    counts = {"kept": 0, "new": 0}
    init = torch.optim.Optimizer.__init__

    def noting(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> None:
        built.add(id(self))
        init(self, *args, **kwargs)

    def counting(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        counts["new" if id(optimizer) in built else "kept"] += 1

    handle = register_optimizer_step_pre_hook(counting)
    torch.optim.Optimizer.__init__ = noting
    try:
        yield
    finally:
        torch.optim.Optimizer.__init__ = init
        handle.remove()
        observed["optimizer_steps"] = counts


@contextlib.contextmanager
def observed_forward(observed: dict, model: Any) -> Iterator[None]:
    """During the block, ``observed["forward_devices"]``: the device types (sorted) of the
    tensor inputs of every forward of ``model`` and its submodules, as each returned. Hooks on
    every submodule, not only ``model``: ``model.forward(batch)`` and a loop over the layers
    skip the top module's hooks, never its layers'. A copy of ``model`` made in the block
    carries the hooks, and reports too. Removed after the block, whatever it raised."""
    seen: set[str] = set()

    def hook(module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        seen.update(v.device.type for v in (*args, *kwargs.values())
                    if isinstance(v, torch.Tensor))

    handles = [m.register_forward_hook(hook, with_kwargs=True)
               for m in (model.modules() if isinstance(model, nn.Module) else ())]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        observed["forward_devices"] = sorted(seen)


@contextlib.contextmanager
def called_again(fn: Callable, encoded_args: list, observed: dict) -> Iterator[None]:
    """After the block (unless it raised), ``fn`` on the decoded ``encoded_args``, discarded
    (kept among the answers ``observe_reuse`` compares, when the call asked for that)."""
    yield
    try:
        args = [wire.decode(a) for a in encoded_args]
        value = fn(*args)
    except (Exception, SystemExit):  # noqa: BLE001 - the first call's answer is what is judged
        return
    if kept_answers.wanted(observed):
        kept_answers.shared_with_earlier(fn, value, tuple(args))


@contextlib.contextmanager
def arranged(fn: Callable, request: dict, ask: Callable[[dict], dict] = no_judge,
             args: Any = ()) -> Iterator[dict]:
    """Enter everything ``request`` asks for around a call of ``fn`` on ``args``; yield the
    dict that the arrangements fill with what they observed. Unknown keys are refused. ``ask``
    puts a question to the judge (the stand-in's backward) and returns its answer."""
    observed: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(fenced_modes(observed))
        for key, value in (request or {}).items():
            if key == "simulate_devices":
                cuda, mps = bool(value.get("cuda")), bool(value.get("mps"))
                stack.enter_context(simulated_devices(cuda, mps))
                stack.enter_context(heard_devices(observed, cuda, mps,
                                                  value.get("as_available") is True))
            elif key == "swap_globals":
                # in the checks' own process the choice is in the request; in a worker it
                # never is, and the judge answers
                kind = (request or {}).get(STAND_IN_BACKWARD)
                backward = (asked_backward(ask) if kind is None else
                            lambda x, g, kind=kind: stand_in_gradient(kind, x, g))
                scale, offset = _scaled((request or {}).get(STAND_IN_SCALE))
                ops = fresh_stand_ins(observed, backward, scale, offset)
                stack.enter_context(swapped_globals(fn, {k: ops[v]
                                                         for k, v in value.items()}))
            elif key in (STAND_IN_BACKWARD, STAND_IN_SCALE, "call_again", "call_first"):
                continue
            elif key == "inference_mode":  # autograd records nothing, whatever the call asks
                stack.enter_context(torch.inference_mode(bool(value)))
            elif key == "overwrite_module_params":
                stack.enter_context(overwrite_module_params(value))
            elif key == "count_saved_tensors":
                stack.enter_context(counted_saved_tensors(observed))
            elif key == "torch_seed":
                stack.enter_context(seeded_torch(value))
            elif key == "observe_tf32":
                stack.enter_context(observed_tf32(observed))
            elif key == "observe_optimizers":
                stack.enter_context(observed_optimizers(observed))
            elif key == "observe_forward":
                index = value if isinstance(value, int) and 0 <= value < len(args) else None
                stack.enter_context(observed_forward(
                    observed, None if index is None else args[index]))
            elif key == "observe_reuse":
                stack.enter_context(observed_reuse(observed, fn, tuple(args)))
            elif key == "observe_moves":
                index = value if isinstance(value, int) and 0 <= value < len(args) else None
                module = None if index is None else args[index]
                if isinstance(module, nn.Module):
                    stack.enter_context(observed_moves(observed, module))
            else:
                raise ValueError(f"unknown call context {key!r}")
        if "call_first" in (request or {}):  # inside the fence, before the call
            call_first(fn, request["call_first"], args)
        if "call_again" in (request or {}):  # entered last: it runs first after the call
            stack.enter_context(called_again(fn, list(request["call_again"]), observed))
        yield observed
