"""q4_device: where the caller's model is after ``predict`` (the contract moves it to the
device and leaves it there), told by what the worker heard of the call.

A ``predict`` that moves the model back where it came from after the forward
(``model.to(home)``, ``model.cpu()``, a try/finally or a context manager that restores its
device) leaves the caller's model off the device, which the contract moves it to; on ``meta``
the move back raises torch's "Cannot copy out of meta tensor", the error a copy of the output
off the device (``.cpu()``, ``.item()``) raises too. The worker also says how the model itself
was moved during the call (``Module._apply`` on it, heard) and whether the error that ended
the call is the one such a move raised: only then is it ``model-moved-back`` rather than
``output-not-on-device``; a move off ``meta`` that ran (``to_empty``) is named likewise from
the model's parameters measured off ``meta`` after the call. Heard, so it words a failure the
measured answer already has, never points.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from ..describing import describe, plain
from ..result import PASS, Evidence, Verdict

MODEL_NOT_MOVED = ("The model's parameters are not on the device it was given after the call "
                   "(the batch is): move the model there, model.to(device), the device "
                   "argument rather than another one (Module.to moves the model itself).")


def moved_back_advice(device: torch.device) -> str:
    """What a predict that moved the model back off ``device`` is told (blind round zzf)."""
    on_meta = (": on the 'meta' device, which holds no values, nothing can be copied back off "
               "it, and to_empty() would only give the model empty weights"
               if device.type == "meta" else "")
    return ("The contract moves the model to the device and leaves it there: Module.to moves "
            "the caller's own model in place, and the caller goes on using it on that device "
            "(make_optimizer moves it the same way, before building the optimizer). Do not move "
            "it back after predicting (model.to(home), model.cpu(), a try/finally or a context "
            f"manager that restores its device){on_meta}. Move the model and the batch, "
            "model.to(device) and batch = batch.to(device), and return model(batch) as it is, "
            "on the device.")


def on_meta(output: torch.Tensor) -> torch.Tensor:
    """The grader's forward of its own model on ``meta`` from its forward on the CPU: a tensor
    of the same shape and dtype, all that ``meta`` holds of one (dense and contiguous, as the
    Linear's output there). Running the forward on ``meta`` again gave the same and cost more
    than the rest of the check: ``meta``'s kernels are torch's Python decompositions."""
    return torch.empty_like(output, device="meta")


def heard_moves(moves: Any) -> tuple[tuple[str, str], ...] | None:
    """The worker's ``module_moves`` as ``(before, after)`` pairs of strings, ``None`` when not
    heard."""
    if not isinstance(moves, list):
        return None
    return tuple((str(m[0]), str(m[1])) for m in moves
                 if isinstance(m, (list, tuple)) and len(m) == 2)


def moved_off(moves: tuple[tuple[str, str], ...] | None,
              device: torch.device) -> tuple[str, str] | None:
    """The first heard move of the model that started with its parameters on ``device`` and
    did not leave them there (it raised, or took them elsewhere), or ``None``."""
    for before, after in moves or ():
        if device.type in before.split(",") and device.type not in after.split(","):
            return before, after
    return None


def after_forward(forward: tuple[str, ...] | None, device: torch.device) -> str:
    """``", after its forward had run there"`` when the model's forward was heard on
    ``device``, else nothing (the move back is told without saying when)."""
    return ", after its forward had run there" if forward and device.type in forward else ""


def moved_back(start: str, move: tuple[str, str], device: torch.device,
               forward: tuple[str, ...] | None, evidence: Evidence) -> Verdict:
    """``model-moved-back``: the model measured off ``device`` after the call (``start`` says
    so) and a heard ``move`` of it off ``device``."""
    return Verdict(False, f"{start}: predict moved the model back off {device} (a move of the "
                   f"model from {move[0]} to {move[1]}{after_forward(forward, device)}, as "
                   f"your process reported). {moved_back_advice(device)}", "model-moved-back",
                   evidence)


def judge_on_meta(got: torch.Tensor, model: nn.Module, expected: torch.Tensor,
                  shown: str, forward: tuple[str, ...] | None = None,
                  moves: tuple[tuple[str, str], ...] | None = None) -> Verdict:
    """An answer on ``meta``, which holds no values: what it shows of the forward instead.
    ``expected`` is the grader's own forward of the model on ``meta`` (its shape and dtype);
    the model's parameters must be on ``meta`` after the call (the contract moves the model
    there), or the forward did not run on the device asked for. ``forward`` (heard: the device
    types the model's forwards took their inputs on, ``None`` when not heard) must hold
    ``meta``: an answer made to the output's shape, with the forward run elsewhere or not at
    all, fails as ``forward-not-on-device``. A model off ``meta`` after the call is told by what
    was heard (``moves``, the model's own moves): moved off ``meta`` (``model-moved-back``), or,
    with its forward heard on ``meta`` and no move of it there, run there as another module (a
    copy; ``model-not-moved``)."""
    evidence = Evidence(expected=plain(expected), got=plain(got))
    if got.shape != expected.shape:
        return Verdict(False, f"{shown} returned {describe(got)}; expected a tensor of shape "
                       f"{tuple(expected.shape)}.", "wrong-shape", evidence)
    if got.dtype != expected.dtype:
        return Verdict(False, f"{shown} returned {describe(got)}; the model's output on "
                       f"meta has dtype {expected.dtype}: return the model's output itself, "
                       "model(batch), not a tensor made to its shape (torch.empty, "
                       "torch.zeros) nor one converted to another dtype.",
                       "output-not-from-model", evidence)
    off = sorted({str(p.device) for p in model.parameters() if p.device.type != "meta"})
    if off:
        return left_off(shown, off, forward, moves, evidence)
    if forward is not None and "meta" not in forward:
        ran = (f"it ran only with its input on {', '.join(forward)}" if forward
               else "the model was never called")
        return Verdict(False, f"{shown} returned a tensor on meta, but the model's forward "
                       f"never ran on meta ({ran}, as your process reported): the answer "
                       "was made to the output's shape (torch.empty, torch.zeros, *_like, "
                       "new_empty) rather than computed by the model there, and on a GPU its "
                       "values would not be the model's output. Move the model and the batch "
                       "to the device (model.to(device), batch = batch.to(device)), run "
                       "model(batch) there, and return its output.", "forward-not-on-device",
                       evidence)
    return PASS


def left_off(shown: str, off: list[str], forward: tuple[str, ...] | None,
             moves: tuple[tuple[str, str], ...] | None, evidence: Evidence) -> Verdict:
    """An answer on ``meta`` with the model's parameters on ``off`` after the call (measured),
    told by what was heard of the call (``judge_on_meta``)."""
    meta, where = torch.device("meta"), ", ".join(off)
    start = (f"{shown} returned a tensor on meta, but the model's parameters are on {where} "
             "after the call")
    move = moved_off(moves, meta)
    if move is not None:
        return moved_back(start, move, meta, forward, evidence)
    if forward and "meta" in forward and moves is not None and not any(
            "meta" in after.split(",") for _, after in moves):
        return Verdict(False, f"{start}, while the model's forward ran on meta and the "
                       "caller's model was never moved there (as your process reported): "
                       "the forward ran on another module there, such as a copy "
                       "(copy.deepcopy(model).to(device)). " + MODEL_NOT_MOVED,
                       "model-not-moved", evidence)
    return Verdict(False, f"{start}: the forward did not run on the device it was given. "
                   + MODEL_NOT_MOVED, "model-not-moved", evidence)


def kept_on_device(model: nn.Module, device: torch.device,
                   moves: tuple[tuple[str, str], ...] | None) -> Verdict:
    """After a real device change (CPU to CUDA), a right output must leave the caller's model
    on ``device`` (measured), as on ``meta`` (``judge_on_meta``): the contract moves the model
    there, so a predict that moved it back after the forward loses the same check on every
    grading machine. Named from the heard ``moves``: a move of the model off ``device`` is
    ``model-moved-back``; otherwise what was measured, ``model-not-moved``."""
    off = sorted({str(p.device) for p in model.parameters() if p.device.type != device.type})
    if not off:
        return PASS
    evidence = Evidence(expected=str(device), got=off)
    start = (f"predict(model, batch, {device}) returned its output on {device}, but the "
             f"model's parameters are on {', '.join(off)} after the call")
    move = moved_off(moves, device)
    if move is not None:
        return moved_back(start, move, device, None, evidence)
    return Verdict(False, f"{start}, and no move of it off {device} was heard: the caller's "
                   "model was not left on the device the contract moves it to (a copy moved "
                   "there in its place leaves it so). Move the caller's model, model.to(device) "
                   "(Module.to moves the model itself), and leave it there.",
                   "model-not-moved", evidence)
