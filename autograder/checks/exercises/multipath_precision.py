"""q3_multipath: multipath_grads or split_path_grads computed in a lower precision than the
contract's float32 (leaves made in float16 or bfloat16, float32 leaves cast to one inside w,
or the gradients cast to one on the way out), recognised by replaying the function through that dtype: named ``low-precision``
only where a replay reproduces both returned values exactly and the float32 one does not
(``fitted``), and again at a point whose values that dtype rounds (``confirmed``). Right
wherever every input and result is exact in that dtype, as the lesson's (3.0, 4.0) is."""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from ..describing import fmt
from ..result import Verdict
from .accumulation_precision import DTYPES, LOW_PRECISION, told
from .multipath_repeated import elsewhere

#: Where a replay puts the dtype, and how the message says what the student did.
WHERE = {
    "leaf": "the leaves made in {d} (torch.tensor(float(x0), dtype=torch.{d}, "
            "requires_grad=True), .{m}()), so that the product, the square and every gradient "
            "are {d} numbers too",
    "compute": "float32 leaves cast to {d} inside w (each leaf's .{m}() in the product and "
               "the square), so that each path's gradient is a {d} number",
    "read": "each gradient cast to {d} on the way out (x.grad.{m}().item())",
}
#: Points for the confirming call whose values both dtypes round beyond the check's
#: tolerance; the second for when the failing call was at the first.
CONFIRM_POINTS = ((0.3, 1.7), (-1.7, 0.3))


def _replay(x0: float, y0: float, split: bool, leaf: torch.dtype,
            read: torch.dtype | None = None,
            compute: torch.dtype | None = None) -> tuple[float, float]:
    """The contract's function with its leaves made in ``leaf``, each cast to ``compute``
    inside w, each gradient read after a cast to ``read`` (no cast where ``None``)."""
    def make(v: float) -> torch.Tensor:
        return torch.tensor(v, dtype=leaf, requires_grad=True)

    def cast(t: torch.Tensor) -> torch.Tensor:
        return t if compute is None else t.to(compute)

    if split:
        a, b, y = make(x0), make(x0), make(y0)
        (cast(a) * cast(y).detach() + cast(b) ** 2).backward()
        grads = (a.grad, b.grad)
    else:
        x, y = make(x0), make(y0)
        (cast(x) * cast(y) + cast(x) ** 2).backward()
        grads = (x.grad, y.grad)
    return tuple((g if read is None else g.to(read)).item() for g in grads)  # type: ignore


def _same(got: tuple[float, float], replayed: tuple[float, float]) -> bool:
    return all(g == r or (math.isnan(g) and math.isnan(r)) for g, r in zip(got, replayed))


def fitted(got: tuple[float, float], x0: float, y0: float, split: bool
           ) -> tuple[torch.dtype, list[str]] | None:
    """The first dtype with places (``WHERE``) whose replay equals both values of ``got``,
    and those places; ``None`` when none does, or when the float32 replay does too."""
    if _same(got, _replay(x0, y0, split, torch.float32)):
        return None
    for dtype in DTYPES:
        places = [place for place, replayed in (
            ("leaf", _replay(x0, y0, split, dtype)),
            ("compute", _replay(x0, y0, split, torch.float32, compute=dtype)),
            ("read", _replay(x0, y0, split, torch.float32, dtype))) if _same(got, replayed)]
        if places:
            return dtype, places
    return None


def low_precision(got: tuple[float, float], x0: float, y0: float,
                  split: bool) -> tuple[str, str] | None:
    """``(LOW_PRECISION, why)`` when a replay through float16 or bfloat16 reproduces ``got``
    (every place that does, told together: they give the same numbers here); else ``None``."""
    found = fitted(got, x0, y0, split)
    if found is None:
        return None
    dtype, places = found
    name, ways, alike = told(dtype, places, WHERE)
    function = "split_path_grads" if split else "multipath_grads"
    rounded = ", ".join(f"{fmt(v)} is {fmt(torch.tensor(v, dtype=dtype).item(), 10)}"
                        for v in dict.fromkeys((x0, y0)))
    return LOW_PRECISION, (
        f"Both values are what {function} returns when it computes in {name}{alike}: {ways}. "
        f"{name} keeps {DTYPES[dtype]} significant bits (about "
        f"{round(DTYPES[dtype] * math.log10(2))} decimal digits): in {name} {rounded}, and "
        "every product, square and sum is rounded again. Make the leaves in the default "
        "float32, torch.tensor(float(x0), requires_grad=True) (or float64), and read .item() "
        "without a cast.")


def confirmed(verdict: Verdict, fn: Callable, name: str, x0: Any, y0: Any, split: bool,
              judge: Callable[..., Verdict], reference: Callable) -> Verdict:
    """``verdict`` (named ``LOW_PRECISION`` at ``(x0, y0)``) kept when a call at a point whose
    values the dtype rounds (``CONFIRM_POINTS``) is replayed by the same dtype; else the
    answer judged again without that reading."""
    first = fitted(tuple(verdict.evidence.got), float(x0), float(y0), split)

    def holds(other: tuple[float, float], point: tuple[float, float]) -> bool:
        found = fitted(other, *point, split)
        return first is not None and found is not None and found[0] == first[0]

    return elsewhere(verdict, fn, name, (x0, y0), holds, reference,
                     "replayed in the same dtype at another point",
                     lambda: judge(tuple(verdict.evidence.got), x0, y0, precision=False),
                     points=CONFIRM_POINTS)
