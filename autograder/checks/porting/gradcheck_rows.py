"""q3_gradcheck: S and A summed along one dimension in backward (``sum-over-one-dim``, blind
round zj).

``S = (x ** 3).sum(dim=-1, keepdim=True)`` and ``A = x.abs().sum(dim=-1, keepdim=True)`` ("keepdim
so S and A broadcast against x") while the forward sums over all of x: the same sums for a 1-D
x (the lesson's, the public test's) and a (1, k) one, but for a 2-D x of several rows each row
gets its own S and A. The shaped checks' 2-D x (``gradcheck_shapes``) shows it: a wrong
gradient there is named when it is the replay with S, A or both summed along one dimension
(each row's, or each column's) and that replay is not the right gradient.
"""

from __future__ import annotations

import torch

from .common import allclose

NAME = "sum-over-one-dim"

#: What was summed per dimension: (told, S per dim, A per dim)
_WHICH = (("S and A", True, True), ("S", True, False), ("A", False, True))


def _told(dim: int) -> str:
    return "dim=-1 (each row's own sum)" if dim == -1 else "dim=0 (each column's own sum)"


def per_dim(got: torch.Tensor, x: torch.Tensor, upstream: float,
            rtol: float, atol: float) -> tuple[str, str] | None:
    """``(NAME, what the student is told)`` when ``got`` (with or without the upstream factor)
    is the gradient with S and/or A summed along one dimension of a 2-D ``x``; else None."""
    if x.dim() != 2 or not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return None
    x = x.detach().double()
    sign = torch.sign(x)
    S_all, A_all = (x ** 3).sum(), x.abs().sum()
    right = 3 * x ** 2 / (1 + A_all) - S_all * sign / (1 + A_all) ** 2
    for dim in (-1, 0):
        S_dim, A_dim = (x ** 3).sum(dim, keepdim=True), x.abs().sum(dim, keepdim=True)
        for which, s_per, a_per in _WHICH:
            S, A = (S_dim if s_per else S_all), (A_dim if a_per else A_all)
            wrong = 3 * x ** 2 / (1 + A) - S * sign / (1 + A) ** 2
            if allclose(wrong, right, rtol, atol):
                continue  # the same sums at this x: it cannot be told here
            if any(allclose(got, factor * wrong, rtol, atol) for factor in (upstream, 1.0)):
                return NAME, (
                    f"It matches the gradient with {which} summed along {_told(dim)}: for this "
                    f"x of shape {tuple(x.shape)} every {'row' if dim == -1 else 'column'} "
                    f"used its own {which}, where f sums over ALL entries of x: S = "
                    f"{float(S_all):.6g} and A = {float(A_all):.6g} are scalars, the same for "
                    "every entry. Compute them with .sum() and no dim ((x ** 3).sum(), "
                    "x.abs().sum()): a scalar broadcasts against x of any shape, and for a "
                    "1-D x (or a single row) the per-row sum hides the difference.")
    return None
