"""q3 gradients rounded to 6 or 7 decimals "to remove float32 noise" (blind round zzx): where one
path is orders of magnitude below the other, the small gradient rounded to 6 decimals
(0.000199 for 0.000198364) is off by as much as a float32 cancellation leaves, and was named
``cancellation`` (split_path_grads) or a non-integer input class (multipath_grads). The
rounding probe placed a small value on its decimal grid to within a quarter step (float32's
noise taken relative to 1, not to the value), so it never counted that value as changed.
Rounding is named first now, at every seed."""

from __future__ import annotations

import re

import pytest

from autograder.checks.exercises import multipath
from autograder.checks.probes.values import rounded
from autograder.checks.seeding import generator
from test_checks_exercises_zza import _multi, _split  # float32 leaves, the lesson's w


def test_a_small_value_rounded_to_six_decimals_is_rounding():
    found = rounded([3.123457, 0.000199], [3.12345671, 0.000198364])
    assert found is not None and found.calls[0]["decimals"] == 6, found
    assert "0.000198364 became 0.000199" in found.message, found.message


def test_a_small_value_off_its_grid_is_not_rounding():
    assert rounded([3.123457, 0.000199312345], [3.12345671, 0.000198364]) is None
    assert rounded([0.000198364 * (1 + 3e-7)], [0.000198364]) is None  # float32 noise only


@pytest.mark.parametrize("decimals", [6, 7])
@pytest.mark.parametrize("split", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_gradients_rounded_to_many_decimals_are_named_rounding(seed, split, decimals):
    def answer(x0, y0):
        return tuple(round(g, decimals) for g in (_split if split else _multi)(x0, y0))

    result = multipath.check_grads(answer, generator(seed), split=split)
    assert not result.passed, result.message
    # a rounding that leaves a tiny path at exactly 0.0 is that namer's (its message says
    # rounding too); every other seed is told the rounding itself
    assert result.misconception in ("probe.rounded", "tiny-path-zeroed"), result.message
    if result.misconception == "probe.rounded":
        # every count that fits: a 7-decimal rounding may read as "6 or 7" (0.0006519904 is
        # 0.000652 either way), never as counts that leave the student's own out
        said = re.search(r"rounded to ([\d, or]+) decimal", result.message).group(1)
        assert str(decimals) in re.split(r", | or ", said), result.message
        assert "cancellation" not in result.message, result.message
