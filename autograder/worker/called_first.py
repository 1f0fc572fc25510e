"""The ``call_first`` arrangement: before the call, the same function called once on other
arguments, some of them the call's own objects, that answer discarded.

A check asks it to see whether an answer depends on an earlier call with the same object (a
count kept per network in a dict keyed by the module): each call's arguments are decoded anew
in a worker, so only a call made there, on the call's own decoded object, shares it.

The request is ``{"args": [encoded args...], "same": [indices]}``: at each index in ``same``
the first call takes the call's own argument (the encoded entry there is not read).
"""

from __future__ import annotations

from typing import Any, Callable

from . import wire


def first_args(value: Any, args: tuple) -> list | None:
    """The first call's arguments, or ``None`` when the request is malformed."""
    if not isinstance(value, dict) or not isinstance(value.get("args"), list):
        return None
    same = value.get("same", [])
    if not isinstance(same, list) or not all(
            isinstance(i, int) and 0 <= i < min(len(args), len(value["args"])) for i in same):
        return None
    return [args[i] if i in same else wire.decode(a) for i, a in enumerate(value["args"])]


def call_first(fn: Callable, value: Any, args: tuple) -> None:
    """``fn`` on the arguments ``value`` asks for, its answer and any exception discarded."""
    chosen = first_args(value, tuple(args))
    if chosen is None:
        raise ValueError("malformed call context 'call_first'")
    try:
        fn(*chosen)
    except (Exception, SystemExit):  # noqa: BLE001 - the call after it is what is judged
        pass
