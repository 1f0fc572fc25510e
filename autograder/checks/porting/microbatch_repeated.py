"""q2_microbatch: offsets found by a size's first micro-batch (``wrong-offsets``, blind round zn)
or its last (a dict from each size to its start, written in order so a repeated size keeps the
last one: blind round zs).

``start = sum(sizes[:sizes.index(b_j)])`` (or a dict from each size to its first start) is the
running offset while every size differs, as the lesson's and every ordinary draw's do; once a
size repeats, every micro-batch of that size starts at the first one's rows: those rows are
used again and the rows after them never. The check's last problem (drawn after the others,
which stay the seed's own) has sizes ``[k, k, m]``; ``microbatch_mistakes`` replays the slicing
(``FIRST_OF_SIZE``) and names it ``wrong-offsets``, told with ``advice``.
"""

from __future__ import annotations

import numpy as np
import torch

#: The key of this slicing in ``microbatch_mistakes.SLICINGS``.
FIRST_OF_SIZE = "first-of-size"
#: The key of the other slicing: a size's last micro-batch.
LAST_OF_SIZE = "last-of-size"
#: How each slicing is told among the others.
HOW = ("X[start : start + b_j] with start = sum(sizes[:sizes.index(b_j)]), the rows of the "
       "first micro-batch of that size")
HOW_LAST = ("X[start : start + b_j] with start looked up by size ({size: start} filled in "
            "order, so a repeated size keeps its last start), the rows of the last "
            "micro-batch of that size")


def bounds(sizes: list[int], j: int, offset: int) -> tuple[int, int]:
    """Micro-batch ``j``'s ``(start, stop)`` when it starts where its size first occurs."""
    start = sum(sizes[:sizes.index(sizes[j])])
    return start, start + sizes[j]


def bounds_last(sizes: list[int], j: int, offset: int) -> tuple[int, int]:
    """Micro-batch ``j``'s ``(start, stop)`` when it starts where its size last occurs."""
    last = max(i for i, size in enumerate(sizes) if size == sizes[j])
    start = sum(sizes[:last])
    return start, start + sizes[j]


def _ranges(rows: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3-5, 9"``."""
    spans: list[list[int]] = []
    for r in rows:
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)


def advice(sizes: list[int], slicing: str = FIRST_OF_SIZE) -> str:
    """What a run sliced so on ``sizes`` is told: the rows used twice and those never used."""
    where, which = (bounds_last, "last") if slicing == LAST_OF_SIZE else (bounds, "first")
    seen: dict[int, int] = {}
    for j in range(len(sizes)):
        for r in range(*where(sizes, j, 0)):
            seen[r] = seen.get(r, 0) + 1
    again = [r for r in sorted(seen) if seen[r] > 1]
    never = [r for r in range(sum(sizes)) if r not in seen]
    return (f"with sizes {sizes}, a repeated size starts again at its {which} micro-batch's rows, "
            f"so the micro-batches overlap: rows {_ranges(again)} repeat and rows "
            f"{_ranges(never)} are never used. It is right only while every size differs. "
            "Each micro-batch must start where the previous one ended: a running offset "
            "(start += b_j after each micro-batch) or torch.split(X, sizes), never a position "
            "looked up by size (sizes.index, a dict keyed by size)")


def draw_repeated(rng: np.random.Generator, stale: bool
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """A problem like ``microbatch.draw_problem``'s with sizes ``[k, k, m]``, ``m != k``."""
    k = int(rng.integers(4, 16))
    m = int(rng.choice([s for s in range(4, 24) if s != k]))
    sizes, n = [k, k, m], int(rng.integers(2, 7))
    X = torch.tensor(rng.standard_normal((sum(sizes), n)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, sum(sizes)), dtype=torch.float32)
    w = torch.tensor(rng.normal(0.0, 1.0, n), dtype=torch.float32, requires_grad=True)
    if stale:
        w.grad = torch.tensor(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n),
                              dtype=torch.float32)
    return w, X, y, sizes
