"""q4_vjp: what a VJP whose weights were combined across entries (``weights-mixed``) or applied
twice (``weights-applied-twice``) gives, for the diagnosis of a wrong answer in ``vjp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MIXED_FIX = ("instead of multiplying each entry of v by its own weight. Weight each entry: "
             "v.backward(weights), or (weights * v).sum().backward().")


def mixed_weights(xs: np.ndarray, ws: np.ndarray) -> list[tuple[str, Any, str]]:
    """What backpropagating a contraction that combines weights across entries predicts.

    ``torch.inner(weights, v).sum()`` and ``(weights @ v.T).sum()`` give each v[i, j] the
    weight ``weights[:, j].sum()`` (axis 0 summed), ``(weights.T @ v).sum()`` the row sum
    (axis 1), ``weights.sum() * v.sum()`` the total; for square inputs ``(weights @ v).sum()``
    and ``(v @ weights).sum()`` lay the column (row) sums along the other axis. All but the
    last equal the weighted sum for 1-D inputs, where they are right: 2-D ones tell them apart.
    """
    across = ("a contraction such as torch.inner(weights, v).sum() or (weights @ v.T).sum() "
              "mixes entries of different rows; it agrees with the weighted sum only for 1-D "
              "inputs")

    def summed(axes: tuple[int, ...]) -> tuple[str, str]:
        if len(axes) == ws.ndim:
            return ("weights.sum(), the sum of all the weights", "weights.sum() * v.sum() "
                    "multiplies the totals, so every entry gets the same, total weight")
        if ws.ndim == 2:
            return (f"weights.sum({axes[0]}), the weights summed "
                    f"{'down each column' if axes == (0,) else 'along each row'} and broadcast",
                    across)
        return f"the weights summed over dims {list(axes)} and broadcast", across

    subsets = [tuple(a for a in range(ws.ndim) if k >> a & 1) for k in range(1, 2 ** ws.ndim)]
    predictions = [(*summed(axes), ws.sum(axis=axes, keepdims=True)) for axes in subsets]
    if ws.ndim == 2 and ws.shape[0] == ws.shape[1]:
        predictions += [("the column sums weights.sum(0) laid along the rows", "(weights @ v)"
                         ".sum() gives each v[i, j] the column sum of weights[:, i]",
                         ws.sum(axis=0)[:, None]),
                        ("the row sums weights.sum(1) laid along the columns", "(v @ weights)"
                         ".sum() gives each v[i, j] the row sum of weights[j, :]",
                         ws.sum(axis=1)[None, :])]
    return [("weights-mixed", 2.0 * xs * np.broadcast_to(factor, xs.shape),
             f"This is 2*x times {what}: the weights were combined across entries ({how}), "
             f"{MIXED_FIX}") for what, how, factor in predictions]


TWICE_HINT = ("This is 2*x*weights**2, the right gradient times the weights again: the weights "
              "were applied twice (in v and again as the vector given to backward, or squared). "
              "The vector given to backward already carries the weights: either compute "
              "v = x ** 2 and call v.backward(weights), or call "
              "(weights * x ** 2).sum().backward() with no vector.")
