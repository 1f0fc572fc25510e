"""q2_microbatch: logits and labels of different shapes, broadcast by the loss.

A micro-batch's logits written as a column, ``Xj @ w.unsqueeze(1)`` of shape ``(b_j, 1)`` (the
NumPy series' column vectors), against labels of shape ``(b_j,)``: a hand-written loss
``yj * logsigmoid(z) + ...`` broadcasts the two to a ``(b_j, b_j)`` matrix whose entry
``(k, l)`` pairs logit ``k`` with label ``l`` (a row ``(1, b_j)`` against ``(b_j, 1)`` labels
gives its transpose). Its mean over the ``b_j * b_j`` entries has the gradient
``Xj.T @ (sigmoid(Xj @ w) - mean(yj)) / b_j``: each example's residual is taken against the
micro-batch's mean label, not its own. (``F.binary_cross_entropy_with_logits`` refuses the
two shapes; only a loss written by hand broadcasts.)
"""

from __future__ import annotations

import torch

NAME = "logits-labels-broadcast"
ADVICE = ("It matches a loss whose logits and labels have different shapes: logits as a column "
          "(b_j, 1) (Xj @ w.unsqueeze(1), as in the NumPy series) against labels of shape "
          "(b_j,) broadcast to a (b_j, b_j) matrix that pairs each logit with every label of "
          "the micro-batch, and its mean makes each example's residual sigmoid(z_k) minus the "
          "micro-batch's mean label instead of its own label (right only where the labels of "
          "a micro-batch are all equal). Give the logits the labels' shape: Xj @ w (shape "
          "(b_j,)), or squeeze the column (z.squeeze(1)), and check loss terms have shape "
          "(b_j,) before the mean; F.binary_cross_entropy_with_logits raises on mismatched "
          "shapes instead of broadcasting.")


def broadcast_grad(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                   sizes: list[int]) -> torch.Tensor:
    """The replay (float64) of each micro-batch's loss averaged over the (b_j, b_j) matrix of
    every logit against every label, weighted by b_j / B: ``sum_j Xj.T @ (sigmoid(Xj @ w) -
    mean(yj)) / B``."""
    B, start, total = sum(sizes), 0, torch.zeros(X.shape[1], dtype=torch.float64)
    w64 = w.detach().double()
    for size in sizes:
        Xj, yj = X[start:start + size].double(), y[start:start + size].double()
        total = total + Xj.T @ (torch.sigmoid(Xj @ w64) - yj.mean()) / B
        start += size
    return total
