"""Decoding modules, on the judge's side: a flat ``nn.Sequential`` (or one layer) of the known
layers, its declared size checked against the reply's ``Budget`` first, its layers made on the
meta device and then given the tensors the reply sent.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .decoding_arrays import decode_tensor
from .fields import guarded, integer, number
from .limits import LAYERS, MAX_LAYERS, Budget, WireError


@guarded
def decode_module(d: Any, budget: Budget | None = None) -> nn.Module:
    """A module from ``encode_module``'s data, within ``budget`` (a fresh one when None);
    raises ``WireError`` only.

    The declared parameter count is checked against the budget first; the layers are then
    made on the meta device (no memory), and each gets the tensor the reply sent for it, which
    ``decode_tensor`` charges to the budget: nothing is sized by the declaration alone."""
    budget = budget if budget is not None else Budget()
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
        values[name] = decode_tensor(state[name], 1, budget).detach()
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
        n_in, n_out = integer(args.get("in"), "in"), integer(args.get("out"), "out")
        if n_in < 0 or n_out < 0:
            raise WireError("a Linear layer's sizes must not be negative")
        return kind, {"in": n_in, "out": n_out, "bias": bool(args.get("bias", True))}
    if kind == "Dropout":
        return kind, {"p": number(args.get("p", 0.5))}
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
