"""What code of the notebook's an optimizer runs beside its settings (red team rt-8: a real
``torch.optim.SGD`` with only ``lr`` set and a step pre-hook that negated every gradient kept
``make_optimizer``'s 6 points): its step hooks, the process's global ones, and its methods
replaced on the instance. Counted the same way where the student's code runs (the worker's
encoding carries them; the judge mirrors them on the optimizer it rebuilds) and in the checks'
own process, so a check judges both alike."""

from __future__ import annotations

import torch
from torch.optim import optimizer as optim_module

#: The methods a notebook may replace on one optimizer (``opt.step = ...``).
METHODS = ("step", "zero_grad")


def step_hooks(opt: torch.optim.Optimizer) -> int:
    """Step hooks that run around ``opt.step()``: its own (``register_step_pre_hook``,
    ``register_step_post_hook``) and every optimizer's (``register_optimizer_step_pre_hook``:
    the checks' own observers are removed when their call ends)."""
    own = sum(len(getattr(opt, name, None) or {})
              for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks"))
    shared = sum(len(getattr(optim_module, name, None) or {})
                 for name in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks"))
    return own + shared


def replaced_methods(opt: torch.optim.Optimizer) -> list[str]:
    """The methods set on the instance itself, in place of its class's."""
    return [name for name in METHODS if name in vars(opt)]
