"""Are q1_logreg's kept runs the same runs however they were asked for: a replay stopped where
it parted from a student's losses, then carried on to the end, to the same bits as one trained
in one go; and does a replay stopped early leave the diagnosis as the whole replay would?"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.checks.porting import logreg, logreg_diagnosis, logreg_runs
from autograder.checks.porting.logreg_loops import RESCALINGS

FAST = settings(deadline=None, max_examples=12)
seeds = st.integers(0, 2**32 - 1)
MISTAKES = (None, "not-cleared", "loss-after-update", "sum-not-mean", "sigmoid-log",
            "logits-clamped", "bias-left-out", *RESCALINGS)


def fresh(X, y, lr, steps, mistake, dtype=torch.float64):
    """A run trained in one go, with nothing kept from before."""
    logreg_runs._RUNS.__dict__.clear()
    return logreg_runs.reference_run(X, y, lr, steps, mistake, dtype)


@FAST
@given(seeds, st.sampled_from(MISTAKES), st.integers(1, 10))
def test_is_a_stopped_replay_carried_on_to_the_same_bits(seed, mistake, stop):
    X, y, lr, steps = logreg.draw_problem(np.random.default_rng(seed))
    whole = fresh(X, y, lr, steps, mistake)
    logreg_runs._RUNS.__dict__.clear()
    early = logreg_runs.replayed_losses(X, y, lr, steps, mistake, torch.float64, steps,
                                        lambda i, v: i < stop - 1)
    assert early == whole[2][:stop]
    carried = logreg_runs.reference_run(X, y, lr, steps, mistake)
    assert torch.equal(carried[0], whole[0]) and torch.equal(carried[1], whole[1])
    assert carried[2] == whole[2]


def whole_replays(X, y, lr, steps):
    """Every replay ``logreg_diagnosis.diagnose`` asks for, kept whole before it asks."""
    logreg_runs._RUNS.__dict__.clear()
    for mistake in MISTAKES[1:]:
        dtype = torch.float32 if mistake == "sigmoid-log" else torch.float64
        logreg_runs.reference_run(X, y, lr, steps, mistake, dtype)
    logreg_runs.reference_run(X, y, logreg_diagnosis.LESSON_LR, steps)


@FAST
@given(seeds, st.sampled_from(MISTAKES[1:]), st.sampled_from([1.0, 1.01]))
def test_does_a_stopped_replay_leave_the_diagnosis_as_the_whole_replay_does(seed, mistake,
                                                                          factor):
    """A student's losses that are one mistake's replay (float32, as a student trains), or
    1% off it (a mistake none explains): the same name and hint from replays stopped where
    they part from the losses as from whole ones, on the losses alone and with w and b."""
    X, y, lr, steps = logreg.draw_problem(np.random.default_rng(seed))
    w, b, losses = fresh(X, y, lr, steps, mistake, torch.float32)
    losses = [v * factor for v in losses]
    for params in (None, (w, b)):
        logreg_runs._RUNS.__dict__.clear()
        stopped = logreg_diagnosis.diagnose(losses, X, y, lr, steps, params)
        whole_replays(X, y, lr, steps)
        assert logreg_diagnosis.diagnose(losses, X, y, lr, steps, params) == stopped
