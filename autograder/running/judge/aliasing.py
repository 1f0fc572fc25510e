"""An answer the worker reported as sharing an argument's memory, made a view of the judge's
own argument again (``remote._aliased``), so that writing to it changes that argument as it
changed the student's.

The worker reports the argument (``worker.after_call.alias_of``), not how the array lies in
its memory: the judge looks for the view among the arrangements a student makes of a tensor's
array (the array itself, its axes reordered, either reshaped to the answer's shape: a squeeze,
a flatten, a dimension added) and takes the first that shares the argument's memory and holds
exactly the values the worker sent. None does: the answer stays the decoded copy, which shares
nothing, as an answer the worker reported no argument for.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

#: Arrays with more dimensions have their axes tried reversed only.
MAX_PERMUTED = 4


def _orders(ndim: int) -> Iterator[tuple[int, ...]]:
    own = tuple(range(ndim))
    yield own
    if ndim <= MAX_PERMUTED:
        yield from (p for p in itertools.permutations(own) if p != own)
    elif ndim > 1:
        yield own[::-1]


def _arrangements(view: np.ndarray, shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    for order in _orders(view.ndim):
        arranged = view if order == tuple(range(view.ndim)) else np.transpose(view, order)
        yield arranged
        if arranged.shape != shape and arranged.size == int(np.prod(shape, dtype=np.int64)):
            yield arranged.reshape(shape)  # a copy where no view is possible: skipped


def rebuilt_view(value: np.ndarray, view: np.ndarray) -> np.ndarray | None:
    """The arrangement of ``view`` (the judge's argument as an array) that shares its memory and
    equals ``value`` (the answer as decoded), shape and dtype included; ``None`` if none does."""
    if view.dtype != value.dtype:
        return None
    nan = value.dtype.kind in "fc"
    for candidate in _arrangements(view, tuple(value.shape)):
        if candidate.shape == value.shape and np.may_share_memory(candidate, view) \
                and np.array_equal(candidate, value, equal_nan=nan):
            return candidate
    return None
