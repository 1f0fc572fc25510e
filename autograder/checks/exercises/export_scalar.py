"""q5_numpy: a NumPy scalar for a 0-d tensor (blind round zj).

``t.detach().cpu().numpy() * 1`` (``+ 0``, ``a[()]``, ``np.round(a)``, ``a.sum()``): NumPy
arithmetic and indexing on a 0-d array return a NumPy scalar (``np.float64``), not an array.
``np.float64`` is a Python float too, so the ``.item()`` hint for Python numbers would blame a
call the export never made: named ``zero-dim-scalar`` and told what returned the scalar."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

ZERO_DIM_SCALAR = "zero-dim-scalar"


def zero_dim_scalar(got: Any, t: torch.Tensor) -> str:
    """What a number (a NumPy scalar, or the Python number the sealed judge's wire makes of
    one) returned for the 0-d tensor ``t`` is told; ``""`` otherwise."""
    if not (isinstance(got, (np.generic, float, int)) and not isinstance(got, bool)
            and t.dim() == 0):
        return ""
    kind = f"a NumPy scalar ({type(got).__name__})" if isinstance(got, np.generic) else "a number"
    return (f" t is 0-d, and the export returned {kind}, not a 0-d array: arithmetic or "
            "indexing on a 0-d array (a * 1, a + 0, a[()], np.round(a), a.sum()) returns a "
            "NumPy scalar, and .item() or float(t) a Python number, not an array. .copy() keeps "
            "a 0-d array: t.detach().cpu().numpy().copy() exports every shape alike.")
