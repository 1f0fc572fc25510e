"""What happened to a call's model argument itself: each move of it (``Module._apply`` on it:
``to``, ``cpu``, ``cuda``, ``to_empty``, ``float``...), the method each went through, and
whether the error that ended the call is one a move raised (``observed_moves``, entered by
``arrangements.arranged`` for the ``observe_moves`` context). Heard in the student's process:
it names a failure, never scores one (docs/security.md).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch import nn


def _device_types(module: nn.Module) -> str:
    """The device types of ``module``'s parameters and buffers, sorted, comma-separated."""
    return ",".join(sorted({t.device.type for t in (*module.parameters(), *module.buffers())}))


@contextlib.contextmanager
def observed_moves(observed: dict, model: Any) -> Iterator[None]:
    """During the block, ``observed["module_moves"]``: each move of ``model`` itself (a call of
    ``Module._apply`` on it: ``to``, ``cpu``, ``cuda``, ``to_empty``, ``float``...) as
    ``[before, after]``, the device types of its parameters and buffers around the move,
    ``after`` ``"raised"`` when it raised (then raised on, unchanged); when the call ends with
    an error, ``observed["raised_by_move"]``: whether that error is the one a move of
    ``model`` raised. The moves of other modules (a copy of ``model``, and ``model``'s own
    submodules, which ``_apply`` reaches through ``model``'s move) pass through unheard.
    ``Module._apply`` is put back after the block, whatever it raised."""
    moves: list[list[str]] = []
    kinds: list[str] = []
    raised: list[BaseException] = []
    original = nn.Module._apply

    def noting(self: nn.Module, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        if self is not model:
            return original(self, fn, *args, **kwargs)
        before = _device_types(self)
        # the method the move went through (``Module.to_empty.<locals>.<lambda>``: its owner)
        kinds.append(str(getattr(fn, "__qualname__", "")).split(".<locals>")[0][:40])
        try:
            moved = original(self, fn, *args, **kwargs)
        except BaseException as exc:
            moves.append([before, "raised"])
            raised.append(exc)
            raise
        moves.append([before, _device_types(self)])
        return moved

    nn.Module._apply = noting  # type: ignore[method-assign]
    try:
        yield
    except BaseException as exc:
        # the error that ended the call is the very one a move of the model raised (not
        # another, raised after a move's error was caught)
        observed["raised_by_move"] = any(exc is e for e in raised)
        raise
    finally:
        nn.Module._apply = original  # type: ignore[method-assign]
        observed["module_moves"] = moves
        observed["move_kinds"] = kinds
