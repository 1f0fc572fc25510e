"""Decoding modules, on the judge's side: a flat ``nn.Sequential`` (or one layer) of the known
layers, its declared size checked against the reply's ``Budget`` first, its layers made
around the tensors the reply sent.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .decoding_arrays import decode_tensor
from .fields import guarded, integer, number
from .limits import LAYER_ARGS, LAYERS, MAX_LAYERS, Budget, WireError


@guarded
def decode_module(d: Any, budget: Budget | None = None) -> nn.Module:
    """A module from ``encode_module``'s data, within ``budget`` (a fresh one when None);
    raises ``WireError`` only.

    The declared parameter count is checked against the budget first; each parameter is
    then the tensor the reply sent for it, which ``decode_tensor`` charges to the budget, checked
    against the shape its layer declares: nothing is sized by the declaration alone. The
    layers are made around those tensors (no initial values drawn and thrown away)."""
    budget = budget if budget is not None else Budget()
    arch = d.get("arch") if isinstance(d, dict) else None
    if not isinstance(arch, list) or not 1 <= len(arch) <= MAX_LAYERS:
        raise WireError(f"module architecture expected (1 to {MAX_LAYERS} layers)")
    specs = [_layer_spec(item) for item in arch]
    budget.check_elements(sum(_layer_params(kind, args) for kind, args in specs), "a module",
                          "parameters")
    sequential = bool(d.get("sequential"))
    state = d.get("state") or {}
    if not isinstance(state, dict):
        raise WireError("module state expected")
    shapes = [_layer_shapes(kind, args) for kind, args in specs[:None if sequential else 1]]
    budget.take_items(sum(map(len, shapes)), "a module state")
    layers = []
    for i, ((kind, args), wanted) in enumerate(zip(specs, shapes)):
        values, frozen = {}, []
        for leaf, shape in wanted.items():
            name = f"{i}.{leaf}" if sequential else leaf
            if name not in state:
                raise WireError(f"module state lacks {name}")
            sent = decode_tensor(state[name], 1, budget)
            values[leaf] = sent.detach()
            if tuple(values[leaf].shape) != shape:
                raise WireError(f"module state {name} has the wrong shape")
            if not sent.requires_grad:  # a frozen parameter arrives frozen
                frozen.append(leaf)
        layer = _layer(kind, args, values)
        for leaf in frozen:
            getattr(layer, leaf).requires_grad_(False)
        layers.append(layer)
    module = nn.Sequential(*layers) if sequential else layers[0]
    if not d.get("training", True):  # every layer is made in training mode
        module.train(False)
    set_modes(module, d.get("modes"))
    return module


def set_modes(module: nn.Module, modes: Any) -> None:
    """Each layer of ``module`` (a flat ``nn.Sequential``, or one layer) in the training mode
    ``modes`` lists for it, where that list fits; the outer module's own flag is left."""
    layers = list(module) if isinstance(module, nn.Sequential) else [module]
    if isinstance(modes, list) and len(modes) == len(layers) \
            and all(isinstance(mode, bool) for mode in modes):
        for layer, mode in zip(layers, modes):
            if layer is not module:
                layer.training = mode


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
    if kind == "GELU":
        approximate = args.get("approximate", "none")
        if approximate not in ("none", "tanh"):
            raise WireError("a GELU layer's approximation is 'none' or 'tanh'")
        return kind, {"approximate": approximate}
    if kind in LAYER_ARGS:  # numbers only (Dropout's p, LeakyReLU's slope, ...)
        return kind, {name: number(args.get(name, default))
                      for name, default in LAYER_ARGS[kind].items()}
    if kind == "BatchNorm1d":
        n = integer(args.get("n"), "n")
        if n < 1:
            raise WireError("a BatchNorm1d layer needs at least one feature")
        momentum = args.get("momentum")
        return kind, {"n": n, "eps": number(args.get("eps", 1e-5)),
                      "momentum": None if momentum is None else number(momentum),
                      "affine": bool(args.get("affine", True)),
                      "bias": bool(args.get("affine", True)) and bool(args.get("bias", True)),
                      "track": bool(args.get("track", True))}
    return kind, {}


def _layer_params(kind: str, args: dict) -> int:
    if kind == "Linear":
        return args["in"] * args["out"] + (args["out"] if args["bias"] else 0)
    if kind == "BatchNorm1d":
        return args["n"] * (args["affine"] + args["bias"])
    return 0


def _layer_shapes(kind: str, args: dict) -> dict[str, tuple[int, ...]]:
    """The parameters a layer of ``kind`` holds, by name, with their shapes."""
    if kind == "Linear":
        return {"weight": (args["out"], args["in"]), **({"bias": (args["out"],)}
                                                          if args["bias"] else {})}
    if kind == "BatchNorm1d":  # its parameters, then its buffers (state_dict's order)
        n = (args["n"],)
        return {**({"weight": n} if args["affine"] else {}),
                **({"bias": n} if args["bias"] else {}),
                **({"running_mean": n, "running_var": n, "num_batches_tracked": ()}
                   if args["track"] else {})}
    return {}


def _layer(kind: str, args: dict, values: dict[str, torch.Tensor]) -> nn.Module:
    """A layer holding ``values`` as its parameters (the sender's dtype and device kept: a
    float64 net stays one), each requiring grad as a new layer's would. A Linear is made as
    ``nn.Linear.__init__`` makes it, without drawing initial values that would be replaced."""
    if kind == "Linear":
        layer = nn.Linear.__new__(nn.Linear)
        nn.Module.__init__(layer)
        # straight into the module's own dicts: ``Module.__setattr__``'s checks (and any
        # parameter-registration hooks a notebook installed) would cost a call more than the
        # rest of the decoding, for names and values fixed here
        layer.__dict__.update(in_features=args["in"], out_features=args["out"])
        layer._parameters["weight"] = nn.Parameter(values["weight"])
        layer._parameters["bias"] = nn.Parameter(values["bias"]) if args["bias"] else None
        return layer
    if kind in LAYER_ARGS:
        return LAYERS[kind](**args)
    if kind == "BatchNorm1d":  # made on meta (nothing allocated), then given the values sent
        layer = nn.BatchNorm1d(args["n"], args["eps"], args["momentum"], args["affine"],
                               args["track"], device="meta")
        for leaf in ("weight", "bias"):  # an affine layer without a bias (torch 2.13's bias=)
            if args["affine"]:
                layer._parameters[leaf] = nn.Parameter(values[leaf]) if leaf in values else None
        for leaf in ("running_mean", "running_var", "num_batches_tracked"):
            if leaf in values:
                layer._buffers[leaf] = values[leaf]
        return layer
    return LAYERS[kind]()
