"""Decoding, on the judge's side: numbers and names in, objects out; nothing is evaluated.
``decode`` rebuilds any value ``encode`` sent (scalars, strings, lists, tuples, dicts, devices
and dtypes here; tensors and arrays in ``decoding_arrays``, modules in ``decoding_modules``,
each field checked by ``fields``),
optimizers over the caller's own parameters (``decode_optimizer``), and ``Opaque`` for what
the wire does not carry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ..optimizer_changes import METHODS
from .decoding_arrays import decode_ndarray, decode_tensor
from .decoding_modules import decode_module
from .fields import guarded, integer, number, numpy_dtype, torch_dtype
from .limits import MAX_DEPTH, MAX_ITEMS, MAX_TEXT, Budget, WireError


class Opaque:
    """Stands for a value the wire does not carry (a class instance, a function...)."""

    def __init__(self, type_name: str, is_callable: bool):
        self.type_name, self.is_callable = type_name, is_callable

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


@guarded
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
        return integer(d.get("v"), "int")
    if t == "float":
        return number(d.get("v"))
    if t == "str":
        if not isinstance(d.get("v"), str):
            raise WireError("str expected")
        budget.take_text(len(d["v"]))
        return d["v"][:MAX_TEXT]
    if t == "npscalar":
        value = _decode(d.get("v"), depth + 1, budget)
        if not isinstance(value, (bool, int, float)):
            raise WireError("numpy scalar expected")
        return np.dtype(numpy_dtype(d.get("dtype"))).type(value)
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
        return torch_dtype(d.get("v"))
    if t == "tensor":
        return decode_tensor(d, depth, budget)
    if t == "ndarray":
        return decode_ndarray(d, budget)
    if t == "module":
        return decode_module(d, budget)
    if t == "optimizer":
        return _optimizer(d, depth, None, budget)
    if t == "opaque":
        name = d.get("type")
        return Opaque(name[:200] if isinstance(name, str) else "?", bool(d.get("callable")))
    raise WireError(f"unknown value tag {t[:40]!r}")


def _key(k: Any) -> Any:
    if isinstance(k, (list, dict)) or isinstance(k, Opaque):
        raise WireError("unhashable dict key")
    hash(k)  # a tuple holding a list: TypeError, made a WireError by ``guarded``
    return k


def _device(name: Any) -> torch.device:
    if not isinstance(name, str) or len(name) > 40:
        raise WireError("device name expected")
    return torch.device(name)


OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW,
              "RMSprop": torch.optim.RMSprop, "Adagrad": torch.optim.Adagrad}


@guarded
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
                          _parameter(decode_tensor(entry.get("tensor"), depth + 1, budget)))
        values = {k: _decode(v, depth + 1, budget) for k, v in settings.items()
                  if isinstance(k, str) and k != "params"}
        param_groups.append({**values, "params": params})
    opt = OPTIMIZERS[kind](param_groups)
    _mirror_step_changes(opt, d.get("hooks"), d.get("replaced"))
    return opt


def _parameter(t: torch.Tensor) -> nn.Parameter:
    """An optimizer's tensor as a parameter: one that requires grad where its dtype can, which
    an integer one cannot (an SGD over ``model.state_dict().values()`` holds a batch-norm
    layer's step count, int64: round v's student_01)."""
    return nn.Parameter(t.detach(), requires_grad=t.is_floating_point() or t.is_complex())


def _mirror_step_changes(opt: torch.optim.Optimizer, hooks: Any, replaced: Any) -> None:
    """As many no-op step hooks (at most 16) and stand-ins for the replaced methods as the
    worker reported (``optimizer_changes``), so that the checks count them here as they would
    where the student's code runs. A stand-in raises if called: its code stayed there."""
    if isinstance(hooks, int) and not isinstance(hooks, bool):
        for _ in range(max(0, min(hooks, 16))):
            opt.register_step_pre_hook(_no_op_step_hook)
    for name in replaced if isinstance(replaced, list) else ():
        if name in METHODS:
            setattr(opt, name, _replaced_method)


def _no_op_step_hook(*_: Any) -> None:
    return None


def _replaced_method(*_: Any, **__: Any) -> None:
    raise RuntimeError("the notebook replaced this method of its optimizer; its code stayed "
                       "where the notebook ran")
