"""q5_numpy: an export that reads t's storage with t's strides but from the storage's start.

``np.frombuffer(bytes(t.untyped_storage()))`` viewed by ``as_strided`` with t's shape and
strides (or ``torch.as_strided(t, t.shape, t.stride(), 0)``, a read at
``t.untyped_storage().data_ptr()``) is right for every tensor that starts at its storage's first
element (contiguous tensors, ``base.T``, ``base[::2]``) and wrong for a view that starts inside
it (``base[1::2]``, ``base[:, 2:]``): t's storage offset was ignored. Named
``storage-offset-ignored`` where the answer is exactly that read and not t's values. The hidden
view that shows it (``draw_offset_view``) is drawn last in ``check_export``; the worker gets a
view's storage offset and the storage before it over the wire (``wire.encoding._lead``).
"""

from __future__ import annotations

import numpy as np
import torch

OFFSET_IGNORED = "storage-offset-ignored"


def draw_offset_view(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``(t, base)``: a non-contiguous view that starts inside its storage, every other row
    from the second (``base[1::2]``) or the columns from the k-th on (``base[:, k:]``), of a
    float32, float64 or int64 base."""
    dtype = (torch.float32, torch.float64, torch.int64)[int(rng.integers(3))]
    rows, cols = int(rng.integers(4, 7)), int(rng.integers(3, 7))
    if dtype == torch.int64:
        base = torch.from_numpy(rng.integers(-50, 50, size=(rows, cols)))
    else:
        base = torch.from_numpy(rng.uniform(-10.0, 10.0, size=(rows, cols))).to(dtype)
    if rng.integers(2):
        return base[1::2], base
    return base[:, int(rng.integers(1, cols - 1)):], base


def offset_ignored(got: np.ndarray, t: torch.Tensor, expected: np.ndarray, export: str) -> str:
    """What an export is told whose values are t's read with t's shape and strides from the
    first element of its storage, where t starts further in (and that read is not t's
    values); ``""`` otherwise."""
    src = t.detach().cpu()
    offset = src.storage_offset()
    if not offset or src.numel() == 0:
        return ""
    flat = torch.empty(0, dtype=src.dtype).set_(src.untyped_storage())
    if 1 + sum((n - 1) * s for n, s in zip(src.shape, src.stride())) > flat.numel():
        return ""
    read = torch.as_strided(flat, src.shape, src.stride(), 0).numpy()
    if got.shape != read.shape or not np.array_equal(got, read) \
            or np.array_equal(read, expected):
        return ""
    return (f" These are the elements t's strides {tuple(src.stride())} pick from the start of "
            f"its storage: t starts at element {offset} of its storage (t.storage_offset() = "
            f"{offset}: it is a view that begins inside another tensor's memory, as base[1::2] "
            "or base[:, 2:] do); the read began at 0 (as_strided over np.frombuffer or a "
            "storage's data_ptr, with t's strides but not its offset), so it picked elements "
            f"before and around t's. Export the values, not the memory: {export} handles views "
            "(their strides and their offset).")
