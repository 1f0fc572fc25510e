"""q4_device: code of the notebook's left registered by ``predict`` and ``make_optimizer``
(red team rt-8, each kept its 6 points):

- ``predict`` that leaves a forward hook on the caller's model (doubling every later output),
  or ``make_optimizer`` that leaves gradient hooks on its parameters (zeroing every gradient):
  the caller's model changed, ``modified-input``;
- ``make_optimizer`` returning a real ``torch.optim.SGD`` with only ``lr`` set, whose step runs
  a hook of the notebook's (``register_step_pre_hook`` negating the gradients: a step up the
  loss) or whose ``step`` is replaced on the instance: ``step-changed``.

Counted here as where the student's code runs: the judge mirrors the hooks and replaced methods
the worker reports (``running/judge/remote``, ``worker/wire``: ``optimizer_changes``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ...worker.optimizer_changes import replaced_methods, step_hooks
from ..probes.side_effects import hooks_on
from ..result import Evidence, Verdict


def model_hooks(model: nn.Module) -> dict[str, int]:
    """Hooks on each submodule and on each parameter, by name, where there are any."""
    found = {f"module {name or '(the model itself)'}": n for name, m in model.named_modules()
             if (n := hooks_on(m))}
    found.update({f"parameter {name}": n for name, p in model.named_parameters()
                  if (n := hooks_on(p))})
    return found


def hooks_kept(verdict: Verdict, model: nn.Module, before: dict[str, int], shown: str) -> Verdict:
    """``verdict`` (right so far), failed as ``modified-input`` when the call left hooks on the
    caller's model that it did not have."""
    added = {k: n - before.get(k, 0) for k, n in model_hooks(model).items()
             if n > before.get(k, 0)}
    if not verdict.ok or not added:
        return verdict
    where = ", ".join(f"{n} on {k}" for k, n in list(added.items())[:4])
    return Verdict(False, f"{shown} left hooks on the caller's model ({where}): they run in "
                   "every later forward or backward of that model, so the model is no longer "
                   "the one it was given. Leave the model as it was: register no hook, or "
                   "remove each one (handle.remove()) before returning.", "modified-input",
                   Evidence(inputs={"hooks added": added}))


def judge_step(verdict: Verdict, opt: Any, shown: str) -> Verdict:
    """``verdict`` (an SGD with the right settings), failed as ``step-changed`` when the
    optimizer's step runs code of the notebook's: step hooks, or a method set on it."""
    if not verdict.ok or not isinstance(opt, torch.optim.Optimizer):
        return verdict
    hooks, replaced = step_hooks(opt), replaced_methods(opt)
    if not hooks and not replaced:
        return verdict
    what = "; ".join(filter(None, [
        f"{hooks} step hook{'s' if hooks > 1 else ''} (register_step_pre_hook, "
        "register_step_post_hook or a global optimizer hook)" if hooks else "",
        f"{' and '.join(replaced)} replaced on the optimizer itself" if replaced else ""]))
    return Verdict(False, f"{shown} returned an SGD whose step runs code of the notebook's: "
                   f"{what}. Each step must be p -= lr * p.grad and nothing else: return "
                   "torch.optim.SGD(model.parameters(), lr=lr) with nothing registered on it.",
                   "step-changed", Evidence(got={"hooks": hooks, "replaced": replaced}))
