"""q1_logreg: gradient descent on mini-batches or a row subset, not every row (``mini-batches``,
blind round zm).

A loop that switches to mini-batches once X has more than some number of rows ("bigger data
sets go through in batches"), or trains on ``X[:k]`` only, is the full-batch run on every data
set up to that size (the lesson's 200 rows, every ordinary draw) and parts from it above. The
regimes check asks (earlier draws stay the seed's own) a problem of 300-700 rows, and later one
of 1100-2100 rows (more than a batch of 1024 holds, red team rt-10); a wrong
answer there is replayed (float64) on batches of each size in ``SIZES`` taken in turn (cycling
through the rows, or restarting each epoch) and on the first ``k`` rows only, with the loss
recorded on the batch or on every row; it is named when one replay fits the losses and the
full-batch run does not.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import torch
import torch.nn.functional as F

from ..closeness import float_list
from ..result import Verdict, with_probe
from .logreg_diagnosis import matches

NAME = "mini-batches"
#: The batch sizes tried (the replay needs the batch smaller than X).
SIZES = (32, 50, 64, 100, 128, 200, 256, 500, 512, 1000, 1024)
#: The losses compared: the first ones (a long run's replays would cost seconds each).
PREFIX = 12

Rows = Callable[[int, int, int], slice]  # (step, batch size, m) -> the rows of that step
SCHEDULES: dict[str, Rows] = {
    "cycling": lambda s, k, m: slice((s * k) % m, (s * k) % m + k),
    "per epoch": lambda s, k, m: slice((s % -(-m // k)) * k, (s % -(-m // k) + 1) * k),
    "first rows": lambda s, k, m: slice(0, k),
}


def replay(X: torch.Tensor, y: torch.Tensor, lr: float, steps: int, k: int, rows: Rows,
           on_batch: bool) -> torch.Tensor:
    """The losses of gradient descent on ``rows``' batches of ``k`` (float64), recorded on the
    batch or on every row."""
    X64, y64 = X.double(), y.double()
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    losses = []
    for s in range(steps):
        at = rows(s, k, X.shape[0])
        loss = F.binary_cross_entropy_with_logits(X64[at] @ w + b, y64[at])
        if not on_batch:
            with torch.no_grad():
                losses.append(float(F.binary_cross_entropy_with_logits(X64 @ w + b, y64)))
        else:
            losses.append(float(loss.detach()))
        gw, gb = torch.autograd.grad(loss, (w, b))
        with torch.no_grad():
            w -= lr * gw
            b -= lr * gb
    return torch.tensor(losses, dtype=torch.float64)


def _fits(got: torch.Tensor, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int,
          right: torch.Tensor) -> Iterator[tuple[int, str]]:
    for k in SIZES:
        if k >= X.shape[0]:
            break
        for name, rows in SCHEDULES.items():
            for on_batch in (True, False):
                if matches(got, replay(X, y, lr, steps, k, rows, on_batch), right):
                    yield k, name


def batched(verdict: Verdict, got: Any, X: torch.Tensor, y: torch.Tensor, lr: float,
            steps: int, right: list[float]) -> Verdict:
    """``verdict``, named ``mini-batches`` when the losses in ``got`` are a
    replay on mini-batches or a row subset and not the full-batch run ``right``."""
    if verdict.ok or verdict.misconception is not None or steps < 2 \
            or not (isinstance(got, (tuple, list)) and len(got) == 3):
        return verdict
    losses = got[2]
    if not (float_list(losses) and len(losses) == steps):
        return verdict
    n = min(steps, PREFIX)
    found = next(_fits(torch.tensor(losses[:n], dtype=torch.float64), X, y, lr, n,
                       torch.tensor(right[:n], dtype=torch.float64)), None)
    if found is None:
        return verdict
    k, how = found
    what = f"the first {k} rows only" if how == "first rows" else \
        f"mini-batches of {k} rows ({how})"
    return with_probe(verdict, {
        "id": NAME, "established": f"the losses are a replay on {what}", "calls": []},
        misconception=NAME, message=(
        f"{verdict.message.rstrip()} X here has {X.shape[0]} rows, and the losses are those "
        f"of gradient descent on {what}: gradient descent as the lesson writes it uses every "
        "row each step (the mean loss over all of X); mini-batches or a row subset give a "
        "different (stochastic) trajectory, the same as full-batch only while the data fit "
        "in one batch. Compute the loss on X @ w + b for the whole X every step."))
