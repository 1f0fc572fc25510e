"""q2_saved: counts kept per network and returned again, whatever the batch.

``count_saved`` memoised per network (a ``WeakKeyDictionary`` or a dict keyed by the module,
by ``id(net)``, by its layers or ``str(net)``, with or without ``track``): the first call on a
network is right, later calls on it return that first batch's counts. What autograd saves
depends on the inputs too (the saved activations grow with the batch's rows), so a batch of
another size shows it. Named ``counts-cached`` when an answer is the same network's counts on
the batch it was given before and not this batch's, confirmed by one more call on a third
batch after that earlier batch.

A sealed worker decodes every call's arguments anew, so two calls never share a network
there: the earlier call is made in the same worker request (``call_first``, the call's own
network reused), so that a cache keyed by the object meets the same object.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from ...worker import wire
from ..calling import call
from ..context import call_context
from ..describing import plain
from ..probes import recorded_call
from ..result import PASS, Evidence, Verdict
from .saved_reference import layout_copy, predict

CACHED = "counts-cached"


def call_after(count_saved: Callable, net: nn.Module, first: torch.Tensor,
               inputs: torch.Tensor, track: bool) -> tuple[Any, Verdict | None]:
    """``count_saved(net, inputs, track)``, with ``count_saved(net, first, track)`` called
    just before it on the same network object (its answer discarded)."""
    request = {"args": [wire.encode(None), wire.encode(layout_copy(first)), wire.encode(track)],
               "same": [0]}
    with call_context(call_first=request):
        return call(count_saved, "count_saved", net, layout_copy(inputs), track)


def other_batch(rng: np.random.Generator, inputs: torch.Tensor, avoid: tuple[int, ...] = ()
                ) -> torch.Tensor:
    """A contiguous batch of ``inputs``' width and dtype with a number of rows that is not
    ``inputs``' own nor in ``avoid``."""
    rows = inputs.shape[0] + int(rng.integers(1, 4))
    while rows in avoid:
        rows += 1
    return torch.from_numpy(rng.standard_normal((rows, inputs.shape[1]))).to(inputs.dtype)


def mode_counts(pred: Any, track: bool) -> tuple[int, int]:
    """The predicted counts (tensors, bytes) in the mode asked: tracked or not."""
    return tuple(pred.tracked if track else pred.untracked)


def count_pair(got: Any) -> tuple[int, int] | None:
    """An answer as two ints (NumPy ints too, never bools); ``None`` when it is not one."""
    if isinstance(got, (tuple, list)) and len(got) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in got):
        return tuple(int(v) for v in got)
    return None


def rows_text(inputs: torch.Tensor) -> str:
    """``3 rows``, ``1 row``: a batch's size for messages."""
    return f"{inputs.shape[0]} row{'s' if inputs.shape[0] != 1 else ''}"


def hint(earlier: torch.Tensor, inputs: torch.Tensor) -> str:
    """What an answer kept from the batch ``earlier`` is told, on ``inputs``."""
    return (f"These are this network's counts for the batch of {rows_text(earlier)} it was given "
            f"in an earlier call, not for this batch of {rows_text(inputs)}: the answer was kept "
            "per network (a dict keyed by the module, its id or its layers) and returned "
            "again. What autograd saves depends on the inputs as well as the layers: the "
            "saved activations grow with the batch, and their bytes with its dtype. Run the "
            "forward and count on every call, from zero.")


def confirmed(verdict: Verdict, count_saved: Callable, got: Any, net: nn.Module,
              inputs: torch.Tensor, earlier: list[torch.Tensor], track: bool,
              rng_seed: int = 20262) -> Verdict:
    """``verdict`` (wrong, unnamed, on ``net`` and ``inputs``) named ``CACHED`` when ``got``
    is ``net``'s counts on one of the ``earlier`` batches (not this batch's), and a call on a
    third batch, made right after one on that earlier batch, gives them again."""
    answer = count_pair(got)
    if verdict.ok or verdict.misconception is not None or answer is None:
        return verdict
    expected = mode_counts(predict(net, inputs), track)
    fits = [b for b in earlier if mode_counts(predict(net, b), track) == answer != expected]
    if not fits:
        return verdict
    first = fits[0]
    third = other_batch(np.random.default_rng(rng_seed), first,
                        avoid=(inputs.shape[0], *(b.shape[0] for b in earlier)))
    again, failure = call_after(count_saved, net, first, third, track)
    right = mode_counts(predict(net, third), track)
    if failure is not None or count_pair(again) != answer or answer == right:
        return verdict
    probe = {"id": CACHED, "established": "the earlier batch's counts on a third batch",
             "calls": [recorded_call("after the earlier batch", (net, third, track),
                                     list(right), list(answer))]}
    return dataclasses.replace(
        verdict, misconception=CACHED,
        message=f"{verdict.message.rstrip()} {hint(first, inputs)} Asked on a batch of "
                f"{rows_text(third)} right after that one, it returned {answer} again, not "
                f"{right}.",
        evidence=dataclasses.replace(verdict.evidence, probes=[probe]))


def judge_reask(count_saved: Callable, net: nn.Module, first: torch.Tensor,
                inputs: torch.Tensor, track: bool, shown: str) -> Verdict:
    """``count_saved(net, inputs, track)`` asked right after a call on ``first`` with the same
    network: the counts must be this batch's."""
    got, failure = call_after(count_saved, net, first, inputs, track)
    if failure is not None:
        return failure
    expected = mode_counts(predict(net, inputs), track)
    evidence = Evidence(inputs={"call": shown}, expected=list(expected), got=plain(got))
    answer = count_pair(got)
    if answer == expected:
        return PASS
    text = f"{shown} returned {answer if answer else plain(got)}"
    verdict = Verdict(False, f"{text} right after a call with the same network on a batch of "
                      f"{rows_text(first)}; expected {expected} from the grader's own hook run on "
                      "this batch.", None if answer else "wrong-type", evidence)
    earlier = mode_counts(predict(net, first), track)
    if answer == tuple(a + b for a, b in zip(earlier, expected)):
        return summed(verdict, earlier, expected)
    return confirmed(verdict, count_saved, got, net, inputs, [first], track)


def summed(verdict: Verdict, earlier: tuple[int, int], expected: tuple[int, int]) -> Verdict:
    """``verdict`` (an answer that is the earlier batch's counts plus this one's) named
    ``carried-over``: a tally reset only when something changes (the network's id, the mode),
    which three calls in turn (tracked, untracked, tracked) do not show (blind round zg)."""
    sums = " and ".join(f"{a} + {b}" for a, b in zip(earlier, expected))
    return dataclasses.replace(verdict, misconception="carried-over", message=(
        f"{verdict.message.rstrip()} The answer is the earlier batch's counts {earlier} plus "
        f"this one's ({sums}): the counts carried over from the call before, which ran in "
        "the same mode on the same network. A tally reset only when something changes (the "
        "network, track) still adds up over calls that change nothing: start from an empty "
        "list (or zero counters) inside count_saved, on every call."))
