"""torch's global settings a student's function left changed when it returned.

Every call runs inside ``worker.modes.fenced_modes``: with autograd on and the notebook's other
modes, everything put back after it, so what one function leaves behind never reaches another
question's calls. What it left changed is reported (``modes_left``: the worker's word, like the
answer's ``requires_grad``, docs/security.md); a check whose calls left a setting that changes
later results (autograd off, another default dtype or device, anomaly detection or deterministic
algorithms on, torch's module-conversion flags changed, hooks left registered for every module
or optimizer) loses its points for it, named
``global-mode-left``, because in the student's own notebook everything run after that call
would be changed by it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from contextvars import ContextVar
from typing import Iterator

from .result import STUDENT, CheckResult

#: Settings that change what later code computes, with what to write instead
SCORED = {
    "grad_enabled": ("autograd switched off (torch.set_grad_enabled(False) switches recording "
                     "off for everything that runs after it: a training step called later "
                     "records no graph)", "run that code inside `with torch.no_grad():`, which "
                     "switches recording back on when the block ends"),
    "default_dtype": ("torch's default dtype set to {value} (torch.set_default_dtype changes "
                      "every tensor created after it without a dtype)", "give the tensors it "
                      "creates their dtype (dtype=x.dtype), or put the default back before it "
                      "returns"),
    "default_device": ("torch's default device set to {value} (every tensor created after it "
                       "without a device goes there)", "give the tensors it creates their "
                       "device (device=x.device), or put the default back before it returns"),
    "anomaly": ("anomaly detection switched on (torch.autograd.set_detect_anomaly(True) stays on "
                "for everything that runs after it: every later forward records a stack trace "
                "and every later backward runs the anomaly checks, slower, raising where it "
                "meets a NaN)", "use `with torch.autograd.detect_anomaly():` around the code to "
                "check, which switches it back off when the block ends, or set it back "
                "(torch.autograd.set_detect_anomaly(False)) in a `finally:`"),
    "deterministic": ("deterministic algorithms switched on (torch.use_deterministic_algorithms"
                      "(True) stays on for everything that runs after it: an operation without a "
                      "deterministic implementation raises there)", "put it back before it "
                      "returns: before = torch.are_deterministic_algorithms_enabled(), and "
                      "torch.use_deterministic_algorithms(before) in a `finally:`"),
    "swap_module_params": ("torch.__future__.set_swap_module_params_on_conversion set to "
                           "{value} (every later Module.to and dtype cast then swaps or keeps "
                           "parameter objects otherwise)", "put the flag back before returning "
                           "(read it with get_swap_module_params_on_conversion() first, set it "
                           "back in a `finally:`), or leave it alone"),
    "overwrite_module_params": ("torch.__future__.set_overwrite_module_params_on_conversion set "
                                "to {value} (every later Module.to and dtype cast then makes "
                                "or keeps parameter objects otherwise)", "put the flag back "
                                "before returning, or leave it alone"),
    "global_hooks": ("hooks left registered for every module or optimizer in the process "
                     "({value}: torch.nn.modules.module.register_module_forward_hook, "
                     "register_module_forward_pre_hook, torch.optim.optimizer."
                     "register_optimizer_step_pre_hook and the like stay for everything that "
                     "runs after it: every later forward, backward or step of any model runs "
                     "them)", "register a hook on the one module or optimizer it is meant for "
                     "(model.register_forward_hook(...)) and remove it (handle.remove()) before "
                     "returning, or register none"),
}
#: the modes scored only when left ON (their second flag alone, check_nan or warn_only, does
#: nothing while the mode is off: switching a mode the notebook had on off is not scored)
SWITCHES = ("anomaly", "deterministic")

_LEFT: ContextVar[dict[str, dict[str, str]] | None] = ContextVar("modes_left", default=None)


def note(name: str, observed: dict) -> None:
    """Record what the call of ``name`` left changed (``observed["modes_left"]``), when a
    check's calls are being watched (``watched``)."""
    left, found = _LEFT.get(), observed.get("modes_left")
    if left is not None and isinstance(found, dict):
        scored = {k: str(v) for k, v in found.items() if k in SCORED
                  and (k not in SWITCHES or str(v).startswith("(True"))}
        if scored:
            left.setdefault(name, {}).update(scored)


@contextlib.contextmanager
def watched() -> Iterator[dict[str, dict[str, str]]]:
    """Collect, for the block (one check), each called function's settings left changed."""
    left: dict[str, dict[str, str]] = {}
    token = _LEFT.set(left)
    try:
        yield left
    finally:
        _LEFT.reset(token)


def scored(result: CheckResult, left: dict[str, dict[str, str]]) -> CheckResult:
    """``result``, or, when it passed but a call left a ``SCORED`` setting changed, the same
    check failed for it (``global-mode-left``)."""
    if not result.passed or not left:
        return result
    name, modes = next(iter(left.items()))
    what, instead = zip(*(SCORED[mode] for mode in modes))
    said = "; and ".join(text.format(value=modes[mode]) for mode, text in zip(modes, what))
    message = (f"{name} returned with {said}. The answer was right, but a function that "
               f"changes torch's global settings changes whatever runs after it: "
               f"{'; '.join(instead)}.")
    if result.seed is not None:
        message += f" [grading seed {result.seed}]"
    return dataclasses.replace(result, passed=False, points=0.0, message=message,
                               misconception="global-mode-left", fault=STUDENT)
