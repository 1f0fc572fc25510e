"""q5_numpy: a tensor holding NaN and infinities (a diverged loss, a log of 0), exported as it
is: an export copies every value, the non-finite ones too. Red team rt-9's ``np.nan_to_num``
on the copy was right on every finite tensor and kept 4/4; asked last (``non_finite``), after
every finite case passed, and judged here with NaN equal to NaN."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from ..calling import call
from ..describing import describe
from ..result import PASS, Evidence, Verdict

NAME = "non-finite-changed"


def draw_non_finite(rng: np.random.Generator) -> torch.Tensor:
    """A float32 or float64 tensor of 6-12 entries, 2-4 rows: finite values with a NaN, an inf
    and a -inf at drawn places."""
    rows, cols = int(rng.integers(2, 5)), int(rng.integers(3, 4))
    values = rng.uniform(-10.0, 10.0, rows * cols)
    places = rng.choice(rows * cols, 3, replace=False)
    values[places] = [np.nan, np.inf, -np.inf]
    dtype = (torch.float32, torch.float64)[int(rng.integers(2))]
    return torch.from_numpy(values.reshape(rows, cols)).to(dtype)


def non_finite(export_numpy: Callable, rng: np.random.Generator, export: str) -> Verdict:
    """``export_numpy`` on ``draw_non_finite``'s tensor: the same shape, dtype and values,
    NaN where t has NaN and each infinity where t has it (``export``: how to write it)."""
    t = draw_non_finite(rng)
    expected = t.numpy().copy()
    got, failure = call(export_numpy, "export_numpy", t.clone())
    if failure is not None:
        return failure
    shown = f"export_numpy(a {str(t.dtype).replace('torch.', '')} tensor holding NaN and inf)"
    # as text: NaN and the infinities are no JSON numbers
    evidence = Evidence({"t": describe(t)}, describe(expected), describe(got), tolerance="exact")
    if not isinstance(got, np.ndarray) or got.shape != expected.shape \
            or got.dtype != expected.dtype:
        return Verdict(False, f"{shown} returned {describe(got)}; expected an array of shape "
                       f"{expected.shape} and dtype {expected.dtype}: {export}.", None, evidence)
    if np.array_equal(got, expected, equal_nan=True):
        return PASS
    replaced = bool(np.isfinite(got[~np.isfinite(expected)]).any())
    return Verdict(False, f"{shown} returned {describe(got)}; expected {describe(expected)}"
                   + (": NaN and the infinities became finite numbers (np.nan_to_num, a clip, "
                      "a fill). An export copies every value as it is, the non-finite ones "
                      "too: a NaN in a loss is what the caller needs to see. "
                      if replaced else ". ") + f"Export with {export}.",
                   NAME if replaced else None, evidence)
