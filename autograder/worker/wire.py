"""Values as plain JSON, both ways: tensors as dtype/shape/strides/values, modules as an
architecture plus their state, anything else unknown as an opaque type name.

Decoding never evaluates code and never unpickles: it builds floats, lists, tensors and known
layers from numbers and names. A float subclass whose ``__eq__`` lies is sent as its plain
float value, so the judge compares the number, not the object.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

MAX_ELEMENTS = 2_000_000  # per tensor/array; a larger value is refused, not truncated
MAX_ITEMS = 100_000  # per list/tuple/dict
MAX_TEXT = 10_000  # characters of a str or repr
MAX_DEPTH = 20

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "complex64", "complex128")}
LAYERS = {"Linear": nn.Linear, "ReLU": nn.ReLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid,
          "Dropout": nn.Dropout, "Identity": nn.Identity}


class WireError(ValueError):
    """A value that cannot cross the wall (too big, too deep, malformed)."""


def _float(x: float) -> Any:
    return x if math.isfinite(x) else repr(x)  # "nan", "inf", "-inf": JSON has no such numbers


def _unfloat(v: Any) -> float:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise WireError(f"not a number: {v!r:.40}")
    return float(v)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def encode(x: Any, depth: int = 0) -> dict:
    """``x`` as tagged JSON-able data. Unknown objects become ``{"t": "opaque"}``."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    # exact-type tests first: a subclass of float/list is sent as its plain data
    if x is None:
        return {"t": "none"}
    if x is Ellipsis:
        return {"t": "ellipsis"}
    if isinstance(x, bool):
        return {"t": "bool", "v": bool(x)}
    if isinstance(x, int):
        return {"t": "int", "v": int.__index__(x)}
    if isinstance(x, float):  # includes numpy float64 (a float subclass)
        return {"t": "float", "v": _float(float.__float__(x))}
    if isinstance(x, (np.generic,)) and not isinstance(x, np.ndarray):
        return {"t": "npscalar", "dtype": str(x.dtype), "v": encode(x.item(), depth + 1)}
    if isinstance(x, str):
        return {"t": "str", "v": str.__str__(x)[:MAX_TEXT]}
    if isinstance(x, torch.Tensor):
        return encode_tensor(x, depth)
    if isinstance(x, np.ndarray):
        return encode_ndarray(x)
    if isinstance(x, (list, tuple)):
        items = list.__iter__(x) if isinstance(x, list) else tuple.__iter__(x)
        seq = [encode(v, depth + 1) for _, v in zip(range(MAX_ITEMS + 1), items)]
        if len(seq) > MAX_ITEMS:
            raise WireError(f"sequence longer than {MAX_ITEMS}")
        return {"t": "list" if isinstance(x, list) else "tuple", "v": seq}
    if isinstance(x, dict):
        if len(x) > MAX_ITEMS:
            raise WireError(f"dict larger than {MAX_ITEMS}")
        return {"t": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)]
                                   for k, v in dict.items(x)]}
    if isinstance(x, torch.device):
        return {"t": "device", "v": str(x)}
    if isinstance(x, torch.dtype):
        return {"t": "dtype", "v": dtype_name(x)}
    if isinstance(x, nn.Module):
        return encode_module(x)
    if isinstance(x, torch.optim.Optimizer):
        return encode_optimizer(x, depth)
    return {"t": "opaque", "type": f"{type(x).__module__}.{type(x).__qualname__}"[:200],
            "callable": callable(x)}


def encode_tensor(t: torch.Tensor, depth: int = 0) -> dict:
    """Dtype, shape, strides, storage offset and the storage values the view can reach."""
    if type(t) not in (torch.Tensor, nn.Parameter):
        # a subclass is sent as its plain data: its own ``tolist``/``detach``/``__eq__`` or
        # ``__torch_function__`` must not choose what the judge reads
        with torch._C.DisableTorchFunctionSubclass():
            t = torch.Tensor.as_subclass(t, torch.Tensor)
    base = t.detach()
    if base.device.type == "meta":
        values, span = None, 0
    else:
        span = _span(base)
        if span > MAX_ELEMENTS:
            raise WireError(f"tensor of {span} elements is larger than {MAX_ELEMENTS}")
        flat = torch.as_strided(base, (span,), (1,), base.storage_offset()).cpu()
        values = [_float(v) if isinstance(v, float) else v for v in _plain_list(flat)]
    grad = t.grad if t.is_leaf and t.requires_grad else None
    return {"t": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape),
            "stride": list(base.stride()), "values": values, "device": str(t.device),
            "requires_grad": bool(t.requires_grad), "is_leaf": bool(t.is_leaf),
            "parameter": isinstance(t, nn.Parameter),
            "grad": encode_tensor(grad, depth + 1) if grad is not None else None}


def _span(t: torch.Tensor) -> int:
    """Elements from the view's first element to its last one in storage."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))


def _plain_list(flat: torch.Tensor) -> list:
    if flat.dtype == torch.bfloat16 or flat.dtype == torch.float16:
        flat = flat.float()
    if flat.is_complex():
        return [[_float(v.real), _float(v.imag)] for v in flat.tolist()]
    return flat.tolist()


def encode_ndarray(a: np.ndarray) -> dict:
    if a.size > MAX_ELEMENTS:
        raise WireError(f"array of {a.size} elements is larger than {MAX_ELEMENTS}")
    if a.dtype.kind not in "biuf":
        return {"t": "opaque", "type": f"numpy.ndarray[{a.dtype}]", "callable": False}
    values = np.ascontiguousarray(a).reshape(-1).tolist()
    return {"t": "ndarray", "dtype": str(a.dtype), "shape": list(a.shape),
            "values": [_float(v) if isinstance(v, float) else v for v in values],
            "writeable": bool(a.flags.writeable)}


def encode_module(m: nn.Module) -> dict:
    """A flat ``nn.Sequential`` (or one layer) of known layers: architecture plus state."""
    layers = list(m) if isinstance(m, nn.Sequential) else [m]
    arch = []
    for layer in layers:
        kind = type(layer).__name__
        if type(layer) is not LAYERS.get(kind):
            return {"t": "opaque", "type": f"module {kind}", "callable": True,
                    "state": _state(m), "training": bool(m.training)}
        arch.append([kind, _layer_args(layer)])
    return {"t": "module", "sequential": isinstance(m, nn.Sequential), "arch": arch,
            "state": _state(m), "training": bool(m.training)}


def _state(m: nn.Module) -> dict:
    return {name: encode_tensor(p) for name, p in m.state_dict(keep_vars=True).items()}


def _layer_args(layer: nn.Module) -> dict:
    if isinstance(layer, nn.Linear):
        return {"in": layer.in_features, "out": layer.out_features, "bias": layer.bias is not None}
    if isinstance(layer, nn.Dropout):
        return {"p": layer.p}
    return {}


def encode_optimizer(opt: torch.optim.Optimizer, depth: int,
                     refs: dict[int, list] | None = None) -> dict:
    """Settings and parameters per group; ``refs`` maps ``id(param)`` to ``[arg, name]`` when a
    parameter *is* a parameter of a module the caller passed in (identity matters)."""
    groups = []
    for group in opt.param_groups:
        settings = {k: encode(v, depth + 1) for k, v in group.items()
                    if k != "params" and isinstance(v, (bool, int, float, str, type(None)))}
        groups.append({"settings": settings,
                       "params": [{"ref": (refs or {}).get(id(p)),
                                   "tensor": encode_tensor(p, depth + 1)}
                                  for p in group["params"]]})
    return {"t": "optimizer", "type": type(opt).__name__, "groups": groups}


# ---------------------------------------------------------------------------------------------
# decoding: numbers and names in, objects out; nothing is evaluated


class Opaque:
    """Stands for a value the wire does not carry (a class instance, a function...)."""

    def __init__(self, type_name: str, is_callable: bool):
        self.type_name, self.is_callable = type_name, is_callable

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise WireError(f"{what} must be an integer, got {v!r:.40}")
    return v


def decode(d: Any, depth: int = 0) -> Any:
    """Rebuild a value from ``encode``'s data; raise ``WireError`` on anything malformed."""
    if depth > MAX_DEPTH or not isinstance(d, dict) or not isinstance(d.get("t"), str):
        raise WireError("malformed value")
    t = d["t"]
    if t == "none":
        return None
    if t == "ellipsis":
        return Ellipsis
    if t == "bool":
        if not isinstance(d.get("v"), bool):
            raise WireError("bool expected")
        return d["v"]
    if t == "int":
        return _int(d.get("v"), "int")
    if t == "float":
        return _unfloat(d.get("v"))
    if t == "str":
        if not isinstance(d.get("v"), str):
            raise WireError("str expected")
        return d["v"][:MAX_TEXT]
    if t == "npscalar":
        return np.dtype(_np_dtype(d.get("dtype"))).type(decode(d.get("v"), depth + 1))
    if t in ("list", "tuple"):
        items = d.get("v")
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise WireError("sequence expected")
        seq = [decode(v, depth + 1) for v in items]
        return seq if t == "list" else tuple(seq)
    if t == "dict":
        pairs = d.get("v")
        if not isinstance(pairs, list) or len(pairs) > MAX_ITEMS:
            raise WireError("dict expected")
        return {_key(decode(k, depth + 1)): decode(v, depth + 1) for k, v in pairs}
    if t == "device":
        return torch.device(str(d.get("v")))
    if t == "dtype":
        return _torch_dtype(d.get("v"))
    if t == "tensor":
        return decode_tensor(d, depth)
    if t == "ndarray":
        return decode_ndarray(d)
    if t == "module":
        return decode_module(d)
    if t == "optimizer":
        return decode_optimizer(d, depth)
    if t == "opaque":
        return Opaque(str(d.get("type"))[:200], bool(d.get("callable")))
    raise WireError(f"unknown value tag {t!r:.40}")


def _key(k: Any) -> Any:
    if isinstance(k, (list, dict)) or isinstance(k, Opaque):
        raise WireError("unhashable dict key")
    return k


def _torch_dtype(name: Any) -> torch.dtype:
    if name not in DTYPES:
        raise WireError(f"unknown dtype {name!r:.40}")
    return DTYPES[name]


def _np_dtype(name: Any) -> str:
    allowed = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"}
    if name not in allowed:
        raise WireError(f"unknown numpy dtype {name!r:.40}")
    return name


def _shape(values: Any, what: str) -> list[int]:
    if not isinstance(values, list) or len(values) > 16:
        raise WireError(f"{what} must be a short list")
    dims = [_int(v, what) for v in values]
    if any(v < 0 for v in dims):
        raise WireError(f"{what} must not be negative")
    return dims


def decode_tensor(d: dict, depth: int = 0) -> torch.Tensor:
    dtype = _torch_dtype(d.get("dtype"))
    shape, stride = _shape(d.get("shape"), "shape"), _shape(d.get("stride"), "stride")
    if len(shape) != len(stride):
        raise WireError("shape and stride differ in length")
    numel = math.prod(shape)
    if numel > MAX_ELEMENTS:
        raise WireError("tensor too large")
    device = str(d.get("device", "cpu"))
    if device == "meta" or d.get("values") is None:
        t = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    else:
        span = 0 if numel == 0 else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
        values = d["values"]
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
        t.grad = decode_tensor(d["grad"], depth + 1).detach()
    return t


def _flat(values: list, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_complex:
        pairs = [complex(_unfloat(re), _unfloat(im)) for re, im in values]
        return torch.tensor(pairs, dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor([_unfloat(v) for v in values], dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        if not all(isinstance(v, bool) for v in values):
            raise WireError("bool tensor values must be booleans")
        return torch.tensor(values, dtype=dtype)
    return torch.tensor([_int(v, "tensor value") for v in values], dtype=dtype)


def decode_ndarray(d: dict) -> np.ndarray:
    dtype = _np_dtype(d.get("dtype"))
    shape = _shape(d.get("shape"), "shape")
    values = d.get("values")
    if not isinstance(values, list) or len(values) != math.prod(shape) \
            or len(values) > MAX_ELEMENTS:
        raise WireError("array values do not match its shape")
    if np.dtype(dtype).kind == "f":
        values = [_unfloat(v) for v in values]
    elif np.dtype(dtype).kind in "iu":
        values = [_int(v, "array value") for v in values]
    arr = np.array(values, dtype=dtype).reshape(shape)
    arr.flags.writeable = bool(d.get("writeable", True))
    return arr


def decode_module(d: dict) -> nn.Module:
    arch = d.get("arch")
    if not isinstance(arch, list) or len(arch) > 64:
        raise WireError("module architecture expected")
    layers = [_layer(item) for item in arch]
    module = nn.Sequential(*layers) if d.get("sequential") else layers[0]
    state = d.get("state") or {}
    if not isinstance(state, dict):
        raise WireError("module state expected")
    with torch.no_grad():
        for name, tensor in module.state_dict(keep_vars=True).items():
            if name not in state:
                raise WireError(f"module state lacks {name}")
            value = decode_tensor(state[name])
            if value.shape != tensor.shape:
                raise WireError(f"module state {name} has the wrong shape")
            tensor.data = value.detach()  # keep the sender's dtype (a float64 net stays one)
    module.train(bool(d.get("training", True)))
    return module


def _layer(item: Any) -> nn.Module:
    if not (isinstance(item, list) and len(item) == 2 and item[0] in LAYERS
            and isinstance(item[1], dict)):
        raise WireError("unknown layer")
    kind, args = item
    if kind == "Linear":
        return nn.Linear(_int(args.get("in"), "in"), _int(args.get("out"), "out"),
                         bias=bool(args.get("bias", True)))
    if kind == "Dropout":
        return nn.Dropout(_unfloat(args.get("p", 0.5)))
    return LAYERS[kind]()


OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW,
              "RMSprop": torch.optim.RMSprop, "Adagrad": torch.optim.Adagrad}


def decode_optimizer(d: dict, depth: int, resolve=None) -> Any:
    """Rebuild a known optimizer class over the parameters it holds. ``resolve(ref)`` returns the
    caller's own parameter object for a reference, so identity survives the trip."""
    kind = d.get("type")
    groups = d.get("groups")
    if kind not in OPTIMIZERS or not isinstance(groups, list) or not groups:
        return Opaque(f"optimizer {kind!r:.40}", False)
    param_groups = []
    for group in groups:
        params = []
        for entry in group.get("params", []):
            ref = entry.get("ref")
            own = resolve(ref) if (resolve and ref is not None) else None
            params.append(own if own is not None else
                          nn.Parameter(decode_tensor(entry["tensor"], depth + 1).detach()))
        settings = {k: decode(v, depth + 1) for k, v in group.get("settings", {}).items()
                    if isinstance(k, str)}
        param_groups.append({**settings, "params": params})
    opt = OPTIMIZERS[kind](param_groups)
    return opt
