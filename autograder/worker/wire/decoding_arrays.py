"""Decoding tensors and numpy arrays, on the judge's side: each is charged to the reply's
``Budget`` at its declared size before it is built, then read from the base64 text of its
bytes, which must be exactly the bytes of the storage it reaches.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np
import torch
from torch import nn

from .fields import dimensions, guarded, integer, numpy_dtype, torch_dtype
from .limits import DTYPES, MAX_DEPTH, Budget, WireError, count_text


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
    # the storage's elements before the view's first one, sent with it (encoding._lead)
    lead = integer(d.get("offset", 0), "offset")
    if lead < 0 or (lead and (meta or numel == 0)):
        raise WireError("a storage offset needs a view with values, and is never negative")
    # storage the view reaches: what is allocated and must have been sent, byte for byte
    span = 0 if numel == 0 or meta else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    # charged at the larger of the elements the view shows and the storage it reaches: an
    # expanded view (stride 0) costs what it would cost the judge to materialise it
    budget.take_elements(max(numel, lead + span), dtype.itemsize,
                         lambda: f"a tensor of shape {_shown(shape)}")
    if meta:
        t = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    else:
        flat = _raw(values, lead + span, dtype.itemsize, dtype == torch.bool,
                    "tensor values do not match its shape and strides")
        if lead or span > numel:
            # a view that reaches more storage than its own elements (an offset, a strided
            # slice): a view of a fresh 1-D base holding that storage, so that ``t._base`` is
            # there as it is for the caller's view (a student's strided batch has a base)
            store = torch.frombuffer(flat, dtype=torch.uint8).view(dtype).clone()
            t = store.as_strided(shape, stride, lead)
        elif span and span == numel and stride == _row_major(shape):
            # the common case in one copy: a fresh tensor (resizable, no view of the text's
            # buffer) at a third of the general path's time; through numpy where it has the
            # dtype (one torch call fewer)
            same = _NUMPY.get(dtype)
            t = (torch.from_numpy(np.frombuffer(flat, same).reshape(shape)).clone() if same
                 else torch.frombuffer(flat, dtype=dtype).view(shape).clone())
        else:
            t = torch.empty_strided(shape, stride, dtype=dtype)
            if span:
                as_bytes = torch.frombuffer(flat, dtype=torch.uint8)
                torch.as_strided(t, (span,), (1,), 0).copy_(as_bytes.view(dtype))
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


#: numpy's dtype for each torch dtype of the wire that numpy has (all but bfloat16)
_NUMPY = {dtype: np.dtype(name) for name, dtype in DTYPES.items() if name != "bfloat16"}


def _row_major(shape: list[int]) -> list[int]:
    """The strides of a contiguous tensor of ``shape`` (as torch gives them: a dimension of
    size 1 keeps the stride of the next one)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _raw(text: Any, count: int, itemsize: int, boolean: bool, mismatch: str) -> bytearray:
    """The ``count`` elements' bytes from their base64 ``text``: its length is checked before
    anything is decoded, and a boolean's bytes must each be 0 or 1."""
    size = count * itemsize
    if not isinstance(text, str) or len(text) != 4 * -(-size // 3):
        raise WireError(mismatch)
    raw = bytearray(base64.b64decode(text, validate=True))  # a bad character: ValueError
    if len(raw) != size:
        raise WireError(mismatch)
    if boolean and raw.translate(None, b"\x00\x01"):
        raise WireError("bool values must be 0 or 1")
    return raw


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
    budget.take_elements(numel, dtype.itemsize, lambda: f"an array of shape {_shown(shape)}")
    raw = _raw(d.get("values"), numel, dtype.itemsize, dtype.kind == "b",
               "array values do not match its shape")
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape) if numel else np.empty(shape, dtype)
    arr.flags.writeable = bool(d.get("writeable", True))
    return arr
