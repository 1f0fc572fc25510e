"""q4_device: ``predict`` whose forward left batch normalisation in training mode.

The test model holds a ``BatchNorm1d`` layer with running statistics drawn far from any
batch's (``device.draw_model``). In training mode that layer normalises with the batch's own
mean and variance, and updates its running ones, instead of using the running statistics it
holds; on a batch of one row it raises. A ``predict`` that turns off dropout by hand (each
``nn.Dropout`` put in eval mode, ``p`` set to 0, ``model.training = False`` on the outer
module only) instead of calling ``model.eval()`` answers deterministically and wrong (red team
rt-9). ``norm_in_training`` names it from the answer: it is the grader's own forward with
every ``BatchNorm`` layer in training mode and dropout off.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

import torch
import torch.nn as nn

from ..result import Verdict
from .common import allclose

#: what a training-mode forward of a batch-norm layer updates
RUNNING = ("running_mean", "running_var", "num_batches_tracked")
#: torch's refusal of a training-mode batch norm on a batch of one row
ONE_ROW_ERROR = "Expected more than 1 value per channel when training"

ADVICE = ("Batch normalisation was in training mode: it normalises with this batch's own mean "
          "and variance (and updates its running statistics) instead of the running statistics "
          "it holds. Call model.eval() before the forward: it switches every layer that "
          "behaves differently in training, dropout and batch normalisation alike, which "
          "turning dropout off by hand does not.")


def _norm_layers(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


def norm_training_forward(model: nn.Module, batch: torch.Tensor) -> torch.Tensor | None:
    """The grader's forward of a copy of ``model`` (as it arrived) in eval mode except its
    batch-norm layers, which run in training mode; ``None`` for a model without one, or where
    that forward raises (a batch of one row)."""
    copied = copy.deepcopy(model).eval()
    norms = _norm_layers(copied)
    if not norms:
        return None
    for layer in norms:
        layer.train()
    try:
        with torch.no_grad():
            return copied(batch)
    except (RuntimeError, ValueError):
        return None


def _running_only(after: nn.Module, arrived: nn.Module) -> bool:
    """Whether the only tensors of the caller's model (``after``) that differ from the model
    as it arrived are batch-norm running statistics (what a training-mode forward updates)."""
    now, then = after.state_dict(), arrived.state_dict()
    if set(now) != set(then) or any(t.device.type == "meta" for t in now.values()):
        return False
    changed = [name for name, t in now.items()
               if t.shape != then[name].shape or not torch.equal(t.detach().cpu().to(
                   then[name].dtype), then[name])]
    return bool(changed) and all(name.rpartition(".")[2] in RUNNING for name in changed)


def norm_in_training(verdict: Verdict, got: Any, after: nn.Module,
                     arrived: Callable[[], nn.Module], batch: torch.Tensor, rtol: float,
                     atol: float) -> Verdict:
    """``verdict`` on a wrong ``predict`` with no cause named yet, named ``eval-missing`` when
    its answer is the forward with batch normalisation in training mode and dropout off, when
    the call changed nothing of the caller's model (``after``) but batch-norm running
    statistics, or when it raised torch's refusal of a training-mode batch norm on one row
    (``arrived()``: the model as it arrived, drawn again; asked only for a wrong answer)."""
    if verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    if verdict.misconception == "raised":
        if ONE_ROW_ERROR not in verdict.message:
            return verdict
        return dataclasses.replace(verdict, misconception="eval-missing", message=(
            f"{verdict.message.rstrip()}\nThat is torch's refusal of a batch-norm layer in "
            f"training mode on a batch of one row. {ADVICE}"))
    model = arrived()
    if isinstance(got, torch.Tensor) and got.device.type != "meta":
        replay = norm_training_forward(model, batch)
        if replay is not None and got.shape == replay.shape and got.dtype == replay.dtype \
                and allclose(got, replay, rtol, atol):
            return dataclasses.replace(verdict, misconception="eval-missing", message=(
                f"{verdict.message.rstrip()} Your output is the model's forward with its "
                f"batch-norm layer in training mode and dropout off. {ADVICE}"))
    if _running_only(after, model):
        return dataclasses.replace(verdict, misconception="eval-missing", message=(
            f"{verdict.message.rstrip()} Of the caller's model only the batch-norm layer's "
            "running statistics changed, which a forward in training mode does: the model "
            "was not in eval mode during the forward (model.eval() after it is too late). "
            "Call model.eval() before the forward."))
    return verdict
