"""q2_saved: what autograd saves for backward, counted with ``saved_tensors_hooks``.

The reference is never a typed constant: the grader runs its own pack hook on a deep copy of
the very network it hands the student, in the torch build that grades, because the counts
depend on each operation's backward rule and those change across torch versions.
The reference (``predict``) and the networks it is measured on (``draw_unambiguous``) live in
``saved_reference``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ..calling import call
from ..describing import plain
from ..probes import explain, snapshot
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .saved_cached import confirmed as cached_confirmed
from .saved_cached import judge_reask, other_batch
from .saved_contiguous import named as contiguous_named
from .saved_dtype import draw_other_dtype, judge_other_dtype
from .saved_frozen import check_frozen, draw_frozen
from .saved_groups import established
from .saved_left_alone import judge_left_alone
from .saved_named import named_by_groups
from .saved_patterns import (
    BYTE_NAMES,
    OUTPUT,
    extra_forwards,
    extra_forwards_hint,
    matches,
    only_match,
    patterns,
)
from .saved_recycled import recycled
from .saved_reference import (
    OTHER_ACTIVATIONS,
    Predictions,
    draw_unambiguous,
    layout_copy,
    predict,
    with_tracked_inputs,
)
from .saved_subject import pair_problem, subject
from .saved_view import view_on_saved

QUESTION = "q2_saved"


def judge_counts(seq: list[Any], pred: Predictions, track: bool, shown: str) -> Verdict:
    """Judge three calls on one (net, inputs): ``track``, ``not track``, ``track`` again.

    Repeating the call is what exposes a list that is never reset: identical calls must give
    identical answers. The middle call, in the other mode, tells a swapped ``no_grad`` from a
    missing one.
    """
    expected = pred.tracked if track else pred.untracked
    evidence = Evidence(inputs={"call": shown}, expected=list(expected), got=plain(seq[0]))
    for got in seq:
        problem = pair_problem(got)
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
    # before the wrong run: an extra tracked forward makes track=False count one run too
    extra = extra_forwards(*((got, other) if track else (other, got)), pred)
    if extra is not None:
        return "extra-forward-in-hooks", extra_forwards_hint(extra)
    if (track and got == nothing) or (not track and got == pred.tracked and other == nothing):
        return "no-grad-wrong-run", (
            "torch.no_grad() was applied to the wrong run: the tracked forward saved nothing. "
            "Use no_grad only when track is False.")
    name, hint = only_match(got, pred, track)
    if name:
        return name, hint
    if track and got[0] == pred.tracked[0]:
        # what differs, not a cause (a sum over the wrong tensors and an answer kept from
        # another batch both give it): the probes look for the cause
        return None, "The number of pack calls is right; the bytes are not."
    return None, ""  # no guessed cause: the probes look for one (check_count_saved)


def confirmed(verdict: Verdict, count_saved: Callable, cases: list, failing: int,
              got: Any, track: bool) -> Verdict:
    """A wrong answer that matched several known mistakes on its network, or a per-tensor size
    (``only_match``), named when one of them alone also gives the answers on the check's other
    networks: those before it (answered right, so the mistake must predict the right count
    there) and those after it (asked now, one call each)."""
    if verdict.ok or verdict.misconception is not None or pair_problem(got):
        return verdict
    got = tuple(int(v) for v in got)
    # the output left out is told apart on networks of the grader's own (named_by_groups)
    candidates = [name for name, _ in matches(got, cases[failing][2], track) if name != OUTPUT]
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
            if failure is not None or pair_problem(answer):
                return verdict
            answers.append(tuple(int(v) for v in answer))

    def predicted(name: str, pred: Predictions) -> tuple[int, int]:
        expected = pred.tracked if track else pred.untracked
        found = [p for n, p, _ in patterns(pred, track) if n == name]
        return tuple(found[0]) if found and found[0] is not None else tuple(expected)

    agree = [name for name in candidates
             if all(predicted(name, pred) == answer for (_, _, pred), answer in zip(cases, answers))]
    if len(agree) != 1:
        return verdict
    hint = dict(matches(got, cases[failing][2], track))[agree[0]]
    return Verdict(False, f"{verdict.message} {hint} (The same mistake gives your answers on "
                   f"the other {len(cases) - 1} networks.)", agree[0], verdict.evidence,
                   verdict.traceback)


#: What a tracked count taken on the batch made to require grad is told.
INPUTS_TRACKED = ("These are the counts for the batch made to require grad: then the first "
                  "Linear also saves its weight (for the batch's own gradient). Count the "
                  "forward on the inputs as they were given, their requires_grad left alone.")


def inputs_made_tracked(verdict: Verdict, got: Any, net: nn.Module, inputs: torch.Tensor,
                        track: bool) -> Verdict:
    """A wrong tracked answer with no named cause, named when it is the grader's own count
    for the same batch made to require grad (on a batch that does not)."""
    if (verdict.ok or verdict.misconception is not None or not track or inputs.requires_grad
            or pair_problem(got) or tuple(int(v) for v in got)
            != with_tracked_inputs(net, inputs)):
        return verdict
    return Verdict(False, f"{verdict.message} {INPUTS_TRACKED}", "inputs-made-tracked",
                   verdict.evidence, verdict.traceback)


def counts_something(answers: list[tuple[Any, Predictions]]) -> Verdict:
    """``PASS`` unless the tracked answers of the untracked check's calls (the middle call of
    each network's three) are one pair for every network though the grader's counts differ:
    then (0, 0) without tracking is no measurement either (red-team round rt-3: a function
    returning (0, 0) whatever it was given earned the untracked check's points), a failing
    verdict, ``answer-ignores-input``."""
    pairs = {tuple(int(v) for v in got) for got, _ in answers if not pair_problem(got)}
    expected = {tuple(pred.tracked) for _, pred in answers}
    if len(answers) < 2 or len(pairs) != 1 or len(expected) < 2:
        return PASS
    pair = next(iter(pairs))
    return Verdict(False, f"count_saved returned {pair} with track=True on every network the "
                   f"grader gave it, where its own hook counts {sorted(expected)[:3]}...: a "
                   "count that is the same whatever the network measures nothing, so its (0, 0) "
                   "with track=False earns nothing either. Count the pack calls (and bytes) of "
                   "net(inputs) run inside torch.autograd.graph.saved_tensors_hooks, under "
                   "torch.no_grad() only when track is False.", "answer-ignores-input",
                   Evidence({"tracked answers": [list(pair)] * len(answers)},
                            [list(e) for e in sorted(expected)], list(pair)))


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


#: The Linear layers of the deep network each count_saved check ends its first calls with
DEEP = (6, 9)


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
    # drawn last for the same reason: a batch of one row into a Linear with one output and an
    # activation, which saves its (1, 1) output, a tensor of one element (the networks above
    # save none: a count that skips one-element tensors is right on them)
    cases.append(draw_unambiguous(rng, dtype=dtypes[int(rng.integers(2))], min_linear=1,
                                  batch=1, one_output=True))
    # drawn last: the first network asked again right after its first batch, with a batch of
    # another size (saved_cached: counts kept per network)
    reask = other_batch(rng, cases[0][1], avoid=(cases[3][1].shape[0],))
    # drawn last: a network in the other dtype right after itself (saved_dtype)
    dtype_case = draw_other_dtype(rng, cases)
    # drawn last: a frozen network and one with its first Linear frozen (saved_frozen)
    frozen = draw_frozen(rng)
    # drawn last: a deep network, 6 to 9 Linear layers, which saves more tensors than any
    # above (red team rt-6: a count kept in a ring of 16 slots passed every smaller network)
    cases.append(draw_unambiguous(rng, dtype=dtypes[int(rng.integers(2))], min_linear=DEEP[0],
                                  max_linear=DEEP[1]))
    # drawn last: 2 or 3 Linear layers between other activations than the four above, each
    # saving what its own backward needs (red teams rt-9, rt-10: a count read from a table of
    # the backward rules of Linear, ReLU, Tanh and Sigmoid passed every network above)
    cases.append(draw_unambiguous(rng, dtype=dtypes[int(rng.integers(2))], min_linear=2,
                                  activations=OTHER_ACTIVATIONS))
    verdict = PASS
    tracked_answers: list[tuple[Any, Predictions]] = []  # the other mode's, when track=False
    for index, (net, inputs, pred) in enumerate(cases):
        seq, shown = [], describe_call(net, inputs, track)
        for mode in (track, not track, track):
            given = layout_copy(inputs)
            before = snapshot(net), snapshot(given)
            got, verdict = call(count_saved, "count_saved", net, given, mode)
            # the call that changed them, in its own mode (round zzze: the untracked check
            # blamed its track=False call for what the track=True call between them did)
            verdict = verdict or judge_left_alone(net, given, before,
                                                  describe_call(net, inputs, mode))
            if not verdict.ok:
                break
            seq.append(got)
        if verdict.ok and not track:
            tracked_answers.append((seq[1], pred))
        if verdict.ok:
            verdict = inputs_made_tracked(judge_counts(seq, pred, track, shown), seq[0], net,
                                          inputs, track)
            verdict = confirmed(verdict, count_saved, cases, index, seq[0], track)
            # the network's output left out (t.data_ptr() != out.data_ptr()), told apart from
            # the other saved tensors of its size on networks of the grader's own
            verdict = named_by_groups(verdict, count_saved, cases, index, seq[0], track)
            verdict = contiguous_named(verdict, count_saved, pred,  # is_contiguous()
                                       [c[2] for c in cases[:index]], seq[0], track)
        if not verdict.ok:  # a named mistake stays as it is; the rest goes to the probes
            verdict = recycled(verdict, seq, net, inputs, [c[:2] for c in cases[:index]], track,
                               shown)
            verdict = cached_confirmed(verdict, count_saved, seq[0] if seq else None, net,
                                       inputs, [b for n, b, _ in cases[:index] if n is net],
                                       track)
            # no cause found: which saved tensors the difference is exactly the size of
            verdict = established(verdict, net, inputs, seq[0] if seq else None, track)
            verdict = explain(view_on_saved(verdict), subject(count_saved, net, inputs, track),
                              seq[0] if seq else None)
            break
    if verdict.ok and not track:
        verdict = counts_something(tracked_answers)
    if verdict.ok:
        net, first = cases[0][0], cases[0][1]
        shown = describe_call(net, reask, track)
        verdict = judge_reask(count_saved, net, first, reask, track, shown)
        verdict = recycled(verdict, [verdict.evidence.got], net, reask,
                           [c[:2] for c in cases], track, shown)
        verdict = explain(view_on_saved(verdict), subject(count_saved, net, reask, track), None)
    if verdict.ok:
        shown = describe_call(*dtype_case[2:], track)
        verdict = explain(view_on_saved(judge_other_dtype(count_saved, *dtype_case, track, shown)),
                          subject(count_saved, *dtype_case[2:], track), None)
    if verdict.ok:
        verdict, failed = check_frozen(count_saved, frozen, track, describe_call)
        if failed is not None and verdict.misconception is None:
            verdict = explain(verdict, subject(count_saved, *failed, track), None)
    verdict = view_on_saved(verdict)  # a raise on the later networks (saved_view)
    mode = "tracked" if track else "untracked"
    return finish(QUESTION, f"count_saved_{mode}", verdict, seed=seed, points=points,
                  passed_message=f"count_saved with track={track} matched the grader's own hook "
                                 "run on fresh networks.")
