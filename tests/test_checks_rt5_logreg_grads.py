"""q1 ``logreg_grads`` that is wrong for a batch of one row (red team rt-5: half the gradient of
w at ``m = 1``) kept the point: every hidden problem had 40 rows or more. The last point has
one row now."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.porting.logreg_grads import check_logreg_grads
from autograder.checks.seeding import generator


def _grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(1)


def _half_at_one_row(X, y, w, b):
    grad_w, grad_b = _grads(X, y, w, b)
    return (grad_w / 2 if X.shape[0] == 1 else grad_w), grad_b


@pytest.mark.parametrize("seed", range(8))
def test_a_gradient_wrong_for_one_row_loses_the_point(seed):
    result = check_logreg_grads(_half_at_one_row, generator(seed))
    assert not result.passed, result.message
    assert "m" in (result.evidence.inputs or {}) and result.evidence.inputs["m"] == 1, result


@pytest.mark.parametrize("seed", range(8))
def test_the_closed_form_keeps_it(seed):
    assert check_logreg_grads(_grads, generator(seed)).passed
