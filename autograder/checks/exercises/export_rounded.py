"""q5_numpy: float values rounded on the way out (blind round zg: ``np.round(arr, 6)``).

An export that rounds (``np.round``/``np.around``, ``torch.round(t, decimals=k)``, a value
formatted to k decimals and read back) is exact on integers and on the few floats with k
decimals or fewer, and off in the last digits elsewhere. Named ``values-rounded`` when the
answer equals t's values rounded to k decimals (0 to 8) by one of those routes, in t's dtype,
and the rounding changed at least one of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import torch

VALUES_ROUNDED = "values-rounded"
DECIMALS = range(9)


def _roundings(src: torch.Tensor, expected: np.ndarray, k: int) -> Iterator[np.ndarray]:
    """t's values rounded to ``k`` decimals by each route a student takes, in t's dtype."""
    routes: tuple[Callable[[], np.ndarray], ...] = (
        lambda: np.round(expected, k),
        lambda: torch.round(src, decimals=k).numpy(),
        lambda: np.array([round(float(v), k) for v in expected.reshape(-1)],
                         dtype=expected.dtype).reshape(expected.shape),
    )
    for route in routes:
        yield route()


def rounded_values(got: np.ndarray, t: torch.Tensor, expected: np.ndarray) -> str:
    """The hint for an answer that is t's float values rounded to a number of decimals, ``""``
    otherwise."""
    if not t.is_floating_point() or got.shape != expected.shape or got.dtype != expected.dtype:
        return ""
    src = t.detach().cpu()
    for k in DECIMALS:
        for rounded in _roundings(src, expected, k):
            if np.array_equal(rounded, expected) or not np.array_equal(got, rounded):
                continue
            at = tuple(int(i) for i in np.argwhere(rounded != expected)[0])
            was, came = (np.format_float_positional(a[at]) for a in (expected, got))
            return (f" t{list(at)} is {was} and came back as {came}: every value "
                    f"is t's rounded to {k} decimal{'s' if k != 1 else ''} (np.round, "
                    "torch.round(..., decimals=k), or a value formatted and read back). An "
                    "export hands over the values exactly as t holds them, every digit; round "
                    "only where numbers are shown to people, never in the data.")
    return ""
