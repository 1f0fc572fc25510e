"""q1_accumulation: a square_grads computed in a lower precision than the contract's float32
(a float16 or bfloat16 leaf, the square taken in it, or the gradient cast to it on the way
out), recognised by replaying the contract's loop through that dtype: the name is given only
where a replay reproduces every returned value exactly (``low_precision``)."""

from __future__ import annotations

import math
from typing import Callable

import torch

from ..describing import fmt

LOW_PRECISION = "low-precision"
#: The dtypes tried, with their significant bits (the stored mantissa and the implicit one).
DTYPES = {torch.float16: 11, torch.bfloat16: 8}
#: Where a replay puts the dtype, and how the message says what the student did.
WHERE = {
    "leaf": "the leaf made in {d} (torch.tensor(p0, dtype=torch.{d}), .{m}()), so that each "
            "gradient and their running sum in p.grad are {d} numbers too",
    "square": "the square taken in {d} from a float32 leaf (p.{m}() ** 2), or p0 rounded to "
              "{d} before the leaf was made",
    "read": "each gradient cast to {d} on the way out (p.grad.{m}().item())",
}
#: A p0 for the confirming call whose rounding each dtype shows beyond the check's tolerance,
#: and another for when the failing call had that one.
CONFIRM_P0S = (0.3, -1.7)


def _replay(p0: float, repeats: int, clear: bool, leaf: torch.dtype,
            square: Callable[[torch.Tensor], torch.Tensor],
            read: Callable[[torch.Tensor], float]) -> list[float]:
    """The contract's loop with the leaf made in ``leaf``, ``square(p)`` backpropagated and
    ``read(p.grad)`` recorded."""
    p = torch.tensor(p0, dtype=leaf, requires_grad=True)
    out = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        square(p).backward()
        out.append(read(p.grad))
    return out


def replay32(p0: float, repeats: int, clear: bool) -> list[float]:
    """What the contract's loop returns with its float32 leaf: the gradients as p.grad holds
    them, before anything is done to them."""
    return _replay(p0, repeats, clear, torch.float32, lambda p: p ** 2, lambda g: g.item())


def replays(p0: float, repeats: int, clear: bool, dtype: torch.dtype) -> dict[str, list[float]]:
    """What ``square_grads(p0, repeats, clear)`` returns with ``dtype`` in each place."""
    def plain(g: torch.Tensor) -> float:
        return g.item()

    return {
        "leaf": _replay(p0, repeats, clear, dtype, lambda p: p ** 2, plain),
        "square": _replay(p0, repeats, clear, torch.float32, lambda p: p.to(dtype) ** 2, plain),
        "read": _replay(p0, repeats, clear, torch.float32, lambda p: p ** 2,
                        lambda g: g.to(dtype).item()),
        "read64": _replay(p0, repeats, clear, torch.float64, lambda p: p ** 2,
                          lambda g: g.to(dtype).item()),
    }


def _same(got: list[float], replayed: list[float]) -> bool:
    return len(got) == len(replayed) and all(
        g == r or (math.isnan(g) and math.isnan(r)) for g, r in zip(got, replayed))


def fitted(got: list[float], p0: float, repeats: int, clear: bool
           ) -> tuple[torch.dtype, list[str]] | None:
    """The first dtype with places (``WHERE``) whose replay equals every value of ``got``, and
    those places, or ``None``. A rounding that changed nothing is never a fit: the caller only
    asks about answers that failed."""
    for dtype in DTYPES:
        places = [place for place, replayed in replays(p0, repeats, clear, dtype).items()
                  if _same(got, replayed)]
        if places:
            return dtype, list(dict.fromkeys(place.removesuffix("64") for place in places))
    return None


def told(dtype: torch.dtype, places: list[str], where: dict[str, str]) -> tuple[str, str, str]:
    """How a replay through ``dtype`` at ``places`` is told: the dtype's name, each place's
    way from ``where`` (formatted with the name and its tensor method), and whether several
    places gave the same numbers."""
    name = str(dtype).replace("torch.", "")
    method = {torch.float16: "half", torch.bfloat16: "bfloat16"}[dtype]
    ways = "; or ".join(where[place].format(d=name, m=method) for place in places)
    return name, ways, " (these give the same numbers here)" if len(places) > 1 else ""


def low_precision(got: list[float], p0: float, repeats: int, clear: bool) -> str | None:
    """The message for a wrong ``got`` that a replay through float16 or bfloat16 reproduces
    value for value (every way of computing in that dtype that does, told together: they give
    the same numbers here); ``None`` when none does."""
    found = fitted(got, p0, repeats, clear)
    if found is None:
        return None
    dtype, places = found
    name, ways, alike = told(dtype, places, WHERE)
    rounded = torch.tensor(p0, dtype=dtype).item()
    overflow = (f" {name}'s largest finite value is {fmt(torch.finfo(dtype).max)}, so a "
                "gradient beyond it became inf." if any(math.isinf(g) for g in got) else "")
    return (f"Every value is what square_grads returns when it computes in {name}{alike}: "
            f"{ways}. {name} keeps {DTYPES[dtype]} significant bits (about "
            f"{round(DTYPES[dtype] * math.log10(2))} decimal digits): p0={fmt(p0)} is "
            f"{fmt(rounded, 10)} in {name}.{overflow} Make the leaf in the default float32, "
            "p = torch.tensor(p0, requires_grad=True) (or float64), square it as it is and "
            "read p.grad.item() without a cast.")


def confirm_p0(p0: float) -> float:
    """Where the confirming call of ``check_square_grads`` is made."""
    return CONFIRM_P0S[1] if p0 == CONFIRM_P0S[0] else CONFIRM_P0S[0]
