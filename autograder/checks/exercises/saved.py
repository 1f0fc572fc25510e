"""q2_saved: what autograd saves for backward, counted with ``saved_tensors_hooks``.

The reference is never a typed constant: the grader runs its own pack hook on a deep copy of
the very network it hands the student, in the torch build that grades, because the counts
depend on each operation's backward rule and those change across torch versions.
The reference (``predict``) and the networks it is measured on (``draw_unambiguous``) live in
``saved_reference``.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..describing import describe, plain
from ..probes import InputClass, Subject, changes, explain, snapshot
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import is_int
from .saved_reference import (
    LESSON_COUNTS,
    Predictions,
    draw_unambiguous,
    layout_copy,
    predict,
    with_tracked_inputs,
)

QUESTION = "q2_saved"


def _pair_problem(got: Any) -> str | None:
    """Why ``got`` is not ``(count, bytes)`` as two ints; ``None`` when it is."""
    if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"returned {describe(got)}; expected a tuple of two ints (pack calls, bytes)."
    if not all(is_int(v) for v in got):
        return (f"returned {describe(list(got))}; both entries must be Python ints: the number "
                "of pack calls and the sum of numel() * element_size().")
    return None


def judge_counts(seq: list[Any], pred: Predictions, track: bool, shown: str) -> Verdict:
    """Judge three calls on one (net, inputs): ``track``, ``not track``, ``track`` again.

    Repeating the call is what exposes a list that is never reset: identical calls must give
    identical answers. The middle call, in the other mode, tells a swapped ``no_grad`` from a
    missing one.
    """
    expected = pred.tracked if track else pred.untracked
    evidence = Evidence(inputs={"call": shown}, expected=list(expected), got=plain(seq[0]))
    for got in seq:
        problem = _pair_problem(got)
        if problem:
            return Verdict(False, f"{shown} {problem}", "wrong-type", evidence)
    first, other, again = (tuple(int(v) for v in got) for got in seq)
    if again != first:
        return Verdict(False, f"{shown} returned {first}, and {again} when called again with the "
                       "same arguments: the counts carried over between calls. Start from an "
                       "empty list (or zero counters) inside count_saved, on every call.",
                       "carried-over", evidence)
    if first == expected:
        return Verdict(True, evidence=evidence)
    name, hint = _diagnose(first, other, pred, track)
    return Verdict(False, f"{shown} returned {first}; expected {expected} from the grader's own "
                   f"hook run on the same network. {hint}".rstrip(), name, evidence)


def _diagnose(got: tuple[int, int], other: tuple[int, int], pred: Predictions,
              track: bool) -> tuple[str | None, str]:
    """Match a consistent but wrong answer against the known mistakes; most specific first."""
    nothing = (0, 0)
    if track and got == nothing and other == nothing:
        return "nothing-counted", ("Nothing was counted in either mode: run net(inputs) inside "
                                   "the saved_tensors_hooks block and record each call of pack.")
    if (track and got == nothing) or (not track and got == pred.tracked and other == nothing):
        return "no-grad-wrong-run", (
            "torch.no_grad() was applied to the wrong run: the tracked forward saved nothing. "
            "Use no_grad only when track is False.")
    name, hint = _only_match(got, pred, track)
    if name:
        return name, hint
    if track and got[0] == pred.tracked[0]:
        # what differs, not a cause (a sum over the wrong tensors and an answer kept from
        # another batch both give it): the probes look for the cause
        return None, "The number of pack calls is right; the bytes are not."
    return None, ""  # no guessed cause: the probes look for one (check_count_saved)


def _patterns(pred: Predictions, track: bool) -> list[tuple[str, tuple[int, int] | None, str]]:
    """What each known mistake answers on this network: ``(id, prediction, hint)``, most
    specific first (``None``: not predicted in this mode)."""
    return [
        ("no-grad-wrong-run", None if track else pred.tracked,
         "track=False recorded a graph: run net(inputs) under torch.no_grad() when track is "
         "False, so nothing is saved."),
        ("counted-parameters", pred.params,
         "These are the network's parameters (how many, and their bytes), not the tensors "
         "autograd saved: count inside the pack hook, one entry per call."),
        ("unique-storages", pred.unique if track else None,
         "You counted distinct tensors, but one tensor can be saved by several operations (an "
         "activation's output is saved by it and by the next Linear): count every pack call."),
        ("bytes-assume-float32", pred.four_bytes if track else None,
         "The bytes assume 4 per element, but this network is float64: use element_size()."),
        ("storage-bytes", pred.storage if track and pred.storage != pred.tracked else None,
         "You counted each saved tensor's whole storage (untyped_storage().nbytes() or the "
         "storage's size), but a saved tensor can be a view that reaches only part of its "
         "storage: this batch is every other row of a larger tensor. Count numel() * "
         "element_size() of each tensor pack receives."),
        ("lesson-constant", LESSON_COUNTS,
         "These are the lesson's counts for its own network, not for this one (typed in, or "
         "kept from an earlier call): count the pack calls for the net and inputs you are "
         "given, on every call."),
        *((name, getattr(pred, field), f"{hint} {EVERY_PACK}") for name, field, hint in LEFT_OUT
          if track),
        *((name, pred.bytes_by(size), hint(_example(pred, size))) for name, size, hint
          in BYTE_SIZES if track and pred.packed),
    ]


def _matches(got: tuple[int, int], pred: Predictions, track: bool) -> list[tuple[str, str]]:
    """Every known mistake (id, hint) whose prediction here is ``got`` and not the right
    count, most specific first."""
    expected = pred.tracked if track else pred.untracked
    return [(name, hint) for name, predicted, hint in _patterns(pred, track)
            if predicted is not None and tuple(predicted) != tuple(expected)
            and tuple(got) == tuple(predicted)]


#: The mistakes that leave out a kind of saved tensor (``LEFT_OUT``), by id.
LEFT_OUT_NAMES = frozenset(("weights-left-out", "leaves-left-out", "weights-and-leaves-left-out"))


def _only_match(got: tuple[int, int], pred: Predictions, track: bool) -> tuple[str | None, str]:
    """The known mistake ``got`` is, by this network alone: the most specific match, unless a
    kind left out (``LEFT_OUT``) matches beside another mistake, or a per-tensor size
    (``BYTE_SIZES``) matches at all; then none, as one network cannot say which it is
    (``confirmed`` asks the other networks: a size is named only where it gives every one of
    their answers, as a size that only looks like one on this network's few shapes does
    not)."""
    found = _matches(got, pred, track)
    names = {name for name, _ in found}
    if BYTE_NAMES & names or (len(found) > 1 and LEFT_OUT_NAMES & names):
        return None, ""
    return found[0] if found else (None, "")


def confirmed(verdict: Verdict, count_saved: Callable, cases: list, failing: int,
              got: Any, track: bool) -> Verdict:
    """A wrong answer that matched several known mistakes on its network, or a per-tensor size
    (``_only_match``), named when one of them alone also gives the answers on the check's other
    networks: those before it (answered right, so the mistake must predict the right count
    there) and those after it (asked now, one call each)."""
    if verdict.ok or verdict.misconception is not None or _pair_problem(got):
        return verdict
    got = tuple(int(v) for v in got)
    candidates = [name for name, _ in _matches(got, cases[failing][2], track)]
    if len(candidates) < 2 and not BYTE_NAMES & set(candidates):
        return verdict
    answers: list[tuple[int, int] | None] = []
    for index, (net, inputs, pred) in enumerate(cases):
        if index < failing:
            answers.append(pred.tracked if track else pred.untracked)
        elif index == failing:
            answers.append(got)
        else:
            answer, failure = call(count_saved, "count_saved", net, layout_copy(inputs), track)
            if failure is not None or _pair_problem(answer):
                return verdict
            answers.append(tuple(int(v) for v in answer))

    def predicted(name: str, pred: Predictions) -> tuple[int, int]:
        expected = pred.tracked if track else pred.untracked
        found = [p for n, p, _ in _patterns(pred, track) if n == name]
        return tuple(found[0]) if found and found[0] is not None else tuple(expected)

    agree = [name for name in candidates
             if all(predicted(name, pred) == answer for (_, _, pred), answer in zip(cases, answers))]
    if len(agree) != 1:
        return verdict
    hint = dict(_matches(got, cases[failing][2], track))[agree[0]]
    return Verdict(False, f"{verdict.message} {hint} (The same mistake gives your answers on "
                   f"the other {len(cases) - 1} networks.)", agree[0], verdict.evidence,
                   verdict.traceback)


#: Every pack call counts, whatever the tensor is: what a count that skipped a kind is told.
EVERY_PACK = ("Every call of pack is a tensor autograd keeps for backward, whatever it is: "
              "count them all, without looking at what the tensor is.")
#: A kind of saved tensor a count can leave out: (id, ``Predictions`` field, what was left out).
LEFT_OUT = (
    ("weights-left-out", "no_weights",
     "These are the counts without the saved tensors that share a parameter's storage: a Linear "
     "saves its weight (as weight.t(), a view of it) to compute the gradient of its input, so "
     "weights are saved tensors too, not only activations."),
    ("leaves-left-out", "no_leaves",
     "These are the counts without the saved leaf tensors (no grad_fn): the first Linear saves "
     "the batch itself, a leaf, to compute its weight's gradient, so leaves are saved tensors "
     "too, not only the results of operations."),
    ("weights-and-leaves-left-out", "activations",
     "These are the counts of the activations alone, without the saved weights (a Linear saves "
     "weight.t(), a view of its weight) and without the saved batch (a leaf the first Linear "
     "keeps): those are saved for backward too."),
)


#: What each saved tensor's bytes are: the fix a count from another size of it is told.
BYTES_FIX = ("Count t.numel() * t.element_size() for each tensor pack receives: its number of "
             "elements times the bytes of one element.")
#: Sizes a count can take for each saved tensor instead of ``numel() * element_size()``:
#: (id, the bytes it counts from ``(shape, element_size, sys.getsizeof)``, hint from an example
#: packed tensor where it differs, as ``(shape, numel, element_size, object_size)``).
BYTE_SIZES: tuple[tuple[str, Callable[[tuple[int, ...], int, int], int],
                        Callable[[tuple], str]], ...] = (
    ("bytes-from-first-dimension", lambda shape, size, obj: shape[0] * size if shape else size,
     lambda ex: "Each saved tensor's bytes were counted from its first dimension alone: len(t), "
     f"t.shape[0] and t.size(0) are its number of rows, not of elements (a saved {ex[0]} "
     f"tensor has len {ex[0][0]} but {ex[1]} elements). {BYTES_FIX}"),
    ("bytes-from-last-dimension", lambda shape, size, obj: shape[-1] * size if shape else size,
     lambda ex: "Each saved tensor's bytes were counted from its last dimension alone "
     f"(t.shape[-1], t.size(-1)), not from all its elements (a saved {ex[0]} tensor has "
     f"{ex[0][-1]} entries along its last dimension but {ex[1]} elements). {BYTES_FIX}"),
    ("bytes-from-number-of-dimensions", lambda shape, size, obj: len(shape) * size,
     lambda ex: "Each saved tensor's bytes were counted from its number of dimensions (t.dim(), "
     f"t.ndim, len(t.shape): {len(ex[0])} for a saved {ex[0]} tensor), not from its number "
     f"of elements ({ex[1]}). {BYTES_FIX}"),
    ("bytes-without-element-size", lambda shape, size, obj: math.prod(shape),
     lambda ex: "These are the saved tensors' numbers of elements, not their bytes: numel() "
     f"counts elements, each of which takes element_size() bytes ({ex[2]} here). {BYTES_FIX}"),
    ("bytes-in-bits", lambda shape, size, obj: math.prod(shape) * size * 8,
     lambda ex: "These are bits, 8 times the bytes: torch.finfo(dtype).bits, or nbytes * 8, "
     f"counts bits. {BYTES_FIX}"),
    ("bytes-of-python-object", lambda shape, size, obj: obj,
     lambda ex: "sys.getsizeof(t) is the size of the Python object that wraps a tensor "
     f"({ex[3]} bytes, whatever the tensor's shape), not of the tensor's elements. "
     f"{BYTES_FIX}"),
)
BYTE_NAMES = frozenset(name for name, _, _ in BYTE_SIZES)


def _example(pred: Predictions, size: Callable[[tuple[int, ...], int, int], int]) -> tuple:
    """A packed tensor whose bytes ``size`` gets wrong, as ``(shape, numel, element_size,
    object_size)`` (the first one, when it gets none wrong: then it is not matched)."""
    wrong = [p for p in pred.packed if size(*p) != math.prod(p[0]) * p[1]] or list(pred.packed)
    shape, element, obj = wrong[0]
    return shape, math.prod(shape), element, obj


#: What a tracked count taken on the batch made to require grad is told.
INPUTS_TRACKED = ("These are the counts for the batch made to require grad: then the first "
                  "Linear also saves its weight (for the batch's own gradient). Count the "
                  "forward on the inputs as they were given, their requires_grad left alone.")


def inputs_made_tracked(verdict: Verdict, got: Any, net: nn.Module, inputs: torch.Tensor,
                        track: bool) -> Verdict:
    """A wrong tracked answer with no named cause, named when it is the grader's own count
    for the same batch made to require grad (on a batch that does not)."""
    if (verdict.ok or verdict.misconception is not None or not track or inputs.requires_grad
            or _pair_problem(got) or tuple(int(v) for v in got)
            != with_tracked_inputs(net, inputs)):
        return verdict
    return Verdict(False, f"{verdict.message} {INPUTS_TRACKED}", "inputs-made-tracked",
                   verdict.evidence, verdict.traceback)


def describe_call(net: nn.Module, inputs: torch.Tensor, track: bool) -> str:
    """``count_saved(Sequential(Linear(3, 2), Tanh()), inputs (4, 3) float64, track=True)``."""
    layers = ", ".join(f"Linear({m.in_features}, {m.out_features})" if isinstance(m, nn.Linear)
                       else f"{type(m).__name__}()" for m in net)
    dtype = str(inputs.dtype).replace("torch.", "")
    view = "" if inputs.is_contiguous() else f" (a view, strides {tuple(inputs.stride())})"
    return (f"count_saved(Sequential({layers}), inputs {tuple(inputs.shape)} {dtype}{view}, "
            f"track={track})")


def every_other_row(batch: torch.Tensor) -> torch.Tensor:
    """``batch``'s rows as every other row of a tensor of ``2 * rows - 1`` rows: a view whose
    storage is larger than its own elements, as a strided slice of a larger batch is (the
    elements between its rows are zeros)."""
    base = torch.zeros((2 * batch.shape[0] - 1, *batch.shape[1:]), dtype=batch.dtype)
    base[::2] = batch
    return base[::2]


#: What count_saved must leave as it found it: the caller's network and inputs.
MODIFIED_HINT = ("count_saved must only count: leave the network and the inputs as they were "
                 "(no requires_grad, mode or hook left set on them).")


def judge_left_alone(net: nn.Module, inputs: torch.Tensor, before: tuple[dict, dict],
                     shown: str) -> Verdict:
    """The caller's network and inputs after one call, against their snapshot before it."""
    changed = changes(before[0], net, "net") + changes(before[1], inputs, "inputs")
    if not changed:
        return PASS
    what = "modified-network" if changes(before[0], net, "net") else "modified-input"
    return Verdict(False, f"{shown} changed what it was given: {'; '.join(changed)}. "
                   f"{MODIFIED_HINT}", what, Evidence(inputs={"call": shown}, got=changed))


def _reference(net: nn.Module, inputs: torch.Tensor, track: bool) -> tuple[int, int]:
    pred = predict(net, inputs)
    return pred.tracked if track else pred.untracked


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(net, inputs, track)`` a probe can step out of."""
    net, inputs, track = args
    classes = []
    if inputs.shape[0] == 1:
        classes.append(InputClass("batch-of-one", (net, inputs.repeat(2, 1), track),
                                  "Does a batch of one take another path (.squeeze(), a shape "
                                  "test)?"))
    if inputs.requires_grad:
        classes.append(InputClass("requires-grad", (net, inputs.detach(), track),
                                  "Does an input that requires grad change what is counted?"))
    if not inputs.is_contiguous():
        classes.append(InputClass("strided-view", (net, inputs.contiguous(), track),
                                  "Does a batch that is a view of a larger tensor (every other "
                                  "row) change what is counted?"))
    other = torch.float32 if inputs.dtype == torch.float64 else torch.float64
    classes.append(InputClass(str(inputs.dtype).replace("torch.", ""),
                              (copy.deepcopy(net).to(other), inputs.detach().to(other)
                               .requires_grad_(inputs.requires_grad), track),
                              "Does the count assume a dtype (a fixed number of bytes)?"))
    return classes


def subject(count_saved: Callable, net: nn.Module, inputs: torch.Tensor, track: bool) -> Subject:
    """What the probes need to explain a wrong ``count_saved``."""
    def same(got: Any, expected: Any) -> bool:
        return _pair_problem(got) is None and tuple(int(v) for v in got) == tuple(expected)

    def numbers(x: Any) -> list[float] | None:
        return None if _pair_problem(x) else [float(v) for v in x]

    return Subject("count_saved", count_saved, (net, inputs, track), ("net", "inputs", "track"),
                   _reference, same, numbers,
                   variations={1: lambda x: [torch.cat([x.detach(), x.detach()])
                                             .requires_grad_(x.requires_grad)]},
                   classes=input_classes)


def check_count_saved(count_saved: Callable, rng: np.random.Generator, *, track: bool,
                      points: float = 1.0) -> CheckResult:
    """Call ``count_saved`` on fresh networks and batches, float32 and float64.

    Args:
        count_saved: the student's function.
        rng: a generator seeded with the grading seed.
        track: which mode is judged (the other mode is called too, to tell mistakes apart).
        points: what the check is worth.
    """
    seed = seed_of(rng)
    dtypes = [torch.float32, torch.float64, [torch.float32, torch.float64][int(rng.integers(2))]]
    cases = [draw_unambiguous(rng, dtype=dtype, min_linear=2 if i < 2 else 1)
             for i, dtype in enumerate(dtypes)]
    # drawn last, so that the cases above stay those of earlier runs with the same seed: a batch
    # of one row that requires grad, in either dtype
    cases.append(draw_unambiguous(rng, dtype=dtypes[int(rng.integers(2))], min_linear=1,
                                  batch=1, tracked_inputs=True))
    # the first network again, with a batch of another size: an answer kept from an earlier
    # call on the same network must not come back. That batch is a strided view (every other
    # row of a larger tensor): counting each saved tensor's whole storage, not its own
    # elements, shows there
    net, inputs = cases[0][0], cases[0][1]
    again = every_other_row(torch.from_numpy(rng.standard_normal(
        (inputs.shape[0] + int(rng.integers(1, 4)), inputs.shape[1]))).to(inputs.dtype))
    cases.append((net, again, predict(net, again)))
    verdict = PASS
    for index, (net, inputs, pred) in enumerate(cases):
        seq, shown = [], describe_call(net, inputs, track)
        for mode in (track, not track, track):
            given = layout_copy(inputs)
            before = snapshot(net), snapshot(given)
            got, verdict = call(count_saved, "count_saved", net, given, mode)
            verdict = verdict or judge_left_alone(net, given, before, shown)
            if not verdict.ok:
                break
            seq.append(got)
        if verdict.ok:
            verdict = inputs_made_tracked(judge_counts(seq, pred, track, shown), seq[0], net,
                                          inputs, track)
            verdict = confirmed(verdict, count_saved, cases, index, seq[0], track)
        if not verdict.ok:  # a named mistake stays as it is; the rest goes to the probes
            verdict = explain(verdict, subject(count_saved, net, inputs, track),
                              seq[0] if seq else None)
            break
    mode = "tracked" if track else "untracked"
    return finish(QUESTION, f"count_saved_{mode}", verdict, seed=seed, points=points,
                  passed_message=f"count_saved with track={track} matched the grader's own hook "
                                 "run on fresh networks.")
