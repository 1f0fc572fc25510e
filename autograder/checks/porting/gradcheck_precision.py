"""q3_gradcheck: a float64 backward computed in a lower precision (``low-precision``, blind
round zn).

A backward that works in float32 (``x.float()``, a ``torch.float32`` constant, a tensor built by
``torch.tensor(...)`` without a dtype) and casts back is off by float32's rounding, about 1e-7
relative: gradcheck's default rtol=1e-3 passes it, the grader's float64 tolerance does not.
Named only when both hold: the error is within a few of that dtype's rounding steps of the
gradient's terms (not float64's, or the answer would have passed; not more, which is a wrong
formula), and the values are that dtype's numbers (``x.grad`` itself, or ``x.grad`` over the
upstream gradient when the cast came before the product with ``grad_output``), which a
float64 computation's almost never are. float16 and bfloat16 are recognised the same way.
"""

from __future__ import annotations

import torch

NAME = "low-precision"
#: The lower dtypes recognised, and how far (in their rounding steps of the largest term) the
#: answer may be from the float64 gradient.
DTYPES = (torch.float32, torch.bfloat16, torch.float16)
STEPS = 32


def _representable(values: torch.Tensor, dtype: torch.dtype) -> bool:
    """Every value is a ``dtype`` number, up to float64's rounding of a product."""
    back = values.to(dtype).double()
    return bool(torch.isfinite(back).all()
                and ((values - back).abs() <= 4 * torch.finfo(torch.float64).eps
                     * values.abs()).all())


def lower_precision(got: torch.Tensor, x: torch.Tensor, upstream: float,
                    right: torch.Tensor) -> tuple[str, str] | None:
    """``(NAME, advice)`` when the float64 ``got`` is ``right`` (the float64 gradient times
    ``upstream``) computed in a lower dtype, else None."""
    if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
            and x.dtype == torch.float64 and got.shape == right.shape and upstream != 0):
        return None
    x64 = x.detach().double()
    A, S = x64.abs().sum(), (x64 ** 3).sum()
    terms = torch.cat([(3 * x64 ** 2 / (1 + A)).reshape(-1), (S / (1 + A) ** 2).reshape(1)])
    scale = abs(upstream) * float(terms.abs().max())
    values = got.detach().cpu().reshape(-1)
    err = float((values - right.reshape(-1)).abs().max())
    for dtype in DTYPES:
        if err > STEPS * torch.finfo(dtype).eps * scale:
            continue
        if _representable(values, dtype) or _representable(values / upstream, dtype):
            return NAME, advice(dtype, err, scale)
    return None


def advice(dtype: torch.dtype, err: float, scale: float) -> str:
    """What a backward computed in ``dtype`` is told."""
    name = str(dtype).removeprefix("torch.")
    return (f"x.grad is the right gradient to {name}'s rounding (largest error {err:.2g}, "
            f"{err / scale:.1g} of its largest term) and its values are {name} numbers: the "
            f"backward computed in {name} and cast back to float64. gradcheck's default "
            "tolerances (rtol=1e-3) pass it, but float64 work must stay in float64: no .float(), "
            "torch.float32 constants, or tensors built with torch.tensor(...) without a dtype "
            "inside backward; compute in x's dtype (x.new_tensor, dtype=x.dtype).")
