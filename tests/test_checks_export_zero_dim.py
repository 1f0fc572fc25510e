"""q5 ``export_numpy`` on a 0-d tensor (blind round zd: ``np.atleast_1d`` on every export). The
contract keeps t's shape for any tensor; a 0-d tensor (a loss) is asked last in
``check_export``, and an answer that gave it dimensions is told why."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.seeding import generator

SEEDS = range(4)


def _copy(t):
    return t.detach().cpu().numpy().copy()


DIMS_ADDED = {
    "np.atleast_1d": lambda t: np.atleast_1d(_copy(t)),
    "torch.atleast_1d": lambda t: torch.atleast_1d(t.detach()).numpy().copy(),
    "reshape to shape or (1,)": lambda t: _copy(t).reshape(tuple(t.shape) or (1,)),
    "a list for a scalar": lambda t: (np.array([t.item()], dtype=_copy(t).dtype) if t.dim() == 0
                                      else _copy(t)),
}

CORRECT = {
    "numpy().copy()": _copy,
    "np.array(t.detach())": lambda t: np.array(t.detach()),
    "clone then numpy": lambda t: t.detach().clone().numpy(),
    "np.asarray().copy()": lambda t: np.asarray(t.detach().cpu()).copy(),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(DIMS_ADDED))
def test_a_zero_dim_tensor_given_dimensions_loses_its_points_and_is_told(name, seed):
    result = export.check_export(DIMS_ADDED[name], generator(seed))
    assert not result.passed
    assert result.misconception == "wrong-shape", result.message
    assert "t is 0-d" in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_exports_that_keep_a_zero_dim_shape_pass(name, seed):
    result = export.check_export(CORRECT[name], generator(seed))
    assert result.passed, result.message


def test_a_flattening_export_is_not_told_it_was_given_a_zero_dim_tensor():
    result = export.check_export(lambda t: _copy(t).reshape(-1) if t.dim() > 1 else _copy(t),
                                 generator(0))
    assert result.misconception == "shape-flattened" and "t is 0-d" not in result.message


def _rows(t):
    return np.array([row.detach().numpy() for row in t])


# blind round zf: an export that needs a dimension raises on the 0-d tensor, right on every other
NEEDS_A_DIMENSION = {
    "rows iterated": _rows,
    "unbind and stack": lambda t: np.stack([r.detach().numpy().copy() for r in t.unbind(0)]),
    "sliced to len(t)": lambda t: np.array(_copy(t)[:len(t)]),
    "t[0] peeked for the dtype": lambda t: _copy(t).astype(_copy(t[0]).dtype),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(NEEDS_A_DIMENSION))
def test_an_export_that_raises_on_a_zero_dim_tensor_is_named(name, seed):
    result = export.check_export(NEEDS_A_DIMENSION[name], generator(seed))
    assert not result.passed
    assert result.misconception == "zero-dim-unhandled", result.message
    assert "t is 0-d" in result.message and "raised" in result.message, result.message


def test_an_export_that_raises_on_a_tensor_with_dimensions_is_not_told_zero_dim():
    def raises_on_int64(t):
        if t.dtype == torch.int64:
            raise ValueError("int64 is not supported")
        return _copy(t)

    result = export.check_export(raises_on_int64, generator(0))
    assert result.misconception != "zero-dim-unhandled", result.message
    assert "t is 0-d" not in result.message
