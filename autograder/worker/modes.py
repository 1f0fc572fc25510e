"""torch's global modes around a call of student code: which ones a call may change and leave
changed (``MODES``), torch's own defaults (what the checks' code runs under), the notebook's (what
a student's call runs under, ``NOTEBOOK_MODES``), and ``fenced_modes``, which every call enters
(``arrangements.arranged``): autograd on, anomaly detection and deterministic algorithms off,
the notebook's other modes, everything put back after it, and what it left changed reported as
``modes_left``.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

import torch

#: torch's global modes a call may change and leave changed: name -> (read, write)
MODES: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
    "grad_enabled": (torch.is_grad_enabled, torch.set_grad_enabled),
    "default_dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "default_device": (torch.get_default_device, lambda device: torch.set_default_device(
        None if device.type == "cpu" else device)),
    "anomaly": (lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
                lambda both: torch.set_anomaly_enabled(*both)),
    "deterministic": (lambda: (torch.are_deterministic_algorithms_enabled(),
                               torch.is_deterministic_algorithms_warn_only_enabled()),
                      lambda both: torch.use_deterministic_algorithms(both[0], warn_only=both[1])),
}
#: torch's own defaults: what the checks' code runs under, whatever a notebook set
DEFAULT_MODES = {"grad_enabled": True, "default_dtype": torch.float32,
                 "default_device": torch.device("cpu"), "anomaly": (False, True),
                 "deterministic": (False, False)}
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
        yield
    finally:
        now = current_modes()
        apply_modes(before, now)
        left = {name: str(value).replace("torch.", "") for name, value in now.items()
                if value != entry[name]}
        if left:
            observed["modes_left"] = left
