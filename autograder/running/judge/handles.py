"""Handles for the judge's tensors and modules, so that the worker keeps each one as the same
object between calls (``worker.kept_arguments`` says why): the same handle for the same live
object, a new one for a new object (an id the interpreter hands out again included).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch import nn


class ArgumentHandles:
    """``id(object) -> (weak reference, handle)`` for one worker's calls."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, int]] = {}
        self._last = 0

    def of(self, value: Any) -> int | None:
        """``value``'s handle (a tensor or a module), or None for anything else."""
        if not isinstance(value, (torch.Tensor, nn.Module)):
            return None
        key = id(value)
        entry = self._by_id.get(key)
        if entry is not None and entry[0]() is value:
            return entry[1]
        self._last += 1
        self._by_id[key] = (weakref.ref(value, lambda ref, key=key: self._forget(key, ref)),
                            self._last)
        return self._last

    def _forget(self, key: int, ref: weakref.ref) -> None:
        entry = self._by_id.get(key)
        if entry is not None and entry[0] is ref:  # not a newer object's entry at that id
            del self._by_id[key]


def handles_of(client: Any) -> ArgumentHandles:
    """The handles of the worker ``client`` talks to (made on first use)."""
    handles = getattr(client, "argument_handles", None)
    if handles is None:
        handles = client.argument_handles = ArgumentHandles()
    return handles
