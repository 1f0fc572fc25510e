"""What a check may ask the worker to arrange around one call, by name, never by code.

- ``simulate_devices``: ``{"cuda": bool, "mps": bool}`` answers for ``is_available()``.
- ``swap_globals``: ``{"name": substitute}``: for the duration of the call, the function's
  global ``name`` is one of the named stand-ins below (the lesson's op, a deliberately broken
  op), so that a check can ask whether the student's own checker notices a broken op.
- ``overwrite_module_params``: ``torch.__future__.set_overwrite_module_params_on_conversion``.
- ``count_saved_tensors``: count the tensors autograd saves during the call (a recorded graph).
- ``torch_seed``: seed torch's global generator for the call (restored afterwards), so that a
  diagnostic probe can tell an answer that depends on torch's randomness from one that
  depends on earlier calls (``checks/probes/``).

What the arrangements observe (the stand-ins' input dtypes, the saved-tensor count) comes back
with the call's result. It is taken in the student's process, where a notebook cell can
replace any of these functions: the judge only hears it, so checks may word advice with it but
never decide points on it (docs/security.md, "What the judge measures and what it only hears").
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch


def _lesson_op(x: torch.Tensor) -> torch.Tensor:
    return (x ** 3).sum() / (1 + x.abs().sum())


def _functions(observed: dict) -> dict[str, Any]:
    """Fresh stand-ins for one call; each forward records its input's dtype in
    ``observed["dtypes"]`` so that a check can tell which precision the caller used.

    The correct and the broken op look alike from the student's side: both are classes named
    ``MyOp`` deriving straight from ``torch.autograd.Function`` (neither subclasses the other),
    with ``apply`` functions named alike, so that a ``check_my_op`` can only tell them apart by
    checking the gradient, not by a name or a base class."""
    seen = observed.setdefault("dtypes", [])

    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        seen.append(str(x.dtype).replace("torch.", ""))
        ctx.save_for_backward(x)
        return _lesson_op(x)

    def op(fault: str | None) -> type:
        # one backward for every op, the difference in its closure: no name, docstring or
        # code object tells them apart (code in the same process can still dig it out of the
        # closure; docs/security.md says so)
        def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
            (x,) = ctx.saved_tensors
            if fault == "quotient":  # the broken op: the quotient rule's second term missing
                return grad_output * 3 * x ** 2 / (1 + x.abs().sum())
            with torch.enable_grad():
                leaf = x.detach().requires_grad_()
                (grad,) = torch.autograd.grad(_lesson_op(leaf), leaf)
            return grad_output * (grad + _FAULTS.get(fault, _no_fault)(x))

        class MyOp(torch.autograd.Function):
            pass

        MyOp.forward, MyOp.backward = staticmethod(forward), staticmethod(backward)
        MyOp.__module__, MyOp.__qualname__ = "__main__", "MyOp"
        return MyOp

    ops = {"lesson_function": op(None), "broken_function": op("quotient"),
           **{f"{fault}_function": op(fault) for fault in _FAULTS}}
    return {**ops, **{f"{name}_apply": cls.apply for name, cls in ops.items()}}


def _no_fault(x: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(x)


def _sign_term(x: torch.Tensor) -> torch.Tensor:
    return (x ** 3).sum() / (1 + x.abs().sum()) ** 2


#: Backwards wrong on part of the input space only, as added to the right gradient:
#: ``negative`` drops sign(x) (wrong only at negative entries), ``zero`` takes sign(0) as 1
#: (wrong only at entries equal to 0, where the gradient's component is 0), ``offset`` is off
#: by 1e-6 everywhere, which gradcheck's rtol=1e-3 hides except where a component of the
#: gradient is 0 and only its atol=1e-8 applies.
_FAULTS = {
    "negative": lambda x: _sign_term(x) * (torch.sign(x) - 1),
    "zero": lambda x: -_sign_term(x) * (x == 0).to(x.dtype),
    "offset": lambda x: torch.full_like(x, 1e-6),
}

SUBSTITUTE_NAMES = tuple(f"{name}{tail}" for name in (
    "lesson_function", "broken_function", *(f"{fault}_function" for fault in _FAULTS))
    for tail in ("", "_apply"))


@contextlib.contextmanager
def simulated_devices(cuda: bool, mps: bool) -> Iterator[None]:
    """``torch.cuda.is_available()`` and ``torch.backends.mps.is_available()`` answer as told."""
    saved = torch.cuda.is_available, torch.backends.mps.is_available
    torch.cuda.is_available = lambda: bool(cuda)
    torch.backends.mps.is_available = lambda: bool(mps)
    try:
        yield
    finally:
        torch.cuda.is_available, torch.backends.mps.is_available = saved


@contextlib.contextmanager
def swapped_globals(fn: Callable, names: dict[str, Any]) -> Iterator[None]:
    """Replace globals of ``fn`` (its module namespace) for the duration of the block."""
    space = getattr(fn, "__globals__", None)
    if space is None:
        raise TypeError(f"{getattr(fn, '__name__', fn)!r} has no globals to swap")
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
def arranged(fn: Callable, request: dict) -> Iterator[dict]:
    """Enter everything ``request`` asks for around a call of ``fn``; yield the dict that the
    arrangements fill with what they observed. Unknown keys are refused."""
    observed: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        for key, value in (request or {}).items():
            if key == "simulate_devices":
                stack.enter_context(simulated_devices(value.get("cuda"), value.get("mps")))
            elif key == "swap_globals":
                stand_ins = _functions(observed)
                stack.enter_context(swapped_globals(fn, {k: stand_ins[v]
                                                         for k, v in value.items()}))
            elif key == "overwrite_module_params":
                stack.enter_context(overwrite_module_params(value))
            elif key == "count_saved_tensors":
                stack.enter_context(counted_saved_tensors(observed))
            elif key == "torch_seed":
                stack.enter_context(seeded_torch(value))
            else:
                raise ValueError(f"unknown call context {key!r}")
        yield observed
