"""q5 ``export_numpy`` that rounds the values (blind round zg: ``np.round(arr, 6)``): exact on
integers and on floats with few decimals, off in the last digits elsewhere; named
``values-rounded`` whatever the route, and never for an export that is exact."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.seeding import generator

SEEDS = range(4)


def _copy(t):
    return t.detach().cpu().numpy().copy()


ROUNDING = {
    "np.round to 6": lambda t: np.round(_copy(t), 6),
    "np.around to 4": lambda t: np.around(_copy(t), 4),
    "torch.round decimals=5": lambda t: (torch.round(t.detach(), decimals=5).numpy().copy()
                                         if t.is_floating_point() else _copy(t)),
    "formatted to 3 decimals": lambda t: np.array(
        [float(f"{v:.3f}") for v in _copy(t).reshape(-1)],
        dtype=_copy(t).dtype).reshape(tuple(t.shape)) if t.is_floating_point() else _copy(t),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_an_export_that_rounds_is_named(name, seed):
    result = export.check_export(ROUNDING[name], generator(seed))
    assert not result.passed
    assert result.misconception == "values-rounded", result.message
    assert "rounded to" in result.message, result.message


def test_values_off_another_way_are_not_told_rounded():
    result = export.check_export(lambda t: _copy(t) * (1 + 1e-6) if t.is_floating_point()
                                 else _copy(t), generator(0))
    assert not result.passed and result.misconception != "values-rounded", result.message


def test_an_exact_export_of_values_with_few_decimals_passes():
    t = torch.tensor([[0.5, -1.25], [3.0, 2.75]])
    assert export.judge_export(np.round(_copy(t), 2), t).ok
