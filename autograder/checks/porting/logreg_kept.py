"""q1_logreg: fewer losses than ``steps``, told by what the answer shows (blind round zzf).

A list shorter than ``steps`` is not by itself a loop that stopped. A ``deque(maxlen=N)``,
``losses[-N:]`` or a rolling window keeps the last ``N`` losses of a run that made every
update; a log every ``k`` steps keeps every ``k``-th; a record started at step ``s`` keeps
those from ``s`` on; a list cut to its first ``N`` keeps those. What happened is read from two
things the answer holds, never guessed:

- the returned ``w`` and ``b``: the grader's after all ``steps`` updates (the loop ran every
  step, only the record is short), or the grader's after ``n`` updates (the loop stopped there);
- where the returned losses sit in the grader's own sequence (``place``): each returned loss is
  put at the grader's steps whose loss it is, and the whole list must be one pattern of steps,
  a run of consecutive steps or every ``k``-th step (and, logged as well, the last), the only
  pattern that fits. Losses too flat to tell their steps apart are placed nowhere.

The record kinds, named only beside ``w`` and ``b`` that are the grader's after all ``steps``:
the last ``N`` (``losses-window-kept``; asked again with a few more steps in
``logreg_regimes.window_or_start``, a record that starts at the same step whatever ``steps`` is
becomes ``losses-start-skipped``), every ``k``-th (``losses-subsampled``), the first ``N``
(``losses-truncated``); one loss alone shows no pattern and is only placed. A single step that
returned no loss beside the grader's ``w`` and ``b`` (a record started later, or logged every
``k`` steps, holds none yet) is asked again with ``PROBE_STEPS`` steps
(``logreg_regimes.short_again``). A real early stop, the grader's first ``N`` losses beside its ``w`` and
``b`` after about ``N`` updates, keeps ``stopped-early``, and so does the grader's first ``N``
beside ``w`` and ``b`` that had stopped moving by then (the same after ``N`` updates as after all
``steps``: a run whose loss settled, where stopping and cutting the record cannot be told
apart, and a stop once the loss settles is the likely cause). Each loss measured after its step's
update (one step late, ``loss-after-update`` where every step is recorded) is said beside the
kind, when the pattern holds the loss after the last update, which only that record has.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import torch

from .logreg_loops import SLACK

WINDOW = "losses-window-kept"
START = "losses-start-skipped"
SUBSAMPLED = "losses-subsampled"
TRUNCATED = "losses-truncated"
STOPPED = "stopped-early"
#: The kinds of a short record beside a run that made every update.
RECORDS = (WINDOW, START, SUBSAMPLED, TRUNCATED)

#: Where one returned loss is put among the grader's: relative, since the separable regime's
#: losses fall to about 1e-3 (a float32 run stays within about 7e-5 of the float64 one there,
#: and its neighbouring steps' losses differ by 1.3e-3 or more).
PLACE_RTOL, PLACE_ATOL = 3e-4, 1e-9
#: More placements than this: the losses are too flat to say which steps they are.
MAX_PLACEMENTS = 8
#: How many steps more a last-N record is asked again with (``logreg_regimes``).
PROBE_EXTRA = 7
#: The steps a run too short to place its losses in (the single step, which a record started
#: later or logged every k steps leaves empty) is asked again with (``logreg_regimes``).
PROBE_STEPS = 40

AFTER_UPDATE = ("Each of them is also measured after that step's update, one step late: record "
                "the loss of the forward pass the update uses, before changing w and b. ")
CONTRACT = ("The contract wants one loss per step, in order, from step 0 on: {steps} in all. "
            "Append each step's loss.item() to a plain list and return all of it; keep any "
            "shorter log for printing in a variable of its own.")


@dataclasses.dataclass(frozen=True)
class Placement:
    """The grader's losses a returned list is: ``start``, ``start + stride``, ... (``count``
    of them), then ``last`` when logged as well. Indices run over the grader's losses before
    each of its ``steps`` updates and, at ``steps``, the loss after its last update."""

    start: int
    stride: int
    count: int
    last: int | None = None

    @property
    def indices(self) -> list[int]:
        out = [self.start + j * self.stride for j in range(self.count)]
        return out + ([self.last] if self.last is not None else [])


@dataclasses.dataclass(frozen=True)
class Record:
    """What a placed list records: the steps (each step's loss before its update; after it,
    when ``after``) and the kind of pattern they make in a run of ``steps`` steps."""

    steps: list[int]
    kind: str  # "first", "last", "every", "block" (other consecutive steps), "part"
    stride: int
    after: bool
    last_logged: bool = False


def record_of(p: Placement, steps: int) -> Record:
    """The steps ``p`` records and their kind: the loss at index ``steps`` (after the last
    update) makes the whole list the losses after each update, one step late."""
    indices = p.indices
    after = indices[-1] == steps and indices[0] >= 1
    recorded = [i - 1 for i in indices] if after else indices
    first, end = recorded[0], recorded[-1]
    if p.stride == 1 and p.last is None:
        kind = ("first" if first == 0 and end < steps - 1 else
                "last" if first > 0 and end == steps - 1 else "block")
    else:
        ap_end = recorded[p.count - 1]
        kind = "every" if recorded[0] < p.stride and ap_end + p.stride >= steps else "part"
    return Record(recorded, kind, p.stride, after, p.last is not None)


def place(target: torch.Tensor, extended: torch.Tensor) -> list[Placement]:
    """Every placement of the returned losses ``target`` among the grader's ``extended`` ones
    (its ``steps`` losses and the loss after its last update): empty when none fits, or when
    more than ``MAX_PLACEMENTS`` do (too flat to tell)."""
    T = target.double().numpy()
    L = extended.double().numpy()
    n, top = len(T), len(L) - 1
    if n == 0 or n > top or not (np.isfinite(T).all() and np.isfinite(L).all()):
        return []
    near = np.abs(T[:, None] - L[None, :]) <= PLACE_ATOL + PLACE_RTOL * np.abs(L)[None, :]
    found: list[Placement] = []

    def progressions(rows: int, stride_from: int) -> None:
        starts = np.flatnonzero(near[0])
        if rows == 1:
            found.extend(Placement(int(s), 1, 1) for s in starts)
            return
        j = np.arange(rows)
        for k in range(stride_from, top // (rows - 1) + 1):
            s = starts[starts + (rows - 1) * k <= top]
            if len(s) == 0:
                break
            ok = near[j[None, :], s[:, None] + k * j[None, :]].all(1)
            found.extend(Placement(int(v), k, rows) for v in s[ok])
            if len(found) > MAX_PLACEMENTS:
                return

    progressions(n, 1)
    if n >= 3 and len(found) <= MAX_PLACEMENTS:  # every k-th, and the last logged as well
        plain = len(found)
        progressions(n - 1, 2)
        ends = found[plain:]
        del found[plain:]
        for p in ends:
            ap_end = p.start + (p.count - 1) * p.stride
            for last in (top - 1, top):
                if ap_end < last < ap_end + p.stride and near[n - 1, last]:
                    found.append(dataclasses.replace(p, last=last))
    return found if len(found) <= MAX_PLACEMENTS else []


def placed(target: torch.Tensor, extended: torch.Tensor, steps: int) -> Record | None:
    """The one record the returned losses are, or None: none fits, or the placements that
    fit say different things (their kinds differ, or every ``k``-th for different ``k``).
    Where a placement that claims less also fits (losses before each update rather than after,
    no last loss logged as well), that one is told."""
    found = place(target, extended)
    records = [record_of(p, steps) for p in found]
    if not records or len({r.kind for r in records}) > 1 \
            or (records[0].kind == "every" and len({r.stride for r in records}) > 1):
        return None
    error = [float(np.abs(target.double().numpy() - extended.double().numpy()[p.indices]).max())
             for p in found]
    best = min(range(len(found)), key=lambda i: (records[i].after, found[i].last is not None,
                                                 error[i]))
    return records[best]


def _span(record: Record) -> str:
    recorded = record.steps
    if len(recorded) == 1:
        return f"step {recorded[0]}"
    if recorded[1] - recorded[0] == 1 and recorded[-1] - recorded[0] == len(recorded) - 1:
        return f"steps {recorded[0]} to {recorded[-1]}"
    regular = recorded[:-1] if record.last_logged else recorded
    shown = regular if len(regular) <= 5 else [*regular[:3], "...", regular[-1]]
    text = "steps " + ", ".join(str(v) for v in shown)
    return f"{text} and {recorded[-1]}" if record.last_logged else text


def _losses(count: int) -> str:
    return "1 loss returned is" if count == 1 else f"{count} losses returned are"


def _all(steps: int) -> str:
    return "its one update" if steps == 1 else f"all {steps} updates"


def window_how(count: int, start: int) -> str:
    """The forms a last-``count`` record from step ``start`` may take, before a second call
    tells them apart."""
    return (f"a deque(maxlen={count}) or losses[-{count}:] keeps only the newest {count}; a "
            f"record started at step {start} keeps those from step {start} on")


def explained(target: torch.Tensor, extended: list[float], steps: int,
              shown: torch.Tensor | None, path: list[torch.Tensor],
              same: Callable[[torch.Tensor, torch.Tensor], bool]
              ) -> tuple[str | None, str] | None:
    """What a list of fewer losses than ``steps`` shows, with the returned ``w`` and ``b``
    (``shown``, one vector; None when not at hand) against the grader's after each count of
    updates (``path[n]``; ``same(got, at)``: held as ``judge_params`` holds them).

    Returns ``(name, advice)`` for a record kind beside the grader's final ``w`` and ``b``, or
    ``(STOPPED, advice)`` beside its ``w`` and ``b`` after about as many updates as losses (more
    than ``SLACK`` fewer than ``steps``: a count off by a few is ``steps-miscounted``'s);
    ``(None, what is established)`` for losses placed otherwise; None when they cannot be
    placed."""
    count = len(target)
    if count >= steps:
        return None
    right = shown is not None and steps < len(path) and same(shown, path[steps])
    if count == 0:
        return None if not right else (None, f"w and b are the grader's after {_all(steps)}, so "
                                       "the loop ran every step, but no loss was returned. "
                                       + CONTRACT.format(steps=steps))
    record = placed(target, torch.tensor(extended[:steps + 1], dtype=torch.float64), steps)
    if record is None:
        return None
    late = AFTER_UPDATE if record.after else ""
    span = _span(record)
    contract = CONTRACT.format(steps=steps)
    if right:
        ran = f"w and b are the grader's after {_all(steps)}, so the loop ran every step; "
        if count == 1:  # one loss shows no pattern of steps: where it sits is all that is said
            return None, f"{ran}the {_losses(count)} the grader's at {span} only. {late}{contract}"
        if record.kind == "last":
            start = record.steps[0]
            return WINDOW, (f"{ran}the {_losses(count)} the grader's for {span}, the last "
                            f"{count}: the first {start} are missing ({window_how(count, start)})"
                            f". {late}{contract}")
        if record.kind == "every":
            also = ", and the last step" if record.last_logged else ""
            return SUBSAMPLED, (f"{ran}the {_losses(count)} the grader's at {span}, every "
                                f"{record.stride} steps{also}: the steps between are missing (a "
                                f"loss logged every {record.stride} steps). {late}{contract}")
        if record.kind == "first" and count < steps - SLACK and count < len(path) \
                and same(shown, path[count]):
            # the run had settled: w and b after `count` updates are the final ones too, so
            # they cannot tell a loop that stopped from a record cut short (red team rt-10: a
            # stop once the loss changes by under 1e-7, on data where the loss settles)
            return STOPPED, (f"Your {count} losses are the grader's first {count}, and w and b "
                             f"are its after {count} updates, where they had stopped moving "
                             f"(the same as after {_all(steps)} within the tolerance): the loop "
                             f"stopped once the loss settled, at {float(target[-1]):.6g}, or the "
                             f"record was cut to its first {count}. {late}The contract runs "
                             "exactly `steps` steps, however small the loss gets (no early "
                             "stop), and records every step's loss.")
        if record.kind == "first":
            return TRUNCATED, (f"{ran}the {_losses(count)} the grader's first {count}, {span}: "
                               f"the last {steps - count} are missing (a record that stops "
                               f"after {count} losses, or a list cut to its first {count}). "
                               f"{late}{contract}")
        return None, f"{ran}the {_losses(count)} the grader's at {span} only. {late}{contract}"
    made = [n for n in range(len(path)) if shown is not None and same(shown, path[n])]
    end = record.steps[-1]
    stops = sorted((abs(n - (end + 1)), n) for n in made if abs(n - (end + 1)) <= SLACK)
    if record.kind == "first" and stops and count < steps - SLACK:
        n = stops[0][1]
        return STOPPED, (f"w and b are the grader's after {n} updates and your {count} losses "
                         f"are its first {count}: the loop stopped after {n} of the {steps} "
                         f"steps, with the loss at {float(target[-1]):.3g}. {late}The contract "
                         "runs exactly `steps` steps, however small the loss gets: no early "
                         "stop.")
    then = (f"; w and b are the grader's after {made[0]} updates, not after all {steps}"
            if len(made) == 1 else "")
    return None, f"The {_losses(count)} the grader's at {span}{then}. {late}".rstrip()
