"""Encoding, on the worker's side: any value as tagged JSON-able data (``encode``), tensors as
dtype/shape/strides and the storage their view reaches (its bytes as base64 text: exact bits,
NaN and -0.0 included, and a fraction of the JSON a list of floats takes), numpy arrays, modules as an
architecture plus their state, optimizers as settings and parameters per group; anything else
as an opaque type name. Subclasses are sent as their plain data.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np
import torch
from torch import nn

from ..optimizer_changes import replaced_methods, step_hooks
from .limits import LAYER_ARGS, LAYERS, MAX_DEPTH, MAX_ELEMENTS, MAX_ITEMS, MAX_TEXT, WireError


def _float(x: float) -> Any:
    return x if math.isfinite(x) else repr(x)  # "nan", "inf", "-inf": JSON has no such numbers


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
        item = x.item()
        if isinstance(item, np.generic):  # longdouble, clongdouble: no Python number holds it
            return _opaque(x)
        return {"t": "npscalar", "dtype": str(x.dtype), "v": encode(item, depth + 1)}
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
    return _opaque(x)


def _opaque(x: Any) -> dict:
    """``x`` as a type name only: nothing of it the judge could read as a value."""
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
        values, span, lead = None, 0, 0
    else:
        span = _span(base)
        lead = _lead(base, span)
        if lead + span > MAX_ELEMENTS:
            raise WireError(f"tensor of {lead + span} elements is larger than {MAX_ELEMENTS}")
        values = _storage_text(base, span, lead)
    grad = t.grad if t.is_leaf and t.requires_grad else None
    encoded = {"t": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape),
               "stride": list(base.stride()), "values": values, "device": str(t.device),
               "requires_grad": bool(t.requires_grad), "is_leaf": bool(t.is_leaf),
               "parameter": isinstance(t, nn.Parameter),
               "grad": encode_tensor(grad, depth + 1) if grad is not None else None}
    if lead:
        encoded["offset"] = lead
    return encoded


def _lead(t: torch.Tensor, span: int) -> int:
    """The storage offset sent with ``t`` (its storage's elements before its first one go
    too): a view that starts inside its storage (``base[1::2]``, ``base[:, 2:]``) arrives
    starting there, as a function called in the notebook would get it, where the storage
    before it is no larger than the view's own reach (the offset is dropped past that, and
    the view arrives in a storage of its own, as any tensor did before)."""
    offset = t.storage_offset()
    return offset if 0 < offset <= max(span, 1) and t.numel() else 0


def _span(t: torch.Tensor) -> int:
    """Elements from the view's first element to its last one in storage."""
    if t.is_contiguous():
        return t.numel()
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))


def _storage_text(base: torch.Tensor, span: int, lead: int = 0) -> str:
    """``raw_text`` of the ``span`` storage elements ``base`` reaches from its offset, after
    the ``lead`` ones before it (``_lead``). A
    contiguous CPU tensor's are its own elements, read through numpy in one step (a quarter
    of the general path's time, which every tensor of every call pays twice); dtypes numpy
    lacks (bfloat16) and conjugate or negative views take the general path."""
    if lead:
        return raw_text(torch.as_strided(base, (lead + span,), (1,), 0).cpu())
    if base.is_contiguous() and base.device.type == "cpu":
        try:
            return base64.b64encode(base.numpy()).decode("ascii")
        except (TypeError, RuntimeError):
            pass
    return raw_text(torch.as_strided(base, (span,), (1,), base.storage_offset()).cpu())


def raw_text(flat: torch.Tensor) -> str:
    """A one-dimensional tensor's elements as base64 text of their bytes (the machine's byte
    order: the worker and the judge share one machine)."""
    if flat.numel() == 0:
        return ""
    return base64.b64encode(flat.contiguous().view(torch.uint8).numpy()).decode("ascii")


def encode_ndarray(a: np.ndarray) -> dict:
    if a.size > MAX_ELEMENTS:
        raise WireError(f"array of {a.size} elements is larger than {MAX_ELEMENTS}")
    if a.dtype.kind not in "biuf":
        return {"t": "opaque", "type": f"numpy.ndarray[{a.dtype}]", "callable": False}
    values = base64.b64encode(np.ascontiguousarray(a).reshape(-1)).decode("ascii")
    return {"t": "ndarray", "dtype": str(a.dtype), "shape": list(a.shape), "values": values,
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
    # each layer's own mode too: setting ``training`` on the outer module alone leaves its
    # layers as they were, which a forward shows (red team rt-10)
    return {"t": "module", "sequential": isinstance(m, nn.Sequential), "arch": arch,
            "state": _state(m), "training": bool(m.training),
            "modes": [bool(layer.training) for layer in layers]}


def _state(m: nn.Module) -> dict:
    return {name: encode_tensor(p) for name, p in m.state_dict(keep_vars=True).items()}


def _layer_args(layer: nn.Module) -> dict:
    if isinstance(layer, nn.Linear):
        return {"in": layer.in_features, "out": layer.out_features, "bias": layer.bias is not None}
    if type(layer).__name__ in LAYER_ARGS:
        return {name: getattr(layer, name) for name in LAYER_ARGS[type(layer).__name__]}
    if isinstance(layer, nn.BatchNorm1d):
        return {"n": layer.num_features, "eps": layer.eps, "momentum": layer.momentum,
                "affine": layer.affine, "bias": layer.bias is not None,
                "track": layer.track_running_stats}
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
    encoded = {"t": "optimizer", "type": optimizer_type(opt), "groups": groups}
    hooks, replaced = step_hooks(opt), replaced_methods(opt)
    if hooks or replaced:  # code of the notebook's around the step: the judge mirrors it
        encoded.update(hooks=hooks, replaced=replaced)
    return encoded


def optimizer_type(opt: torch.optim.Optimizer) -> str:
    """The name of ``opt``'s class when it is torch's own (``SGD``), else its module and
    qualified name (``__main__.SGD``, a subclass of the notebook's), which the judge rebuilds
    as no optimizer: a class named like torch's must not pass for it."""
    kind = type(opt)
    if getattr(torch.optim, kind.__name__, None) is kind:
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"[:200]


#: An argument's state after a call, when it is exactly the state the judge sent for it (the
#: worker's reply; the judge then leaves its own object alone)
UNCHANGED = {"t": "unchanged"}
#: What the worker adds to an argument's state after a call: non-empty means it changed
CHANGES = ("hooks", "replaced", "param_hooks")
