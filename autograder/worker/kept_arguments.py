"""The judge's tensors and modules kept as the same objects in the worker, call after call.

Where the student's code runs in the checks' own process, a check that passes its network
or its tensor to the student's function again passes the same object: ``id(net)``,
``w.data_ptr()`` and anything the student's code keeps on the object are what they were at
the last call, and a tensor the check changed has changed in place. A worker that decoded a
fresh copy for every call broke that: a cache keyed by ``id(net)`` or ``w.data_ptr()`` (red
team rt-5: a stale gradient for an updated ``w``) never hit, so the sealed judge saw right
answers where an in-process run saw the stale ones, and it paid a decoding per call besides.

So the judge names each tensor or module argument with a handle (``keep`` in the call
request: one per argument, ``None`` for the rest), the same for the same object, and the
worker keeps, per handle, the object it gave the student's function and the state both
sides agreed on after that call (what the judge sent, when the call changed nothing; the
worker's own report of the object, when the call changed it without hooks or new
parameters). When the judge sends that handle again:

- with that very state, the kept object is passed again, not decoded;
- with another state (the check changed its tensor between calls), a tensor of the same
  kind, shape, strides and dtype (not a view) takes the new values, gradient and flags in
  place, as the check's own tensor did; anything else is decoded fresh and kept from then on.

An object whose call left hooks on it or replaced its parameters is not kept, nor is a tensor
with a history (a non-leaf): the next call decodes a fresh one, as before. Nothing here changes
what the worker reports; it only decides which object the student's function is given. The
student's code can change a kept object between calls (it holds it): that changes its own
answers only, as it would in-process, where the check's object is the one it holds.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from . import wire

#: Objects kept per worker at most: a check passes the same object again within a few calls,
#: so the most recent are enough, and what a worker holds stays small (the oldest go first)
CAP = 64


class KeptArguments:
    """Handle -> (the object the student's function was given, the state agreed after its
    last call, or None where it is not known)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Any, Any]] = {}

    def arguments(self, sent: list, handles: Any,
                  decode: Callable[[Any], Any] = wire.decode) -> list:
        """The call's arguments from the request's encoded ``sent`` and its ``handles``."""
        handles = handles if isinstance(handles, list) else []
        given: dict[int, Any] = {}  # one object per handle within one call, as in-process
        args = []
        for i, encoded in enumerate(sent):
            handle = _handle(handles[i] if i < len(handles) else None)
            if handle is None:
                args.append(decode(encoded))
                continue
            if handle not in given:
                given[handle] = self._object(handle, encoded, decode)
            args.append(given[handle])
        return args

    def _object(self, handle: int, encoded: Any, decode: Callable[[Any], Any]) -> Any:
        kept, state = self._kept.get(handle, (None, None))
        if kept is not None and state is not None and state == encoded:
            return kept
        fresh = decode(encoded)
        if kept is not None and patched(kept, fresh):
            self._kept[handle] = (kept, None)
            return kept
        if keepable(fresh):
            self._keep(handle, fresh, None)
        return fresh

    def settle(self, args: list, handles: Any, sent: list, after: list) -> None:
        """Record, per kept argument, the state both sides hold after the call (``after``:
        ``args_after``'s report, which the judge mirrors)."""
        handles = handles if isinstance(handles, list) else []
        for i, arg in enumerate(args):
            handle = _handle(handles[i] if i < len(handles) else None)
            if handle is None or not keepable(arg):
                continue
            report = after[i] if i < len(after) else None
            if report == wire.UNCHANGED:
                state = sent[i]
            elif isinstance(report, dict) and not any(report.get(k) for k in wire.CHANGES):
                state = {k: v for k, v in report.items() if k not in wire.CHANGES}
            else:  # hooks left on it or parameters replaced: decoded fresh next time
                self._kept.pop(handle, None)
                continue
            self._keep(handle, arg, state)

    def _keep(self, handle: int, obj: Any, state: Any) -> None:
        self._kept.pop(handle, None)
        self._kept[handle] = (obj, state)
        while len(self._kept) > CAP:
            del self._kept[next(iter(self._kept))]


def keepable(value: Any) -> bool:
    """A module, or a tensor with no history: a non-leaf tensor arrives with a graph of its
    own each time (``decode_tensor``), which a backward through a kept one would find freed."""
    return isinstance(value, nn.Module) or (isinstance(value, torch.Tensor) and value.is_leaf)


def _handle(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def patched(kept: Any, fresh: Any) -> bool:
    """Give ``kept`` (a leaf tensor, not a view) ``fresh``'s values, gradient and flags in
    place, when they have the same kind, shape, strides, dtype and device; whether it did."""
    if not (type(kept) is type(fresh) and isinstance(kept, torch.Tensor)
            and kept.is_leaf and fresh.is_leaf and kept.device.type == "cpu"
            and fresh.device.type == "cpu" and kept.dtype == fresh.dtype
            and kept.shape == fresh.shape and kept.stride() == fresh.stride()
            and kept._base is None and fresh._base is None):
        return False  # a view (of a storage larger than itself) is decoded fresh
    with torch.no_grad():
        kept.copy_(fresh)
    kept.requires_grad_(fresh.requires_grad)
    kept.grad = fresh.grad
    return True
