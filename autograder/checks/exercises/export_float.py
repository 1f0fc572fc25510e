"""q5_numpy: int64 values sent through a float type and cast back.

``t.to(torch.float64).numpy().astype(np.int64)``, ``np.array(t.tolist(), dtype=float)
.astype(...)``, ``t.float()...``: float64 holds integers exactly only up to 2**53 (float32 up
to 2**24), so larger int64 values come back rounded to the nearest float. The lesson's and
most tensors' values are small, where this is exact: the check exports an int64 tensor with
large values (``draw_large``), and names ``values-through-float`` when every entry of the answer
is t's value rounded through float64 (or float32) and at least two of them differ from t's.

Float values sent through a narrower float on the way and cast back to t's dtype (blind round
zza: ``t.detach().to("cpu", torch.float32).numpy().astype(np.float64)``; ``.float()``,
``.half()``, ``.bfloat16()``, a float32 array then ``astype``): the dtype is t's own, the values
are t's rounded to float32 (float16, bfloat16), off in the last digits of almost every float64.
Named ``values-through-float`` too when every entry is t's value rounded through that narrower
type and at least one differs (random floats are never all exact in a narrower type by chance).
An answer returned in the narrower dtype itself is ``dtype-changed`` (checked first).
"""

from __future__ import annotations

import numpy as np
import torch

from .common import dtype_name

THROUGH_FLOAT = "values-through-float"
#: The float types an int64 can be sent through, with the largest integer below which every
#: integer is held exactly.
FLOATS = ((torch.float64, "float64", "2**53"), (torch.float32, "float32", "2**24"),
          (torch.bfloat16, "bfloat16", "2**8"))
#: The narrower float types a float tensor's values can be sent through, with the significant
#: decimal digits each keeps.
NARROWER = {torch.float64: ((torch.float32, "float32", "about 7"),
                            (torch.float16, "float16", "about 3"),
                            (torch.bfloat16, "bfloat16", "2 to 3")),
            torch.float32: ((torch.float16, "float16", "about 3"),
                            (torch.bfloat16, "bfloat16", "2 to 3"))}
DIGITS = {torch.float64: "about 16", torch.float32: "about 7"}


def draw_large(rng: np.random.Generator) -> torch.Tensor:
    """An int64 tensor whose values are mostly odd and above 2**53 in size, of either sign,
    with a few small ones (all below 2**62 in size, so that a float rounding stays in range)."""
    shape = (int(rng.integers(2, 4)), int(rng.integers(3, 6)))
    big = rng.integers(2 ** 53, 2 ** 62, size=shape, dtype=np.int64) | 1
    signs = rng.choice(np.array([-1, 1], dtype=np.int64), size=shape)
    values = big * signs
    values.flat[0] = 2 ** 53 + 1
    values.flat[-1] = int(rng.integers(-50, 50))
    return torch.from_numpy(values)


def large_ints(values: np.ndarray) -> str | None:
    """A few entries of an integer array holding values above 2**53 in size, every digit
    shown (``short`` shows floats, which would print two of them alike); ``None`` for any
    other array."""
    values = np.asarray(values)
    if values.dtype.kind not in "iu" or not values.size or np.abs(values).max() <= 2 ** 53:
        return None
    flat = [int(v) for v in values.reshape(-1)[:6]]
    return f"[{', '.join(map(str, flat))}{', ...' if values.size > 6 else ''}]"


def through_float(got: np.ndarray, t: torch.Tensor, expected: np.ndarray) -> str:
    """The hint for an answer that is ``t``'s int64 values rounded through a float type (at
    least two entries rounded), ``""`` otherwise."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return ""
    if t.dtype in NARROWER:
        return through_narrower(got, t, expected)
    if t.dtype != torch.int64:
        return ""
    src = t.detach().cpu()
    for dtype, name, limit in FLOATS:
        if not bool(torch.isfinite(src.to(dtype)).all()):
            continue  # out of that type's range: the cast back is not defined
        rounded = src.to(dtype).to(torch.int64).numpy()
        if int(np.sum(rounded != expected)) >= 2 and np.array_equal(got, rounded):
            at = tuple(int(i) for i in np.argwhere(rounded != expected)[0])
            return (f" t{list(at)} is {int(expected[at])} and came back as {int(got[at])}. "
                    f"Every value is t's rounded to the nearest {name}: the values were "
                    f"sent through {name} and cast back (t.to(torch.{name}), .double() or "
                    f".float(), np.array(..., dtype=float), then .astype(np.int64)). {name} "
                    f"holds every integer exactly only up to {limit} in size; int64 values "
                    "above that lose their last bits (2**53 + 1 comes back as 2**53). Keep the "
                    "values in their own dtype: t.detach().cpu().numpy().copy(), with no "
                    "float in between.")
    return ""


def through_narrower(got: np.ndarray, t: torch.Tensor, expected: np.ndarray) -> str:
    """The hint for an answer, in t's own float dtype, that is t's values rounded through a
    narrower float type (float32 for a float64 t, float16, bfloat16) and cast back, with at
    least one entry changed by it; ``""`` otherwise."""
    src = t.detach().cpu()
    own = dtype_name(t.dtype)
    for dtype, name, digits in NARROWER[t.dtype]:
        narrow = src.to(dtype)
        if not bool((torch.isfinite(narrow) | ~torch.isfinite(src)).all()):
            continue  # out of that type's range: not a rounding
        rounded = narrow.to(t.dtype).numpy()
        if np.array_equal(rounded, expected, equal_nan=True) or \
                not np.array_equal(got, rounded, equal_nan=True):
            continue
        at = tuple(int(i) for i in np.argwhere(rounded != expected)[0])
        was, came = (np.format_float_positional(a[at]) for a in (expected, got))
        return (f" t{list(at)} is {was} and came back as {came}: every value is t's rounded "
                f"to the nearest {name}. The values went through {name} on the way (.to("
                f"torch.{name}), .{_METHOD[name]}(), .to('cpu', torch.{name}), a {name} array) "
                f"and were cast back to {own} (.astype, .to): the dtype is t's again, but "
                f"{name} keeps {digits} significant digits where {own} keeps {DIGITS[t.dtype]}, "
                "and the digits lost on the way do not come back. Keep t's own dtype all the "
                "way: t.detach().cpu().numpy().copy(), with no other float in between.")
    return ""


_METHOD = {"float32": "float", "float16": "half", "bfloat16": "bfloat16"}
