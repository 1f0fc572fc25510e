"""q4_device: choosing a device and building an optimizer after the move; the devices and
the model every q4 check uses (predicting on a device is ``device_predict``).

Which device is available is simulated (``call_context(simulate_devices=...)``: the student's
``torch.cuda.is_available`` and ``torch.backends.mps.is_available`` answer as told during one
call, wherever that code runs). A real device change is
needed to see a batch that was never moved or an optimizer built before the move: on a CUDA
grading machine that change is CPU → CUDA, elsewhere CPU → ``meta`` (shapes, no values).
``pick_device`` is judged against the availability the judge itself asked to simulate, never
against anything the worker reports.
"""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from typing import Any, Callable

import numpy as np
import torch
import torch.nn as nn

from ..calling import call
from ..closeness import near
from ..context import call_context
from ..describing import describe, fmt, plain, sentence
from ..probes import PROBE_SEED
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .device_data import SET_DATA
from .device_hooks import hooks_kept, judge_step, model_hooks
from .device_probes import explain_optimizer, explain_pick, kept_optimizer
from .device_weights import distinct, kept, lost_weights

QUESTION = "q4_device"


def grading_device() -> torch.device:
    """The real device of this grading machine: CUDA when present, else the CPU."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def changed_device() -> torch.device:
    """A device other than the CPU: CUDA when present, else ``meta`` (a simulated move)."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")


def judge_pick(got: Any, cuda: bool, mps: bool) -> Verdict:
    """``pick_device()``'s answer when cuda / mps availability is as given."""
    expected = "cuda" if cuda else "mps" if mps else "cpu"
    shown = f"pick_device() with cuda {'available' if cuda else 'unavailable'} and mps " \
            f"{'available' if mps else 'unavailable'}"
    evidence = Evidence({"cuda": cuda, "mps": mps}, expected, plain(got))
    if isinstance(got, str):
        return Verdict(False, f"{shown} returned the string {got!r}, not a torch.device: wrap "
                       f"it, torch.device({got!r}).", "device-as-string", evidence)
    if not isinstance(got, torch.device):
        return Verdict(False, f"{shown} returned {describe(got)}; expected a torch.device.",
                       "wrong-type", evidence)
    if got.type == expected and got.index in (None, 0):
        return Verdict(True, evidence=evidence)
    # no cause here: check_pick_device asks again under every availability (device_probes.py)
    return Verdict(False, f"{shown} returned {got}; expected torch.device({expected!r}).",
                   None, evidence)


def check_pick_device(pick_device: Callable, rng: np.random.Generator, *,
                      points: float = 1.0) -> CheckResult:
    """``pick_device`` under every simulated combination of cuda and mps availability."""
    seed = seed_of(rng)
    verdict = PASS
    cases = [(True, True), (True, False), (False, True), (False, False)]
    for index in rng.permutation(len(cases)):
        cuda, mps = cases[int(index)]
        with call_context(simulate_devices={"cuda": cuda, "mps": mps}):
            got, failure = call(pick_device, "pick_device")
        verdict = failure or judge_pick(got, cuda, mps)
        if not verdict.ok:
            verdict = explain_pick(verdict, pick_device)
            break
    return finish(QUESTION, "pick_device", verdict, seed=seed, points=points,
                  passed_message="pick_device chose correctly under every simulated setup.")


def draw_model(rng: np.random.Generator, n_out: int | None = None
               ) -> tuple[nn.Module, torch.Tensor]:
    """A small MLP with batch normalisation and dropout, in training mode (as a model arrives
    mid-training), and a batch (``n_out``: the outputs, drawn when not given; the draws are the
    same either way).

    Both layers act otherwise in training mode: dropout zeroes units at random, and batch
    normalisation uses the batch's own statistics (and updates its running ones) instead of
    the running statistics it holds, drawn here far from any batch's. So a ``predict`` that
    turns off dropout alone, instead of calling ``model.eval()``, still answers wrong (red team
    rt-9)."""
    n_in, hidden, drawn_out = (int(v) for v in rng.integers(2, 9, size=3))
    n_out = drawn_out if n_out is None else n_out
    with torch.random.fork_rng(devices=[]):  # leave the global torch RNG as it was
        model = nn.Sequential(nn.Linear(n_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                              nn.Dropout(0.5), nn.Linear(hidden, n_out))
    norm = model[1]
    # weights from ``rng``, not torch's global RNG: that one is shared by the judge's threads,
    # so seeding it here would let concurrent gradings draw each other's models
    with torch.no_grad():
        for param in (model[0].weight, model[0].bias, model[4].weight, model[4].bias):
            bound = 1.0 / np.sqrt(param.shape[-1] if param.dim() > 1 else hidden)
            param.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(param.shape)),
                                     dtype=torch.float32))
    batch = torch.tensor(rng.standard_normal((int(rng.integers(3, 12)), n_in)),
                         dtype=torch.float32)
    with torch.no_grad():  # drawn last: the Linear layers and the batch draw as they always did
        for tensor, low, high in ((norm.weight, 0.5, 1.5), (norm.bias, -0.5, 0.5),
                                  (norm.running_mean, -1.0, 1.0), (norm.running_var, 0.25, 4.0)):
            tensor.copy_(torch.tensor(rng.uniform(low, high, hidden), dtype=torch.float32))
        norm.num_batches_tracked.fill_(int(rng.integers(10, 1000)))
    return model.train(), batch


def drawn_again(state: dict, n_out: int | None = None) -> nn.Module:
    """The model ``draw_model`` drew from a generator whose bit generator's state was
    ``state`` before the draw, drawn again: the same layers and weights, in training mode. A
    check keeps the state (a small dict) rather than a ``copy.deepcopy`` of every model it
    hands the student, and draws the copy only when a probe needs the model as it arrived."""
    bits = getattr(np.random, state["bit_generator"])()
    bits.state = state
    return draw_model(np.random.Generator(bits), n_out)[0]


def evaluated(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    """The grader's own forward of its own ``model`` in eval mode without a graph, each module
    left in the mode it was in: the output of ``copy.deepcopy(model).eval()(batch)``, without
    the copy (a forward in eval mode changes nothing of the model)."""
    modes = [(module, module.training) for module in model.modules()]
    try:
        with torch.no_grad():
            return model.eval()(batch)
    finally:
        for module, training in modes:
            module.training = training


def judge_optimizer(opt: Any, model: nn.Module, device: torch.device, lr: float,
                    before: set[int]) -> Verdict:
    """SGD, the requested lr, and exactly the model's parameters after the move.

    Args:
        before: ids of the model's parameters before ``make_optimizer`` ran.
    """
    shown = f"make_optimizer(model, {device}, lr={fmt(lr)})"
    if isinstance(opt, torch.optim.SGD) and type(opt) is not torch.optim.SGD:
        # a class of the notebook's own: its step() is its own too (red team rt-5: a subclass
        # named SGD whose step added momentum, weight decay and a larger lr kept 6/6)
        return Verdict(False, f"{shown} returned a subclass of SGD ({type(opt).__qualname__[:80]}"
                       "), whose step() may do anything; expected torch.optim.SGD itself: "
                       "return torch.optim.SGD(model.parameters(), lr=lr).", "not-sgd",
                       Evidence(got=type(opt).__qualname__[:80]))
    if not isinstance(opt, torch.optim.SGD):
        return Verdict(False, f"{shown} returned {describe(opt)}; expected a torch.optim.SGD.",
                       "not-sgd", Evidence(got=describe(opt)))
    lrs = [group.get("lr") for group in opt.param_groups]
    if not all(near(v, lr, 1e-12) for v in lrs):  # NaN, a bool, an int too large: not lr
        return Verdict(False, f"{shown} built SGD with lr {lrs}; expected {fmt(lr)}: pass the lr "
                       "argument, not a constant.", "lr-ignored",
                       Evidence(expected=lr, got=plain(lrs)))
    left = sorted({str(p.device) for p in model.parameters() if p.device.type != device.type})
    if left:
        return Verdict(False, f"{shown}: after the call the model's parameters are on "
                       f"{', '.join(left)}, not on {device}: move the model first "
                       "(model.to(device)), then build the optimizer over model.parameters().",
                       "model-not-moved", Evidence(expected=str(device), got=left))
    held = {id(p) for group in opt.param_groups for p in group["params"]}
    wanted = {id(p) for p in model.parameters()}
    if held == wanted:
        return PASS
    if held == before:
        return Verdict(False, f"{shown}: the optimizer holds the parameters the model had before "
                       f"it moved to {device}, and moving made new ones. Move the model first "
                       "(model.to(device)), then build the optimizer over model.parameters().",
                       "optimizer-before-move", Evidence(expected=len(wanted), got=len(held)))
    return Verdict(False, f"{shown}: the optimizer holds {len(held)} tensors that are not the "
                   f"model's {len(wanted)} parameters: pass model.parameters().",
                   "wrong-parameters", Evidence(expected=len(wanted), got=len(held)))


#: SGD's settings that change its step, with the value that leaves it plain: ``p -= lr *
#: p.grad`` (dampening and nesterov act only through momentum; foreach, fused and
#: differentiable change how the step is computed, not what it is).
PLAIN_SGD = {"momentum": 0, "weight_decay": 0, "maximize": False}
STEP_WORDS = {"momentum": "adds a momentum buffer (a running sum of past gradients) to every "
                          "step",
              "weight_decay": "also shrinks every parameter toward 0 by lr * weight_decay * p "
                              "(L2 regularisation)",
              "maximize": "steps up the gradient, not down"}


def _is(value: Any, plain_value: Any) -> bool:
    """A setting's value is the plain one: a false bool, or a number exactly it (a NaN, a
    string, a tensor is not)."""
    if isinstance(value, (bool, np.bool_)):
        return not value
    return near(value, float(plain_value), 0.0)


def judge_plain(opt: torch.optim.SGD, device: torch.device, lr: float) -> Verdict:
    """The optimizer's step is plain gradient descent: every group's momentum, weight decay
    and maximize at SGD's defaults (a NaN or a non-number is not a default)."""
    groups = opt.param_groups
    changed = [key for key, plain_value in PLAIN_SGD.items()
               if any(not _is(g.get(key, plain_value), plain_value) for g in groups)]
    if not changed:
        return PASS
    settings = {key: groups[0].get(key) for key in (*changed, "nesterov")
                if key in changed or (key == "nesterov" and groups[0].get(key))}
    shown = ", ".join(f"{key}={value!r}" for key, value in settings.items())
    what = "; ".join(f"{key} {STEP_WORDS[key]}" for key in changed)
    return Verdict(False, f"make_optimizer(model, {device}, lr={fmt(lr)}) built SGD with "
                   f"{shown}: {what}, so its steps are not the gradient descent the lesson "
                   "ports. Return plain SGD, each step p -= lr * p.grad: "
                   "torch.optim.SGD(model.parameters(), lr=lr), nothing else set.",
                   "sgd-not-plain", Evidence({"lr": lr}, dict(PLAIN_SGD), plain(settings)))


def judge_zero_lr(make_optimizer: Callable, model: nn.Module, device: torch.device) -> Verdict:
    """``make_optimizer`` asked for ``lr=0.0``, a legal learning rate (SGD takes it: the steps
    leave the model as it is), judged as any other lr. A new optimizer over this model with
    another lr, from a call whose nonzero lr was honoured, is a falsy default: ``lr or 0.1``,
    ``if not lr:``, ``lr if lr else 0.1`` all replace 0.0."""
    before = {id(p) for p in model.parameters()}
    opt, failure = call(make_optimizer, "make_optimizer", model, device, lr=0.0)
    if failure is not None:
        return zero_lr_refused(failure, make_optimizer, model, device)
    verdict = judge_optimizer(opt, model, device, 0.0, before)
    if verdict.misconception != "lr-ignored":
        return verdict
    lrs = [group.get("lr") for group in opt.param_groups]
    held = {id(p) for group in opt.param_groups for p in group["params"]}
    if held != {id(p) for p in model.parameters()} \
            or not all(near(v, v, 0.0) and v != 0 for v in lrs):  # real numbers, not 0.0
        return verdict
    shown = ", ".join(fmt(float(v)) for v in lrs)
    return Verdict(False, f"make_optimizer(model, {device}, lr=0.0) built SGD with lr {shown}: a "
                   "test like `lr or 0.1` (or `if not lr:`, `lr if lr else 0.1`) replaces 0.0, "
                   "a legal learning rate (SGD takes it; its steps leave the model as it is). "
                   "Pass lr on as it is; to default a missing lr, test `lr is None` instead.",
                   "falsy-lr-replaced", Evidence({"lr": 0.0}, 0.0, plain(lrs)))


#: The small positive rate a refusal of 0.0 is confirmed with.
CONFIRMING_LR = 1e-3


def zero_lr_refused(failure: Verdict, make_optimizer: Callable, model: nn.Module,
                    device: torch.device) -> Verdict:
    """A ``make_optimizer`` that raised for ``lr=0.0`` (blind round zz: ``if not lr > 0: raise
    ValueError``), named ``zero-lr-refused`` when a call with a small positive rate on the same
    model builds the right optimizer: only the 0.0 was refused."""
    if failure.misconception != "raised":
        return failure
    before = {id(p) for p in model.parameters()}
    opt, again = call(make_optimizer, "make_optimizer", model, device, lr=CONFIRMING_LR)
    if again is not None or not judge_optimizer(opt, model, device, CONFIRMING_LR, before).ok:
        return failure
    return dataclasses.replace(
        failure, misconception="zero-lr-refused",
        message=(f"{sentence(failure.message)} With lr={CONFIRMING_LR:g} it built the right "
                 "optimizer: only the 0.0 was refused. lr=0.0 is a legal learning rate (SGD "
                 "takes it; its steps leave the model as it is), and make_optimizer passes "
                 "any lr on to SGD as it is: SGD itself refuses a negative one."))


def check_make_optimizer(make_optimizer: Callable, rng: np.random.Generator, *, moved: bool,
                         points: float = 1.0) -> CheckResult:
    """``make_optimizer`` on the grading device (``moved=False``), or across a device change
    with ``module.to`` making new parameters (``moved=True``), where an optimizer built
    before the move holds the old ones."""
    seed = seed_of(rng)
    device = changed_device() if moved else grading_device()
    state = rng.bit_generator.state  # the model as it arrived, drawn again for the probes
    model, _ = draw_model(rng)
    lr = float(np.round(rng.uniform(0.15, 0.9), 3))  # never the default 0.1
    before = {id(p) for p in model.parameters()}
    hooks = model_hooks(model)
    values = None if moved else kept(distinct(model))  # values no other check's model has
    # moved: ``module.to`` makes new Parameter objects (as between CPU and CUDA it otherwise
    # would not), so an optimizer built before the move holds stale ones
    with call_context(overwrite_module_params=True) if moved else nullcontext():
        opt, failure = call(make_optimizer, "make_optimizer", model, device, lr=lr)
        verdict = failure or judge_optimizer(opt, model, device, lr, before)
        if failure and device.type == "meta" and SET_DATA in failure.message:
            # the parameters swapped through p.data, legal on a GPU, refused by meta: asked
            # again with the model already there, where the swap changes nothing
            model = drawn_again(state).to(device)
            before = {id(p) for p in model.parameters()}
            opt, failure = call(make_optimizer, "make_optimizer", model, device, lr=lr)
            verdict = failure or judge_optimizer(opt, model, device, lr, before)
    if values is not None:  # the weights kept, judged once: on the grading device
        verdict = lost_weights(verdict, make_optimizer, opt, model, values,
                               lambda: drawn_again(state), device, lr)
    if not verdict.ok:  # another model, drawn apart from the check's inputs
        other, _ = draw_model(np.random.default_rng(PROBE_SEED))
        verdict = kept_optimizer(verdict, make_optimizer, opt, model, device, lr, other)
    if not verdict.ok:  # the probes explain failures only
        with call_context(overwrite_module_params=True) if moved else nullcontext():
            verdict = explain_optimizer(verdict, make_optimizer, drawn_again(state), device,
                                        lr)
    shown = f"make_optimizer(model, {device}, lr={fmt(lr)})"
    verdict = judge_step(hooks_kept(verdict, model, hooks, shown), opt, shown)
    if verdict.ok and not moved:  # the step's settings, judged once: not after the move
        verdict = judge_plain(opt, device, lr)
    if verdict.ok and not moved:  # its model drawn after the first case's inputs
        verdict = judge_zero_lr(make_optimizer, draw_model(rng)[0], device)
    name = "make_optimizer_after_move" if moved else "make_optimizer"
    return finish(QUESTION, name, verdict, seed=seed, points=points,
                  passed_message=f"make_optimizer built SGD over the model's parameters on "
                                 f"{device}.")
