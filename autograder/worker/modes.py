"""torch's global modes around a call of student code: which ones a call may change and leave
changed (``MODES``), torch's own defaults (what the checks' code runs under), the notebook's (what
a student's call runs under, ``NOTEBOOK_MODES``), and ``fenced_modes``, which every call enters
(``arrangements.arranged``): autograd on, anomaly detection and deterministic algorithms off,
the notebook's other modes, everything put back after it, and what it left changed reported as
``modes_left``; inside it, ``fenced_global_hooks``: no hook a cell registered for every module
or optimizer runs during the call, and one the call leaves is reported too.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

import torch
from torch.nn.modules import module as module_hooks
from torch.optim import optimizer as optimizer_hooks

_CPU = torch.device("cpu")


def default_device() -> torch.device:
    """``torch.get_default_device()``, read in two C calls where it is the CPU by default:
    torch's own function imports two modules and walks the mode stack on every call (about
    10 µs, and every call of student code reads it twice). Any mode on the stack, or a device
    set, takes torch's path, which gives the same answer as ever."""
    if torch._C._len_torch_function_stack() == 0 and getattr(
            torch._GLOBAL_DEVICE_CONTEXT, "device_context", None) is None:
        return _CPU
    return torch.get_default_device()


#: torch's global modes a call may change and leave changed: name -> (read, write)
MODES: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
    "grad_enabled": (torch.is_grad_enabled, torch.set_grad_enabled),
    "default_dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "default_device": (default_device, lambda device: torch.set_default_device(
        None if device.type == "cpu" else device)),
    "anomaly": (lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
                lambda both: torch.set_anomaly_enabled(*both)),
    "deterministic": (lambda: (torch.are_deterministic_algorithms_enabled(),
                               torch.is_deterministic_algorithms_warn_only_enabled()),
                      lambda both: torch.use_deterministic_algorithms(both[0], warn_only=both[1])),
    # how Module.to and the dtype casts treat parameters from then on (red team rt-9 left the
    # swap flag on from make_optimizer)
    "swap_module_params": (torch.__future__.get_swap_module_params_on_conversion,
                           torch.__future__.set_swap_module_params_on_conversion),
    "overwrite_module_params": (torch.__future__.get_overwrite_module_params_on_conversion,
                                torch.__future__.set_overwrite_module_params_on_conversion),
}
#: torch's own defaults: what the checks' code runs under, whatever a notebook set
DEFAULT_MODES = {"grad_enabled": True, "default_dtype": torch.float32,
                 "default_device": torch.device("cpu"), "anomaly": (False, True),
                 "deterministic": (False, False), "swap_module_params": False,
                 "overwrite_module_params": False}
#: what every call starts under whatever the notebook's cells left (as any caller would have
#: it): autograd on, anomaly detection and deterministic algorithms off (neither changes a
#: right answer's values), so that a call that switches one on and leaves it is seen even
#: where the notebook's own cell had called it first and left it on
CALLED_WITH = {"grad_enabled": True, "anomaly": (False, True), "deterministic": (False, False)}
#: the notebook's modes, where the checks run in the student's process (``harness``): a
#: call runs under them, not under the checks' ``DEFAULT_MODES``
NOTEBOOK_MODES: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "notebook_modes", default=None)


def current_modes() -> dict[str, Any]:
    return {name: read() for name, (read, _) in MODES.items()}


def apply_modes(modes: dict[str, Any], current: dict[str, Any] | None = None) -> None:
    """Set each mode to ``modes``' value where it differs from ``current``: the modes as they
    stand, when the caller has just read them (``torch.get_default_device`` alone costs
    ~10 µs, and every call of student code fences its modes), else read here."""
    current = current if current is not None else current_modes()
    for name, (_, write) in MODES.items():
        if current[name] != modes[name]:
            write(modes[name])


@contextlib.contextmanager
def fenced_modes(observed: dict) -> Iterator[None]:
    """The block starts under the notebook's modes (as its cells left them: ``NOTEBOOK_MODES``
    or, in a worker, the modes at hand) with ``CALLED_WITH`` (autograd on, anomaly detection
    and deterministic algorithms off), as any caller of a function would have it, and whatever
    it changes is undone after it; the modes it left other than it found them go into ``observed["modes_left"]`` (name: what it left, as text)."""
    before = current_modes()
    entry = {**(NOTEBOOK_MODES.get() or before), **CALLED_WITH}
    apply_modes(entry, before)
    try:
        with fenced_global_hooks(observed):
            yield
    finally:
        now = current_modes()
        apply_modes(before, now)
        left = {name: str(value).replace("torch.", "") for name, value in now.items()
                if value != entry[name]}
        if left:
            observed.setdefault("modes_left", {}).update(left)


#: torch's hooks that run for every module or optimizer in the process, by the word
#: ``modes_left`` reports them with: name -> (the module torch keeps them in, the dict's name)
GLOBAL_HOOKS = {
    "forward": (module_hooks, "_global_forward_hooks"),
    "forward_pre": (module_hooks, "_global_forward_pre_hooks"),
    "backward": (module_hooks, "_global_backward_hooks"),
    "backward_pre": (module_hooks, "_global_backward_pre_hooks"),
    "module_registration": (module_hooks, "_global_module_registration_hooks"),
    "parameter_registration": (module_hooks, "_global_parameter_registration_hooks"),
    "buffer_registration": (module_hooks, "_global_buffer_registration_hooks"),
    "optimizer_pre": (optimizer_hooks, "_global_optimizer_pre_hooks"),
    "optimizer_post": (optimizer_hooks, "_global_optimizer_post_hooks"),
}
#: what torch keeps beside them (flags per forward hook), saved and put back with them
_BESIDE = ("_global_forward_hooks_always_called", "_global_forward_hooks_with_kwargs")


@contextlib.contextmanager
def fenced_global_hooks(observed: dict) -> Iterator[None]:
    """The block runs with none of torch's hooks for every module or optimizer registered
    before it (a notebook cell's ``register_module_forward_hook`` cannot bend the grader's
    models: red team rt-9); after it those are put back, before the ones it registered, which
    stay, as in the student's own process (an optimizer's step counts them:
    ``optimizer_changes``), and how many it left goes into
    ``observed["modes_left"]["global_hooks"]`` (``checks.modes`` scores it)."""
    found = {name: getattr(owner, attr, None) for name, (owner, attr) in GLOBAL_HOOKS.items()}
    found = {name: d for name, d in found.items() if isinstance(d, dict)}
    beside = {attr: d for attr in _BESIDE
              if isinstance(d := getattr(module_hooks, attr, None), dict)}
    every = {**found, **beside}
    # only the dicts that hold something are set aside and put back: in most calls every one
    # is empty, and copying eleven empty dicts twice was a third of the fence's cost
    saved = {name: dict(d) for name, d in every.items() if d}
    full = getattr(module_hooks, "_global_is_full_backward_hook", None)
    for name in saved:
        every[name].clear()
    try:
        yield
    finally:
        added = {name: len(d) for name, d in found.items() if d}
        for name, old in saved.items():
            d = every[name]
            new = dict(d)
            d.clear()
            d.update(old)
            d.update(new)
        if "backward" not in added:  # else as the hook the call registered set it
            module_hooks._global_is_full_backward_hook = full
        if added:
            told = f"{sum(added.values())} ({', '.join(added)})"
            observed.setdefault("modes_left", {})["global_hooks"] = told[:40]
