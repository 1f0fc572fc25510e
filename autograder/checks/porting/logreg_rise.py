"""q1_logreg: a loop that changes what it does once the loss goes up (``changed-after-loss-rose``).

A "bold driver" that halves the learning rate when the loss rose, a loop that stops there, or
one that returns the best weights seen: each follows the contract's run exactly while the loss
falls, so its losses are the grader's up to and including the first step whose loss rose, and
part from them only after it (or it has fewer of them, or its final ``w`` and ``b`` are the
grader's at an earlier step). That shows only where the loss rises (a large lr), which is also
where large logits do: recognised here, before the probes would guess at large logits. A
clamped logit or a sigmoid then log already differs *at* the step whose loss jumped (its logits
are the large ones), so it is not taken for this.
"""

from __future__ import annotations

from typing import Callable

import torch

from .common import allclose

NAME = "changed-after-loss-rose"

ADVICE = ("your loop does something different once the loss goes up (an adapted learning rate, "
          "an early stop, weights kept from a better step): the contract's loop takes the same "
          "fixed step, lr times the gradient, every time, for exactly `steps` steps, and returns "
          "the last w and b, whatever the loss does.")


def first_rise(losses: torch.Tensor) -> int | None:
    """The first step whose loss is above the one before it, if any."""
    for k in range(1, len(losses)):
        if losses[k] > losses[k - 1]:
            return k
    return None


def _step(k: int) -> str:
    return f"step {k}"


def changed_losses(target: torch.Tensor, correct: torch.Tensor, steps: int, rtol: float,
                   atol: float) -> tuple[str, str] | None:
    """Losses that are the grader's up to (and including) the first step where the loss rose,
    and then differ from them or stop."""
    count = len(target)
    if count == 0 or count > steps:
        return None
    rose = first_rise(target)
    if count < steps:
        stop = first_rise(correct[:count + 1])
        if rose == count - 1 or (rose is None and stop == count):
            # it stopped after recording the rise, or where the next loss would have risen
            if allclose(target, correct[:count], rtol, atol):
                at = count - 1 if rose == count - 1 else count
                return NAME, (f"Your {count} losses are the grader's first {count}, and the loop "
                              f"stopped there, at {_step(at)}, where the loss went up "
                              f"(from {float(correct[at - 1]):.4g} to {float(correct[at]):.4g}): "
                              + ADVICE)
        return None
    if rose is None or rose + 1 >= steps:
        return None
    if not allclose(target[:rose + 1], correct[:rose + 1], rtol, atol):
        return None
    if allclose(target[rose + 1:], correct[rose + 1:], rtol, atol):
        return None
    return NAME, (f"The losses match the grader's up to {_step(rose)}, where the loss went up "
                  f"(from {float(target[rose - 1]):.4g} to {float(target[rose]):.4g}), and differ "
                  "from the next step on: " + ADVICE)


def kept_earlier_params(final: torch.Tensor | None, correct: torch.Tensor,
                        path: list[torch.Tensor], steps: int,
                        matches: Callable[[torch.Tensor, torch.Tensor], bool]
                        ) -> tuple[str, str] | None:
    """Final ``w`` and ``b`` (one vector) that are the grader's at the step of its lowest loss,
    in a run whose loss rose: the best weights kept instead of the last. ``path[k]``: the
    grader's after ``k`` updates (the ones that gave ``correct[k]``); ``matches(got, at)``:
    ``got`` is ``at``, which the grader's final ``w`` and ``b`` are not."""
    if final is None or first_rise(correct[:steps]) is None:
        return None
    best = int(torch.argmin(correct[:steps]))
    if best < len(path) and matches(final, path[best]):
        return NAME, (f"w and b are the grader's after {best} updates, the weights that gave "
                      f"the lowest loss ({float(correct[best]):.4g}, at {_step(best)}), not "
                      f"the last ones, after all {steps}: " + ADVICE)
    return None
