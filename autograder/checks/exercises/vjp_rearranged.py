"""q4_vjp: the weights handed to backward rearranged, not only transposed (``weights-transposed``).

``v.backward(weights.t().reshape(v.shape))`` ("v^T J: the upstream vector enters transposed")
is right for 1-D x and for a 2-D x with a dimension of size 1, where the rearrangement changes
nothing; on any other 2-D x the reshape reads the transposed weights row by row, so each v[i, j]
meets the weight of another position, and no shape error tells. ``patterns`` adds, after the
square ``2 * x * weights.T`` of ``vjp_transposed``, the answers of the rearrangements a
student reaches for while transposing: the dims reversed (``.t()``, ``.T``, ``.mT``,
``permute``) then read into x's shape (``reshape``, ``view``, ``flatten().view_as``, the
weights read column by column), and the weights read into x's reversed shape then transposed
back (``weights.reshape(m, n).t()``). Each is a full-array prediction: on the diagnosis path a
wrong answer is named only where one of them gives every entry and the right answer is not it
(``first_match``), so nothing runs for a correct answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .vjp_transposed import TRANSPOSED
from .vjp_transposed import patterns as square_patterns

#: What every rearrangement is told after what it did (``rearrangements``).
REARRANGED_HINT = (
    "On 1-D x, or a 2-D x with a dimension of size 1, nothing moves, which is why those cases "
    "agree. backward(weights) takes weights of the output's shape, one per entry of v: the "
    "pullback pairs weights[i] with x[i], and v.backward(weights) already computes the "
    "vector-Jacobian product v^T J, so no transpose or reshape is needed: pass the weights as "
    "they are, v.backward(weights).")


def rearrangements(ws: np.ndarray) -> list[tuple[str, np.ndarray, str]]:
    """The weights as each rearrangement of a transposing student leaves them, in x's shape
    (``ws``'s), with what it did: for an (n, m) ``ws``, the transpose read row by row into
    (n, m), and ``ws`` read into (m, n) then transposed. Empty below 2 dims, where a transpose
    is the identity."""
    if ws.ndim < 2:
        return []
    shape = ws.shape
    return [("weights.t().reshape(x.shape)", ws.T.reshape(shape),
             "the weights were rearranged: the transpose reverses their dims, and the reshape "
             "(or view, or flatten) reads the transposed weights row by row into x's shape, so "
             "each v[i, j] met the weight of another position"),
            ("weights.reshape(reversed shape).t()", ws.reshape(shape[::-1]).T,
             "the weights were rearranged: the reshape to x's reversed shape regroups them row "
             "by row, and the transpose turns that back into x's shape, so each v[i, j] met the "
             "weight of another position")]


def patterns(xs: np.ndarray, ws: np.ndarray) -> list[tuple[str, Any, str]]:
    """``vjp_transposed``'s square ``2 * x * weights.T``, then ``2 * x`` times each
    rearrangement of the weights (``rearrangements``)."""
    return [*square_patterns(xs, ws),
            *((TRANSPOSED, 2.0 * xs * moved,
               f"This is 2 * x * {how} on an x of shape {tuple(xs.shape)}: {what}. "
               f"{REARRANGED_HINT}") for how, moved, what in rearrangements(ws))]
