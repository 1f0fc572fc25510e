"""q4_vjp: a gradient whose size-1 dimensions were dropped (blind round zj).

``leaf.grad.squeeze()`` ('no stray singleton dimensions'), ``leaf.grad[0]``, ``.flatten()``,
``.view(-1)``: right for every x without a dimension of size 1, but an x of shape (1, 4) gets
a gradient of shape (4,). ``wrong-shape`` is told the cause when the answer's shape is x's with
only dimensions of size 1 removed."""

from __future__ import annotations

from typing import Any


def _dropped_ones(got: tuple[int, ...], x: tuple[int, ...]) -> bool:
    """``got`` is ``x`` with one or more dimensions of size 1 left out (and nothing else)."""
    if len(got) >= len(x):
        return False
    rest = iter(got)
    kept = next(rest, None)
    for n in x:
        if kept is not None and n == kept:
            kept = next(rest, None)
        elif n != 1:
            return False
    return kept is None


def size_one_dropped(got: Any, x: Any) -> str:
    """What a gradient of ``x``'s shape with size-1 dimensions dropped is told; else ``""``."""
    if not _dropped_ones(tuple(got.shape), tuple(x.shape)):
        return ""
    return (" The values may be right, but a dimension of size 1 was dropped (.squeeze(), "
            "indexing [0], .flatten() or .view(-1) on the gradient): x's gradient has x's "
            "shape, size-1 dimensions included. Return leaf.grad as backward leaves it.")
