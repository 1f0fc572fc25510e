"""Decoding tensors and numpy arrays, on the judge's side: each is charged to the reply's
``Budget`` at its declared size before it is built.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from .fields import dimensions, guarded, integer, number, numpy_dtype, torch_dtype
from .limits import MAX_DEPTH, Budget, WireError, count_text


def _shown(shape: list[int]) -> str:
    return "(" + ", ".join(count_text(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


@guarded
def decode_tensor(d: Any, depth: int = 0, budget: Budget | None = None) -> torch.Tensor:
    """A tensor from ``encode_tensor``'s data, within ``budget`` (a fresh one when None);
    raises ``WireError`` only."""
    budget = budget if budget is not None else Budget()
    if depth > MAX_DEPTH or not isinstance(d, dict):
        raise WireError("tensor expected")
    dtype = torch_dtype(d.get("dtype"))
    shape, stride = dimensions(d.get("shape"), "shape"), dimensions(d.get("stride"), "stride")
    if len(shape) != len(stride):
        raise WireError("shape and stride differ in length")
    numel = math.prod(shape)
    device = d.get("device", "cpu")
    if not isinstance(device, str) or len(device) > 40:
        raise WireError("device name expected")
    values = d.get("values")
    meta = device == "meta" or values is None
    # storage the view reaches: what is allocated and must have been sent, element by element
    span = 0 if numel == 0 or meta else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    # charged at the larger of the elements the view shows and the storage it reaches: an
    # expanded view (stride 0) costs what it would cost the judge to materialise it
    budget.take_elements(max(numel, span), dtype.itemsize, f"a tensor of shape {_shown(shape)}")
    if meta:
        t = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    else:
        if not isinstance(values, list) or len(values) != span:
            raise WireError("tensor values do not match its shape and strides")
        flat = _flat(values, dtype)
        t = torch.empty_strided(shape, stride, dtype=dtype)
        if span:
            torch.as_strided(t, (span,), (1,), 0).copy_(flat)
        if device.startswith("cuda") and torch.cuda.is_available():
            t = t.to(device)
    requires_grad = bool(d.get("requires_grad")) and (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and d.get("is_leaf", True):
        t.requires_grad_()
    elif requires_grad:
        t = t.detach().requires_grad_().view_as(t)  # a non-leaf with a history, like the original
    if d.get("parameter"):
        t = nn.Parameter(t.detach(), requires_grad=requires_grad)
    if d.get("grad") is not None and t.is_leaf and t.requires_grad:
        t.grad = decode_tensor(d["grad"], depth + 1, budget).detach()
    return t


def _flat(values: list, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_complex:
        if not all(isinstance(v, list) and len(v) == 2 for v in values):
            raise WireError("complex tensor values must be [real, imag] pairs")
        pairs = [complex(number(re), number(im)) for re, im in values]
        return torch.tensor(pairs, dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor([number(v) for v in values], dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        if not all(isinstance(v, bool) for v in values):
            raise WireError("bool tensor values must be booleans")
        return torch.tensor(values, dtype=dtype)
    return torch.tensor([integer(v, "tensor value") for v in values], dtype=dtype)


@guarded
def decode_ndarray(d: Any, budget: Budget | None = None) -> np.ndarray:
    """An array from ``encode_ndarray``'s data, within ``budget`` (a fresh one when None);
    raises ``WireError`` only."""
    budget = budget if budget is not None else Budget()
    if not isinstance(d, dict):
        raise WireError("array expected")
    dtype = np.dtype(numpy_dtype(d.get("dtype")))
    shape = dimensions(d.get("shape"), "shape")
    numel = math.prod(shape)
    budget.take_elements(numel, dtype.itemsize, f"an array of shape {_shown(shape)}")
    values = d.get("values")
    if not isinstance(values, list) or len(values) != numel:
        raise WireError("array values do not match its shape")
    if dtype.kind == "f":
        values = [number(v) for v in values]
    elif dtype.kind in "iu":
        values = [integer(v, "array value") for v in values]
    elif not all(isinstance(v, bool) for v in values):
        raise WireError("bool array values must be booleans")
    arr = np.array(values, dtype=dtype).reshape(shape)
    arr.flags.writeable = bool(d.get("writeable", True))
    return arr
