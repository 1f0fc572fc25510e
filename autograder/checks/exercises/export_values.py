"""q5_numpy: why an export's values differ from t's, when its type, shape and dtype are right.

Each cause is tried in turn and the first whose evidence holds names the answer
(``value_cause``): the storage read as if t were contiguous (``storage_order``, here: for a
contiguous view that starts inside its storage the same read as the next, and told so); the
view read with its strides from its storage's start, ignoring its offset (``export_offset``); a
square t transposed (``export_shape``); int64 values sent through a float (``export_float``);
float values rounded (``export_rounded``).
"""

from __future__ import annotations

import numpy as np
import torch

from .export_float import THROUGH_FLOAT, through_float
from .export_offset import OFFSET_IGNORED, offset_ignored
from .export_rounded import VALUES_ROUNDED, rounded_values
from .export_shape import TRANSPOSED, transposed_values

STORAGE_ORDER = "read-in-storage-order"


def storage_order(got: np.ndarray, t: torch.Tensor, expected: np.ndarray, export: str) -> str:
    """What an export is told whose values are ``t.numel()`` consecutive elements of the
    storage ``t`` views, in the order they lie there (from the storage's start, or from t's
    first element: what the student's process holds of a view starts there), where that is
    not t's values; ``""`` when they are not."""
    src = t.detach().cpu()
    flat = torch.empty(0, dtype=src.dtype).set_(src.untyped_storage())
    n, offset = src.numel(), src.storage_offset()
    for start in dict.fromkeys((0, offset)):
        if start + n > flat.numel():
            continue
        memory = flat[start:start + n].numpy().reshape(got.shape)
        if np.array_equal(got, memory) and not np.array_equal(memory, expected):
            at = f" and storage offset {offset}" if offset else ""
            return (f" These are {n} consecutive elements of the memory t views, in the order "
                    "they lie there, reshaped to t's shape: t's storage was read as if t were "
                    "contiguous (bytes(t.untyped_storage()), t.storage(), a read at "
                    "t.data_ptr(), as_strided with contiguous strides, ravel(order='K')). But t "
                    f"is a view, with strides {tuple(src.stride())}{at}: its elements are "
                    "picked from the storage through its strides and storage offset, so the "
                    "storage holds them in another order, or other values between or before "
                    "them. Export the values, not the "
                    f"memory: {export} (NumPy follows the strides), or t.contiguous() first.")
    return ""


def value_cause(got: np.ndarray, t: torch.Tensor, expected: np.ndarray,
                export: str) -> tuple[str, str | None]:
    """``(hint, name)`` of the first cause whose evidence holds, ``("", None)`` if none."""
    causes = ((STORAGE_ORDER, lambda: storage_order(got, t, expected, export)),
              (OFFSET_IGNORED, lambda: offset_ignored(got, t, expected, export)),
              (TRANSPOSED, lambda: transposed_values(got, t, expected, export)),
              (THROUGH_FLOAT, lambda: through_float(got, t, expected)),
              (VALUES_ROUNDED, lambda: rounded_values(got, t, expected)))
    for name, cause in causes:
        hint = cause()
        if hint:
            return hint, name
    return "", None
