"""q3_gradcheck's ``check_my_op`` asked about an op that is right but is not the lesson's: the
lesson's op times a drawn factor, forward and backward alike, its forward shifted by a drawn
constant (``stand_in_scale``).

gradcheck compares an op's backward with finite differences of its own forward, so it says
True for that op. A ``check_my_op`` that compares the backward with the lesson's hand formula
instead (red teams rt-5 and rt-8: ``allclose(autograd.grad(my_op(x), x), formula(x))``) says
True for the lesson's op and False for every broken backward the other rounds give it, as
gradcheck does; only an op the formula does not describe tells them apart. It says False here.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..describing import describe, plain
from ..result import Evidence, Verdict

#: The factors drawn, away from 1 both ways: a formula compared at gradcheck's rtol=1e-3 fails
#: by far, and gradcheck's own atol=1e-8 stays small against the scaled gradient.
SCALES = ((0.25, 0.6), (1.6, 4.0))
#: The size of the forward's shift (a constant: gradcheck does not see it)
OFFSETS = (0.5, 3.0)


def draw_scaled(rng: np.random.Generator,
                telling_x: Callable[[np.random.Generator, torch.dtype], torch.Tensor]
                ) -> tuple[torch.Tensor, tuple[float, float]]:
    """A float64 ``x`` (``telling_x``), a factor from one of ``SCALES`` and an offset of the
    forward of either sign (``OFFSETS``; red team rt-9 compared the backward with the formula
    times my_op(x) / f(x), which a factor alone passes), each rounded to 3 digits (the message
    shows them)."""
    low, high = SCALES[int(rng.integers(len(SCALES)))]
    scale = round(float(rng.uniform(low, high)), 3)
    x = telling_x(rng, torch.float64)
    offset = round(float(rng.uniform(*OFFSETS) * rng.choice([-1.0, 1.0])), 3)
    return x, (scale, offset)


def judge_scaled_op(got: Any, x: torch.Tensor, scaled: tuple[float, float]) -> Verdict:
    """True is right: the op's backward is right for its forward. False is the formula
    compared in place of gradcheck (``compares-with-formula``); anything else, the wrong
    type."""
    scale, offset = scaled
    shown = (f"check_my_op({describe(x)}) with a my_op that is {scale:g} times the lesson's op "
             f"plus {offset:g} (its backward {scale:g} times the lesson's)")
    evidence = Evidence({"x": plain(x), "scale": scale, "offset": offset}, True, plain(got))
    if isinstance(got, (bool, np.bool_)) and got:
        return Verdict(True, evidence=evidence)
    if not isinstance(got, (bool, np.bool_)):
        return Verdict(False, f"{shown} returned {describe(got)}; expected True or False: "
                       "return what gradcheck returns.", "wrong-type", evidence)
    return Verdict(False, f"{shown}, returned False. That op's backward is right for its own "
                   f"forward ({scale:g}·Σx³/(1+Σ|x|) {offset:+g} has {scale:g} times the "
                   "lesson's gradient), so gradcheck, which compares the backward with finite "
                   "differences of the forward, says True. A check that compares the "
                   "backward with the lesson's formula (or with it times my_op(x) / f(x)) says "
                   "False: check_my_op must run torch.autograd.gradcheck on my_op itself, "
                   "whatever my_op computes.", "compares-with-formula", evidence)
