"""Decoding tensors and numpy arrays, on the judge's side, and the checks every decoder shares:
numbers, integers, dtype names, shapes (``_unfloat``, ``_int``, ``_torch_dtype``,
``_np_dtype``, ``_shape``) and ``_guarded``, which turns whatever torch or numpy raise on a
malformed value into ``WireError``. A tensor or array is charged to the reply's ``Budget`` at
its declared size before it is built.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch
from torch import nn

from .limits import DTYPES, MAX_DEPTH, MAX_DIMS, Budget, WireError, _count


def _unfloat(v: Any) -> float:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise WireError(f"not a number: {v!r:.40}")
    return float(v)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise WireError(f"{what} must be an integer, got {v!r:.40}")
    return v


def _guarded(build):
    """``build``'s errors as ``WireError``: whatever torch or numpy raise on a malformed value
    (a RuntimeError for a stride that overflows, an OverflowError for a number out of a dtype's
    range, a MemoryError) is the sender's malformed value, never the judge's crash."""
    @functools.wraps(build)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except WireError:
            raise
        except MemoryError:
            raise WireError("the grader ran out of memory reading it") from None
        except Exception as exc:  # noqa: BLE001 - see the docstring
            raise WireError(f"malformed value ({type(exc).__name__}: {str(exc)[:200]})") from None
    return guarded


def _torch_dtype(name: Any) -> torch.dtype:
    if not isinstance(name, str) or name not in DTYPES:
        raise WireError(f"unknown dtype {str(name)[:40]!r}" if isinstance(name, str)
                        else "dtype name expected")
    return DTYPES[name]


NP_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64")


def _np_dtype(name: Any) -> str:
    if not isinstance(name, str) or name not in NP_DTYPES:
        raise WireError(f"unknown numpy dtype {str(name)[:40]!r}" if isinstance(name, str)
                        else "numpy dtype name expected")
    return name


def _shape(values: Any, what: str) -> list[int]:
    if not isinstance(values, list) or len(values) > MAX_DIMS:
        raise WireError(f"{what} must be a list of at most {MAX_DIMS} integers")
    dims = [_int(v, what) for v in values]
    if any(v < 0 for v in dims):
        raise WireError(f"{what} must not be negative")
    return dims


def _shown(shape: list[int]) -> str:
    return "(" + ", ".join(_count(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


@_guarded
def decode_tensor(d: Any, depth: int = 0, budget: Budget | None = None) -> torch.Tensor:
    """A tensor from ``encode_tensor``'s data, within ``budget``; raises ``WireError`` only."""
    return _tensor(d, depth, budget if budget is not None else Budget())


def _tensor(d: Any, depth: int, budget: Budget) -> torch.Tensor:
    if depth > MAX_DEPTH or not isinstance(d, dict):
        raise WireError("tensor expected")
    dtype = _torch_dtype(d.get("dtype"))
    shape, stride = _shape(d.get("shape"), "shape"), _shape(d.get("stride"), "stride")
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
        t.grad = _tensor(d["grad"], depth + 1, budget).detach()
    return t


def _flat(values: list, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_complex:
        if not all(isinstance(v, list) and len(v) == 2 for v in values):
            raise WireError("complex tensor values must be [real, imag] pairs")
        pairs = [complex(_unfloat(re), _unfloat(im)) for re, im in values]
        return torch.tensor(pairs, dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor([_unfloat(v) for v in values], dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        if not all(isinstance(v, bool) for v in values):
            raise WireError("bool tensor values must be booleans")
        return torch.tensor(values, dtype=dtype)
    return torch.tensor([_int(v, "tensor value") for v in values], dtype=dtype)


@_guarded
def decode_ndarray(d: Any, budget: Budget | None = None) -> np.ndarray:
    """An array from ``encode_ndarray``'s data, within ``budget``; raises ``WireError`` only."""
    return _ndarray(d, budget if budget is not None else Budget())


def _ndarray(d: Any, budget: Budget) -> np.ndarray:
    if not isinstance(d, dict):
        raise WireError("array expected")
    dtype = np.dtype(_np_dtype(d.get("dtype")))
    shape = _shape(d.get("shape"), "shape")
    numel = math.prod(shape)
    budget.take_elements(numel, dtype.itemsize, f"an array of shape {_shown(shape)}")
    values = d.get("values")
    if not isinstance(values, list) or len(values) != numel:
        raise WireError("array values do not match its shape")
    if dtype.kind == "f":
        values = [_unfloat(v) for v in values]
    elif dtype.kind in "iu":
        values = [_int(v, "array value") for v in values]
    elif not all(isinstance(v, bool) for v in values):
        raise WireError("bool array values must be booleans")
    arr = np.array(values, dtype=dtype).reshape(shape)
    arr.flags.writeable = bool(d.get("writeable", True))
    return arr
