"""q1_logreg: a loop that trains right but returns other ``w`` and ``b`` than its last ones
(``params-not-final``; blind round zzi).

The losses are the grader's, step for step, so every update followed the contract; the ``w``
and ``b`` returned are some other function of the run's iterates: their uniform (Polyak)
average, with or without the starting zeros, taken after or before each update; an average of
the second half only (tail averaging); an exponential moving average (started at zeros, at the
first iterate, or bias-corrected); the weights right after the step with the lowest recorded
loss; an earlier iterate. Each rule is replayed on the grader's own float64 path of iterates
(``logreg_runs.update_path``), and the class is named only when a rule gives the returned ``w``
and ``b`` to within float32 rounding, where the grader's final ones are not (the first three
rules that match are told). ``logreg_diagnosis.diagnose`` asks first for the iterate-shaped mistakes that
keep their names: one update fewer, or one to three more (``updates-miscounted``; beside all
of the grader's losses an iterate two or more updates back is no skipped update, the losses
show those updates made), and the lowest loss's weights of a run whose loss rose
(``changed-after-loss-rose``).

A single step cannot tell these apart from a wrong lr (its one loss, at the zeros, is the
same for every lr, and every rule is a multiple of the one update): a one-step run whose ``w``
and ``b`` fail is asked again on the same data with ``PROBE_STEPS`` steps (``asked_again``).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..closeness import float_list
from ..result import Verdict, with_probe
from .common import allclose
from .logreg_advice import NEVER_UPDATED, UNEXPLAINED

NAME = "params-not-final"
#: The decays of an exponential moving average tried (the usual 0.9, 0.99, 0.999 and between).
DECAYS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999)
#: The steps a one-step run is asked again with.
PROBE_STEPS = 8

ADVICE = ("The losses are the grader's, so the loop trains as the contract says; only what it "
          "returns is not. The contract returns w and b as they are after the last update: "
          "return the w and b the loop trained, not an average, a moving average or the best "
          "weights seen (keep any of those in a variable of its own, for your own use).")


def _weights(steps: int) -> list[tuple[str, torch.Tensor]]:
    """Each rule, as weights over the iterates ``0 .. steps`` (after 0, 1, ... updates)."""
    n = steps + 1
    out: list[tuple[str, torch.Tensor]] = []

    def mean(start: int, end: int) -> torch.Tensor:
        weights = torch.zeros(n, dtype=torch.float64)
        weights[start:end + 1] = 1.0 / (end + 1 - start)
        return weights

    out.append((f"the uniform (Polyak) average of the grader's w and b after each update, "
                f"(w_1 + ... + w_{steps}) / {steps}", mean(1, steps)))
    out.append((f"the average of the grader's w and b with the starting zeros included, "
                f"(w_0 + w_1 + ... + w_{steps}) / {n}", mean(0, steps)))
    out.append((f"the average of the grader's w and b taken before each update, "
                f"(w_0 + ... + w_{steps - 1}) / {steps}: the starting zeros in, the last update "
                "left out", mean(0, steps - 1)))
    for start in sorted({steps // 2, (steps + 1) // 2, steps // 2 + 1, (steps + 1) // 2 + 1}):
        for end in (steps, steps - 1):
            if 1 <= start < end:
                out.append((f"the average of the grader's w and b after updates {start} to "
                            f"{end} only, (w_{start} + ... + w_{end}) / {end + 1 - start}: an "
                            "average over the second half of the run (tail averaging)",
                            mean(start, end)))
    for decay in DECAYS:
        for end, when in ((steps, "after"), (steps - 1, "before")):
            ages = torch.arange(n, dtype=torch.float64)
            zero = torch.where(ages <= end, (1 - decay) * decay ** (end - ages), 0.0)
            zero[0] = 0.0  # the starting zeros add nothing
            ema = f"an exponential moving average of w and b with decay {decay:g}, taken {when} " \
                  "each update"
            out.append((f"{ema}, started at zeros (ema = {decay:g} * ema + {1 - decay:.4g} * w)",
                        zero))
            out.append((f"{ema}, started at zeros and bias-corrected (divided by 1 - "
                        f"{decay:g}^t, as Adam's averages are)", zero / (1 - decay ** steps)))
            if when == "after":
                first = zero.clone()
                first[1] = decay ** (end - 1)  # started at the first iterate, w_1
                out.append((f"{ema}, started at the first iterate", first))
    return out


def _rules(path: list[torch.Tensor], correct: torch.Tensor, steps: int
           ) -> list[tuple[str, torch.Tensor]]:
    """Each rule's ``w`` and ``b`` (one vector) on the grader's run: ``path[k]`` after ``k``
    updates, ``correct[k]`` the loss before update ``k``."""
    iterates = torch.stack([p.double() for p in path[:steps + 1]])
    out = [(told, weights @ iterates) for told, weights in _weights(steps)]
    # one update short is ``updates-miscounted``'s (``logreg_loops``): left to it
    last = steps - 1
    best = int(torch.argmin(correct[:steps]))
    if best + 1 < last:
        out.append((f"the grader's w and b after {_updates(best + 1)}: the weights right "
                    f"after the update of step {best}, whose loss ({float(correct[best]):.4g}) "
                    "is the lowest recorded (as a copy of the best weights taken after that "
                    "step's update holds them: one update past the weights that gave that "
                    "loss)", iterates[best + 1]))
    out += [(f"the grader's w and b after {k} of the {steps} updates: an earlier iterate, not "
             "the last", iterates[k]) for k in range(1, last) if k != best + 1]
    return out


def _updates(k: int) -> str:
    return "1 update" if k == 1 else f"{k} updates"


def not_final(final: torch.Tensor, correct: torch.Tensor, path: list[torch.Tensor], steps: int,
              tight: float, judged: tuple[float, float]) -> tuple[str, str] | None:
    """``(NAME, advice)`` when the returned ``w`` and ``b`` (``final``, one vector) are a rule's
    on the grader's run (``path``: its iterates; ``correct``: its losses, which the student's
    are) to a relative ``tight`` (of the rule's largest value: float32 rounding of an average
    scales with it), and that rule's are not the grader's final ones to the ``judged``
    ``(rtol, atol)`` (as ``judge_params`` holds them); None otherwise, and for a single step
    (every rule is then a multiple of the one update, as a wrong lr is)."""
    if steps < 2 or len(path) <= steps:
        return None
    right = path[steps].double()
    slack = max(judged[1], judged[0] * float(right.abs().max()))

    def close(at: torch.Tensor) -> bool:
        atol = max(1e-12, tight * float(at.abs().max()))
        return final.shape == at.shape and allclose(final, at, tight, atol) \
            and not allclose(at, right, judged[0], slack)

    found = [told for told, at in _rules(path, correct, steps) if close(at)]
    if not found:
        return None
    also = "".join(f" (equally, on this run, {told})" for told in found[1:3])
    key = " (w_k: its w and b after k updates)" if "w_" in found[0] + also else ""
    return NAME, (f"w and b are not the grader's final ones but, to within float32 rounding, "
                  f"{found[0]}{also}, replayed on the grader's own run{key}. {ADVICE}")


def asked_again(verdict: Verdict, again: Callable[[int], Any], X: torch.Tensor,
                y: torch.Tensor, lr: float, steps: int) -> Verdict:
    """A one-step run whose ``w`` and ``b`` fail unnamed (or at the zeros, as an average taken
    before the update leaves them), asked again on the same data with ``PROBE_STEPS`` steps
    (``again(steps)``: ``(w, b, losses)``, or None when it failed): named when that run's
    losses are the grader's and its ``w`` and ``b`` a rule's (``not_final``)."""
    if verdict.ok or steps != 1 or verdict.misconception not in (None, "params-never-updated"):
        return verdict
    from .logreg_diagnosis import diagnose  # it builds on this module
    got = again(PROBE_STEPS)
    if not (isinstance(got, (tuple, list)) and len(got) == 3 and float_list(got[2])):
        return verdict
    name, found = diagnose(got[2], X, y, lr, PROBE_STEPS, (got[0], got[1]))
    if name != NAME:
        return verdict
    message = verdict.message.replace(UNEXPLAINED, "")
    for which in ("w and b", "w", "b"):
        message = message.replace(NEVER_UPDATED.format(which), "")
    return with_probe(verdict, {
        "id": "params-not-final-again", "established": f"asked again with {PROBE_STEPS} steps, "
        "the losses are the grader's and w and b a function of its iterates", "calls": [
            {"steps": PROBE_STEPS, "got": [float(v) for v in got[2]]}]},
        misconception=NAME, message=(
        f"{message.rstrip()} One step cannot tell this from a wrong lr; asked again on the "
        f"same data with steps={PROBE_STEPS}, the losses were the grader's and {found}"))
