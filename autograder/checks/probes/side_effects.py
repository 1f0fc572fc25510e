"""Side effects: what a call changed on the caller's tensors (values, ``requires_grad``,
``.grad``, hooks), networks (parameters, training flags, hooks) and optimizers (settings,
state). ``snapshot`` before the call, ``changes`` after it; the state probe names what a first
call left, and checks whose contract leaves those objects alone score it (``modified-network``...).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def hooks_on(obj: Any) -> int:
    """Hooks registered on a module itself or on a tensor (forward, pre, backward,
    post-accumulate)."""
    names = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
             "_post_accumulate_grad_hooks")
    return sum(len(getattr(obj, n, None) or {}) for n in names)


def snapshot(obj: Any) -> dict | None:
    """What ``changes`` compares: a tensor's values, flag, gradient and hooks; a module's
    parameters (values, ``requires_grad``, gradients), training flags and hooks; an optimizer's
    settings and state size. ``None`` for anything else."""
    if isinstance(obj, torch.Tensor):
        return {"values": obj.detach().clone() if obj.device.type != "meta" else None,
                "requires_grad": obj.requires_grad,
                "grad": obj.grad.detach().clone() if obj.is_leaf and obj.grad is not None
                else None, "hooks": hooks_on(obj)}
    if isinstance(obj, nn.Module):
        return {"params": {n: snapshot(p) for n, p in obj.named_parameters()},
                "ids": {n: id(p) for n, p in obj.named_parameters()},
                "training": {n: m.training for n, m in obj.named_modules()},
                "hooks": {n: hooks_on(m) for n, m in obj.named_modules()}}
    if isinstance(obj, torch.optim.Optimizer):
        return {"settings": [{k: v for k, v in g.items() if k != "params"}
                             for g in obj.param_groups], "state": len(obj.state)}
    return None


def _tensor_changes(before: dict, t: torch.Tensor, name: str) -> list[str]:
    out = []
    if before["values"] is not None and t.device.type != "meta" and (
            t.shape != before["values"].shape or not torch.equal(t.detach(), before["values"])):
        out.append(f"the values of {name} changed")
    if t.requires_grad != before["requires_grad"]:
        out.append(f"{name}.requires_grad became {t.requires_grad}")
    grad = t.grad if t.is_leaf else None
    if (grad is None) != (before["grad"] is None) or (
            grad is not None and (grad.shape != before["grad"].shape
                                  or not torch.equal(grad, before["grad"]))):
        out.append(f"{name}.grad was {'set' if before['grad'] is None else 'changed'}"
                   if grad is not None else f"{name}.grad was cleared")
    if hooks_on(t) != before["hooks"]:
        out.append(f"{name} has {hooks_on(t) - before['hooks']:+d} hooks")
    return out


def _retyped(before: dict, t: torch.Tensor, name: str) -> list[str]:
    """A caller's tensor given another dtype or device (``t.data = t.data.double()``, blind
    round zk): ``torch.equal`` compares values across dtypes, so the values alone miss it.
    A module's parameters moved have checks of their own; cast, see ``_param_changes``."""
    was = before["values"]
    if was is None or t.device.type == "meta":
        return []
    return [f"{name} became {what}" for what, changed in (
        (f"{str(t.dtype).replace('torch.', '')} (it was "
         f"{str(was.dtype).replace('torch.', '')})", t.dtype != was.dtype),
        (f"a tensor on {t.device} (it was on {was.device})", t.device != was.device)) if changed]


def _param_changes(before: dict, p: torch.Tensor, name: str) -> list[str]:
    """A parameter's changes; one given another dtype in place (``net.float()``, blind round
    zr) is told so, its values compared in its new dtype (a cast alone is no other change)."""
    was = before["values"]
    if was is None or p.device.type == "meta" or p.dtype == was.dtype or p.shape != was.shape:
        return _tensor_changes(before, p, name)
    return _retyped(before, p, name)[:1] + _tensor_changes(
        {**before, "values": was.to(p.dtype)}, p, name)


def changes(before: dict | None, obj: Any, name: str) -> list[str]:
    """What changed on ``obj`` since ``snapshot`` (one phrase each, naming the part)."""
    if before is None:
        return []
    if isinstance(obj, torch.Tensor):
        return _retyped(before, obj, name) + _tensor_changes(before, obj, name)
    if isinstance(obj, nn.Module):
        out = []
        params = dict(obj.named_parameters())
        for n, snap in before["params"].items():
            if n not in params:
                out.append(f"{name}.{n} was removed")
            elif id(params[n]) != before["ids"][n] and params[n].shape != snap["values"].shape:
                out.append(f"{name}.{n} was replaced")
            else:
                out += _param_changes(snap, params[n], f"{name}.{n}")
        for n, m in obj.named_modules():
            label = f"{name}.{n}" if n else name
            if n in before["training"] and m.training != before["training"][n]:
                out.append(f"{label} was put in {'training' if m.training else 'eval'} mode")
            if n in before["hooks"] and hooks_on(m) != before["hooks"][n]:
                out.append(f"{label} has {hooks_on(m) - before['hooks'][n]:+d} hooks")
        return out
    if isinstance(obj, torch.optim.Optimizer):
        now = snapshot(obj)
        return [f"{name}'s settings or state changed"] if now != before else []
    return []
