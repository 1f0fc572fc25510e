"""Values as plain JSON, both ways: tensors as dtype/shape/strides/values, modules as an
architecture plus their state, anything else unknown as an opaque type name.

Decoding never evaluates code and never unpickles: it builds floats, lists, tensors and known
layers from numbers and names. A float subclass whose ``__eq__`` lies is sent as its plain
float value, so the judge compares the number, not the object.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch
from torch import nn

MAX_ELEMENTS = 1_000_000  # per tensor/array; a larger value is refused, not truncated
MAX_ITEMS = 100_000  # per list/tuple/dict
MAX_TEXT = 10_000  # characters of a str or repr
MAX_DEPTH = 20
MAX_LAYERS = 64  # layers of one module
MAX_DIMS = 16  # dimensions of one tensor or array

# Decoding budgets (docs/decoding-budgets.md): what the judge may build for one reply of the
# worker (a call's result and the state of its arguments after it, or a looked-up value),
# checked against what the reply *declares* (shapes, layer sizes, lengths) before anything is
# built. A module's layers are sized on the meta device first, so the judge never allocates on
# the worker's word. The largest value a check sends or expects holds ~720 elements (logreg's
# 120 x 6 inputs): these are three orders of magnitude above any correct answer.
BUDGET_ELEMENTS = 1_000_000  # tensor/array elements declared (meta tensors and grads included)
BUDGET_BYTES = 16 * 2**20  # those elements at their dtype's size
BUDGET_ITEMS = 200_000  # entries of all lists, tuples, dicts, module states and optimizers
BUDGET_TEXT = 1_000_000  # characters of all strings

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "complex64", "complex128")}
LAYERS = {"Linear": nn.Linear, "ReLU": nn.ReLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid,
          "Dropout": nn.Dropout, "Identity": nn.Identity}


class WireError(ValueError):
    """A value that cannot cross the wall (too big, too deep, malformed). Decoding raises
    nothing else for anything the worker sends (``MemoryError`` included)."""


def _count(n: int) -> str:
    """``3.6e9`` for a large count, ``720`` for a small one."""
    return f"{n:,}" if n <= 10**7 else f"{n:.2g}".replace("e+0", "e").replace("e+", "e")


class Budget:
    """What one reply may still make the judge build. Every charge is made before the object
    it pays for is built; one over the budget raises ``WireError`` naming the budget and what
    was declared. ``used_*`` is the accounting the tests check."""

    def __init__(self, elements: int = BUDGET_ELEMENTS, nbytes: int = BUDGET_BYTES,
                 items: int = BUDGET_ITEMS, text: int = BUDGET_TEXT):
        self.elements, self.nbytes, self.items, self.text = elements, nbytes, items, text
        self.used_elements = self.used_bytes = self.used_items = self.used_text = 0

    def check_elements(self, count: int, what: str, unit: str = "elements") -> None:
        """Refuse ``count`` more elements without charging them (a module's declared size,
        checked before its layers are sized)."""
        if count > self.elements - self.used_elements:
            raise WireError(f"{what} declaring {_count(count)} {unit}; the grader accepts at "
                            f"most {_count(self.elements)} elements in one value")

    def take_elements(self, count: int, itemsize: int, what: str) -> None:
        self.check_elements(count, what)
        if count * itemsize > self.nbytes - self.used_bytes:
            raise WireError(f"{what} declaring {_count(count * itemsize)} bytes; the grader "
                            f"accepts at most {_count(self.nbytes)} bytes in one value")
        self.used_elements += count
        self.used_bytes += count * itemsize

    def take_items(self, count: int, what: str) -> None:
        if count > self.items - self.used_items:
            raise WireError(f"{what} of {_count(count)} entries; the grader accepts at most "
                            f"{_count(self.items)} list, tuple or dict entries in one value")
        self.used_items += count

    def take_text(self, count: int) -> None:
        if count > self.text - self.used_text:
            raise WireError(f"a string of {_count(count)} characters; the grader accepts at "
                            f"most {_count(self.text)} characters of text in one value")
        self.used_text += count


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


@_guarded
def decode(d: Any, depth: int = 0, budget: Budget | None = None) -> Any:
    """Rebuild a value from ``encode``'s data within ``budget`` (a fresh one when None); raise
    ``WireError``, and nothing else, on anything malformed or over the budget."""
    return _decode(d, depth, budget if budget is not None else Budget())


def _decode(d: Any, depth: int, budget: Budget) -> Any:
    if depth > MAX_DEPTH:
        raise WireError(f"value nested more than {MAX_DEPTH} deep")
    if not isinstance(d, dict) or not isinstance(d.get("t"), str):
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
        budget.take_text(len(d["v"]))
        return d["v"][:MAX_TEXT]
    if t == "npscalar":
        value = _decode(d.get("v"), depth + 1, budget)
        if not isinstance(value, (bool, int, float)):
            raise WireError("numpy scalar expected")
        return np.dtype(_np_dtype(d.get("dtype"))).type(value)
    if t in ("list", "tuple"):
        items = d.get("v")
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise WireError("sequence expected")
        budget.take_items(len(items), f"a {t}")
        seq = [_decode(v, depth + 1, budget) for v in items]
        return seq if t == "list" else tuple(seq)
    if t == "dict":
        pairs = d.get("v")
        if not isinstance(pairs, list) or len(pairs) > MAX_ITEMS:
            raise WireError("dict expected")
        budget.take_items(len(pairs), "a dict")
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise WireError("dict entries must be [key, value] pairs")
        return {_key(_decode(k, depth + 1, budget)): _decode(v, depth + 1, budget)
                for k, v in pairs}
    if t == "device":
        return _device(d.get("v"))
    if t == "dtype":
        return _torch_dtype(d.get("v"))
    if t == "tensor":
        return _tensor(d, depth, budget)
    if t == "ndarray":
        return _ndarray(d, budget)
    if t == "module":
        return _module(d, budget)
    if t == "optimizer":
        return _optimizer(d, depth, None, budget)
    if t == "opaque":
        name = d.get("type")
        return Opaque(name[:200] if isinstance(name, str) else "?", bool(d.get("callable")))
    raise WireError(f"unknown value tag {t[:40]!r}")


def _key(k: Any) -> Any:
    if isinstance(k, (list, dict)) or isinstance(k, Opaque):
        raise WireError("unhashable dict key")
    hash(k)  # a tuple holding a list: TypeError, made a WireError by ``_guarded``
    return k


def _device(name: Any) -> torch.device:
    if not isinstance(name, str) or len(name) > 40:
        raise WireError("device name expected")
    return torch.device(name)


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


@_guarded
def decode_module(d: Any, budget: Budget | None = None) -> nn.Module:
    """A module from ``encode_module``'s data, within ``budget``; raises ``WireError`` only."""
    return _module(d, budget if budget is not None else Budget())


def _module(d: Any, budget: Budget) -> nn.Module:
    """The declared parameter count is checked against the budget first; the layers are then
    made on the meta device (no memory), and each gets the tensor the reply sent for it, which
    ``_tensor`` charges to the budget: nothing is sized by the declaration alone."""
    arch = d.get("arch") if isinstance(d, dict) else None
    if not isinstance(arch, list) or not 1 <= len(arch) <= MAX_LAYERS:
        raise WireError(f"module architecture expected (1 to {MAX_LAYERS} layers)")
    specs = [_layer_spec(item) for item in arch]
    budget.check_elements(sum(_layer_params(kind, args) for kind, args in specs), "a module",
                          "parameters")
    with torch.device("meta"):
        layers = [_layer(kind, args) for kind, args in specs]
    module = nn.Sequential(*layers) if d.get("sequential") else layers[0]
    state = d.get("state") or {}
    if not isinstance(state, dict):
        raise WireError("module state expected")
    expected = module.state_dict(keep_vars=True)
    budget.take_items(len(expected), "a module state")
    values = {}
    for name, tensor in expected.items():
        if name not in state:
            raise WireError(f"module state lacks {name}")
        values[name] = _tensor(state[name], 1, budget).detach()
        if values[name].shape != tensor.shape:
            raise WireError(f"module state {name} has the wrong shape")
    # assign: the meta parameters are replaced by the sent tensors (the sender's dtype and
    # device kept: a float64 net stays one), requires_grad as the layer's own
    module.load_state_dict(values, assign=True)
    module.train(bool(d.get("training", True)))
    return module


def _layer_spec(item: Any) -> tuple[str, dict]:
    """A layer's kind and arguments, checked (no layer is made here)."""
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and item[0] in LAYERS and isinstance(item[1], dict)):
        raise WireError("unknown layer")
    kind, args = item
    if kind == "Linear":
        n_in, n_out = _int(args.get("in"), "in"), _int(args.get("out"), "out")
        if n_in < 0 or n_out < 0:
            raise WireError("a Linear layer's sizes must not be negative")
        return kind, {"in": n_in, "out": n_out, "bias": bool(args.get("bias", True))}
    if kind == "Dropout":
        return kind, {"p": _unfloat(args.get("p", 0.5))}
    return kind, {}


def _layer_params(kind: str, args: dict) -> int:
    if kind == "Linear":
        return args["in"] * args["out"] + (args["out"] if args["bias"] else 0)
    return 0


def _layer(kind: str, args: dict) -> nn.Module:
    if kind == "Linear":
        return nn.Linear(args["in"], args["out"], bias=args["bias"])
    if kind == "Dropout":
        return nn.Dropout(args["p"])
    return LAYERS[kind]()


OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW,
              "RMSprop": torch.optim.RMSprop, "Adagrad": torch.optim.Adagrad}


@_guarded
def decode_optimizer(d: Any, depth: int, resolve=None, budget: Budget | None = None) -> Any:
    """Rebuild a known optimizer class over the parameters it holds. ``resolve(ref)`` returns the
    caller's own parameter object for a reference, so identity survives the trip. Within
    ``budget``; raises ``WireError`` only."""
    return _optimizer(d, depth, resolve, budget if budget is not None else Budget())


def _optimizer(d: Any, depth: int, resolve, budget: Budget) -> Any:
    if not isinstance(d, dict):
        raise WireError("optimizer expected")
    kind = d.get("type")
    groups = d.get("groups")
    if not isinstance(kind, str) or kind not in OPTIMIZERS or not isinstance(groups, list) \
            or not groups:
        return Opaque(f"optimizer {str(kind)[:40]!r}" if isinstance(kind, str)
                      else "optimizer", False)
    budget.take_items(len(groups), "an optimizer's groups")
    param_groups = []
    for group in groups:
        entries = group.get("params", []) if isinstance(group, dict) else None
        settings = group.get("settings", {}) if isinstance(group, dict) else None
        if not isinstance(entries, list) or not isinstance(settings, dict):
            raise WireError("optimizer group expected")
        budget.take_items(len(entries) + len(settings), "an optimizer group")
        params = []
        for entry in entries:
            if not isinstance(entry, dict):
                raise WireError("optimizer parameter expected")
            ref = entry.get("ref")
            own = resolve(ref) if (resolve and ref is not None) else None
            params.append(own if own is not None else
                          nn.Parameter(_tensor(entry.get("tensor"), depth + 1,
                                               budget).detach()))
        values = {k: _decode(v, depth + 1, budget) for k, v in settings.items()
                  if isinstance(k, str) and k != "params"}
        param_groups.append({**values, "params": params})
    opt = OPTIMIZERS[kind](param_groups)
    return opt
