"""q5_numpy: the first tensor exported again, the same object, after its values changed in
place (as a training step changes a parameter). An export kept between calls for the same
tensor (a cache keyed by ``id(t)`` or ``t.data_ptr()``: red team rt-7) gives the values it had
before: ``answer-cached``. The sealed judge's worker keeps the judge's tensor as the same
object between calls (``worker/kept_arguments.py``), so such a cache goes stale there as it
does in-process."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..describing import plain
from ..result import PASS, Evidence, Verdict

NAME = "answer-cached"


def changed_in_place(export_numpy: Callable, rng: np.random.Generator, t: torch.Tensor,
                     expected_of: Callable[[torch.Tensor], np.ndarray],
                     judge: Callable[[Any, torch.Tensor, np.ndarray], Verdict],
                     shown: str, export: str) -> Verdict:
    """``export_numpy(t)`` once more, ``t`` (exported before) changed in place first by 1 to 4
    in every entry; judged as any export (``judge``), named ``answer-cached`` when it holds
    exactly the values ``t`` had before the change."""
    old = expected_of(t)
    step = torch.from_numpy(rng.integers(1, 5, size=tuple(t.shape))).to(t.dtype)
    with torch.no_grad():
        t.add_(step)
    expected = expected_of(t)
    got, failure = call(export_numpy, "export_numpy", t)
    if failure is not None:
        return failure
    verdict = judge(got, t, expected)
    if verdict.ok:
        return PASS
    if not (isinstance(got, np.ndarray) and got.shape == old.shape and np.array_equal(got, old)):
        return verdict
    return Verdict(False, f"{shown}, called again on the same tensor after its values changed in "
                   "place (as a training step changes a parameter), returned the values t had "
                   "before: an export kept between calls for the same tensor (a cache keyed by "
                   "id(t) or t.data_ptr()) goes stale when t changes in place. Export t's values "
                   f"at each call: {export}.", NAME,
                   Evidence({"t": plain(t)}, expected.tolist(), plain(got), tolerance="exact"))
