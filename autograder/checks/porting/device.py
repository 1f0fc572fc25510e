"""q4_device: choosing a device, predicting on it, and building an optimizer after the move.

Which device is available is simulated (``call_context(simulate_devices=...)``: the student's
``torch.cuda.is_available`` and ``torch.backends.mps.is_available`` answer as told during one
call, wherever that code runs). A real device change is
needed to see a batch that was never moved or an optimizer built before the move: on a CUDA
grading machine that change is CPU → CUDA, elsewhere CPU → ``meta`` (shapes, no values).

What the judge measures and what it only hears (docs/security.md): points go on ``predict``'s
answer, the tensor it returns (type, device, shape, values against the grader's own forward,
``requires_grad``). Whether the forward *recorded* a graph before a ``detach()`` leaves no
trace in that answer, and the count of tensors saved for backward is taken inside the
student's process, where a cell can replace the counter: it is heard, not measured, so a
positive count adds advice to a passing result (misconception ``graph-recorded``) and never
costs a point. ``pick_device`` is judged against the availability the judge itself asked to
simulate, never against anything the worker reports.
"""

from __future__ import annotations

import copy
import dataclasses
from contextlib import nullcontext
from typing import Any, Callable

import numpy as np
import torch
import torch.nn as nn

from ..calling import call, call_observed, describe, fmt, plain
from ..context import call_context
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from ..probes import InputClass, Subject, explain, numbers_of
from .common import describe_any, judge_tensor, name_raised, plain_any, with_diagnosis
from .device_probes import explain_pick, explain_optimizer

QUESTION = "q4_device"
RTOL, ATOL = 1e-5, 1e-6
DEVICE_MISMATCH = (
    ("is not on the expected device", "batch-not-moved",
     "The model was moved but the batch was not: Tensor.to returns a new tensor, so assign it: "
     "batch = batch.to(device)."),
    ("Expected all tensors to be on the same device", "batch-not-moved",
     "The model was moved but the batch was not: Tensor.to returns a new tensor, so assign it: "
     "batch = batch.to(device)."),
)


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


def draw_model(rng: np.random.Generator) -> tuple[nn.Module, torch.Tensor]:
    """A small MLP with dropout, in training mode (as a model arrives mid-training), and a batch."""
    n_in, hidden, n_out = (int(v) for v in rng.integers(2, 9, size=3))
    with torch.random.fork_rng(devices=[]):  # leave the global torch RNG as it was
        model = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Dropout(0.5),
                              nn.Linear(hidden, n_out))
    # weights from ``rng``, not torch's global RNG: that one is shared by the judge's threads,
    # so seeding it here would let concurrent gradings draw each other's models
    with torch.no_grad():
        for param in model.parameters():
            bound = 1.0 / np.sqrt(param.shape[-1] if param.dim() > 1 else hidden)
            param.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(param.shape)),
                                     dtype=torch.float32))
    batch = torch.tensor(rng.standard_normal((int(rng.integers(3, 12)), n_in)),
                         dtype=torch.float32)
    return model.train(), batch


def run_predict(predict: Callable, model: nn.Module, batch: torch.Tensor,
                device: torch.device) -> tuple[Any, Verdict | None, int, bool]:
    """Call ``predict`` while counting tensors saved for backward (a recorded graph), and
    whether TF32 matmuls were on after it. Both are taken where the student's code runs, so
    they are only heard: advice and a named cause, never points."""
    with call_context(count_saved_tensors=True, observe_tf32=True), \
            torch.random.fork_rng(devices=[]):
        # fork_rng: a train-mode dropout must not shift torch's rng
        got, observed, failure = call_observed(predict, "predict", model, batch, device)
    tf32 = observed.get("tf32") is True
    if failure is not None:
        return None, name_raised(failure, DEVICE_MISMATCH), 0, tf32
    return got, None, int(observed.get("saved_tensors", 0)), tf32


def tf32_cause(tf32: bool, device: torch.device) -> tuple[str | None, str]:
    """The cause of values off by more than the tolerance on CUDA when the student's process
    had TF32 matmuls on (its inputs rounded to 10 mantissa bits: ~1e-3 relative error)."""
    if not (tf32 and device.type == "cuda"):
        return None, ""
    return ("tf32-enabled", "Your notebook turned on TF32 matmuls (torch.backends.cuda.matmul."
            "allow_tf32 = True or torch.set_float32_matmul_precision('high'/'medium')), which "
            "round float32 products on the GPU to about 3 decimal digits: leave float32 "
            "matmuls at full precision.")


def judge_prediction(got: Any, packed: int, model: nn.Module, expected: torch.Tensor,
                     device: torch.device, tf32: bool = False) -> Verdict:
    """Type → shape → device → no graph → values (values only on a device that has them).

    ``packed`` (the heard count) only words the message of an answer that requires grad; the
    verdict is the answer's own."""
    shown = f"predict(model, batch, {device})"
    if isinstance(got, torch.Tensor) and got.device.type != device.type:
        return Verdict(False, f"{shown} returned a tensor on {got.device}; expected it on "
                       f"{device}: move the model and the batch there, and return the output "
                       "as it is.", "output-not-on-device", Evidence(got=plain_any(got)))
    if isinstance(got, torch.Tensor) and got.requires_grad:
        return Verdict(False, f"{shown} recorded a graph ({packed} tensors saved for backward, "
                       f"requires_grad={got.requires_grad}): run the forward inside "
                       "`with torch.no_grad():`; detach() afterwards does not avoid the "
                       "recording.", "graph-recorded", Evidence(got=plain_any(got)))
    if device.type == "meta" and isinstance(got, torch.Tensor):
        if got.shape == expected.shape:
            return PASS
        return Verdict(False, f"{shown} returned {describe_any(got)}; expected a tensor of shape "
                       f"{tuple(expected.shape)}.", "wrong-shape", Evidence(got=plain_any(got)))
    verdict = judge_tensor(got, expected, shown, dtype=expected.dtype, rtol=RTOL, atol=ATOL)
    # no guessed cause when the model is in eval mode after the call: check_predict probes
    return with_diagnosis(verdict, lambda: (
        ("eval-missing", "The model is still in training mode, so dropout zeroed some units: "
                         "call model.eval() before the forward.") if model.training
        else tf32_cause(tf32, device)))


def subject(predict: Callable, model: nn.Module, batch: torch.Tensor,
            device: torch.device) -> Subject:
    """What the probes need to explain a wrong ``predict`` (the model as it arrived: training
    mode)."""
    def reference(m: nn.Module, b: torch.Tensor, d: torch.device) -> torch.Tensor:
        with torch.no_grad():
            return copy.deepcopy(m).eval()(b)

    def same(got: Any, expected: torch.Tensor) -> bool:
        return judge_tensor(got, expected, "", dtype=expected.dtype, rtol=RTOL, atol=ATOL).ok

    def batch_classes(args: tuple) -> list[InputClass]:
        m, b, d = args
        if b.shape[0] != 1:
            return []
        return [InputClass("batch-of-one", (m, b.repeat(2, 1), d),
                           "Does a batch of one take another path (.squeeze(), a shape test)?")]

    return Subject("predict", predict, (model, batch, device), ("model", "batch", "device"),
                   reference, same, numbers_of,
                   variations={1: lambda b: [b * 2 + 1]}, classes=batch_classes)


def explain_prediction(verdict: Verdict, predict: Callable, model: nn.Module,
                       batch: torch.Tensor, device: torch.device, got: Any) -> Verdict:
    """Probe an unexplained wrong ``predict``. Answers that differ between two calls on copies
    of the same model and batch, and agree with torch seeded alike, come from dropout, the
    model's only random part: the forward ran in training mode, whatever mode it was left in
    (``eval()`` called after the forward), so that is the contract's ``eval-missing``."""
    if device.type == "meta" or verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    probed = explain(verdict, subject(predict, model.train(), batch, device), got)
    if probed.misconception != "probe.nondeterministic":
        return probed
    return dataclasses.replace(probed, misconception="eval-missing", message=(
        f"{verdict.message.rstrip()} Two calls on copies of the same model and batch returned "
        "different outputs, and equal ones with torch's generator seeded alike: dropout, the "
        "model's only random part, was active during the forward, even though the model is in "
        "eval mode after the call. Call model.eval() before the forward, not after it."))


def check_predict(predict: Callable, rng: np.random.Generator, *, moved: bool,
                  points: float = 1.0) -> CheckResult:
    """``predict`` on the grading machine's device (``moved=False``: values against a CPU
    reference) or across a real device change (``moved=True``).

    Args:
        predict: the student's function.
        rng: a generator seeded with the grading seed.
        moved: whether to move from the CPU to another device (CUDA, else meta).
        points: what the check is worth.
    """
    seed = seed_of(rng)
    verdict = PASS
    device = changed_device() if moved else grading_device()
    heard = 0
    # the third model gets a batch of one row (an input class the contract allows), drawn
    # last so that the first two stay those of earlier runs with the same seed
    for i in range(3):
        model, batch = draw_model(rng)
        batch = batch[:1].clone() if i == 2 else batch
        pristine = copy.deepcopy(model)  # as it arrived, for the probes
        with torch.no_grad():
            expected = copy.deepcopy(model).eval()(batch)
        got, failure, packed, tf32 = run_predict(predict, model, batch, device)
        verdict = failure or judge_prediction(got, packed, model, expected, device, tf32)
        heard = max(heard, packed)
        if not verdict.ok:
            verdict = explain_prediction(verdict, predict, pristine, batch, device, got)
            break
    name = "predict_after_move" if moved else "predict_values"
    result = finish(QUESTION, name, verdict, seed=seed, points=points,
                    passed_message=f"predict was right on {device}.")
    return with_graph_advice(result, heard, device)


def with_graph_advice(result: CheckResult, heard: int, device: torch.device) -> CheckResult:
    """A passing ``result`` with the advice a recorded graph deserves, when the worker said
    ``predict`` saved tensors for backward. Advice only: the count comes from the student's
    process, so it may not decide points (a cell can make it say 0, or anything)."""
    if not result.passed or heard <= 0:
        return result
    return dataclasses.replace(result, misconception="graph-recorded", message=(
        f"{result.message} Advice, not scored: predict(model, batch, {device}) recorded a "
        f"graph ({heard} tensors saved for backward, as your process reported): run the "
        "forward inside `with torch.no_grad():`; detach() afterwards does not avoid the "
        "recording."))


def judge_optimizer(opt: Any, model: nn.Module, device: torch.device, lr: float,
                    before: set[int]) -> Verdict:
    """SGD, the requested lr, and exactly the model's parameters after the move.

    Args:
        before: ids of the model's parameters before ``make_optimizer`` ran.
    """
    shown = f"make_optimizer(model, {device}, lr={fmt(lr)})"
    if not isinstance(opt, torch.optim.SGD):
        return Verdict(False, f"{shown} returned {describe(opt)}; expected a torch.optim.SGD.",
                       "not-sgd", Evidence(got=describe(opt)))
    lrs = [group.get("lr") for group in opt.param_groups]
    if any(not isinstance(v, (int, float)) or abs(v - lr) > 1e-12 * abs(lr) for v in lrs):
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


def check_make_optimizer(make_optimizer: Callable, rng: np.random.Generator, *, moved: bool,
                         points: float = 1.0) -> CheckResult:
    """``make_optimizer`` on the grading device (``moved=False``), or across a device change
    with ``module.to`` making new parameters (``moved=True``), where an optimizer built
    before the move holds the old ones."""
    seed = seed_of(rng)
    device = changed_device() if moved else grading_device()
    model, _ = draw_model(rng)
    lr = float(np.round(rng.uniform(0.15, 0.9), 3))  # never the default 0.1
    before = {id(p) for p in model.parameters()}
    # moved: ``module.to`` makes new Parameter objects (as between CPU and CUDA it otherwise
    # would not), so an optimizer built before the move holds stale ones
    pristine = copy.deepcopy(model)
    with call_context(overwrite_module_params=True) if moved else nullcontext():
        opt, failure = call(make_optimizer, "make_optimizer", model, device, lr=lr)
        verdict = failure or judge_optimizer(opt, model, device, lr, before)
        verdict = explain_optimizer(verdict, make_optimizer, pristine, device, lr)
    name = "make_optimizer_after_move" if moved else "make_optimizer"
    return finish(QUESTION, name, verdict, seed=seed, points=points,
                  passed_message=f"make_optimizer built SGD over the model's parameters on "
                                 f"{device}.")
