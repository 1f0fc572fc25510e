"""q1 ``train_logreg`` loops right only inside the regimes the docs published (red team rt-10):
a gradient clipped at a norm of 100 (the large-gradient regime stayed under 10), a stop once
the loss changes by less than 1e-7 (never triggered), mini-batches of 1024 rows (no problem
had more than 700). Three regimes drawn after the others now reach each: a first gradient of
norm 1200-5000, a loss that settles within float32's resolution before the last step, and
1100-2100 rows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import notebooks
from autograder.checks.porting import logreg_regime_draws as draws
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes
from autograder.checks.porting.logreg_runs import reference_run
from autograder.checks.seeding import generator

LOOP = '''
import torch
import torch.nn.functional as F


def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for k in range(steps):
        rows = slice(None)
        # ROWS
        loss = F.binary_cross_entropy_with_logits(X[rows] @ w + b, y[rows])
        w.grad = None
        b.grad = None
        loss.backward()
        # CLIP
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
        # STOP
    return w.detach(), b.detach(), losses
'''
OPTIMIZER = '''
import torch
import torch.nn.functional as F


def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.nn.Parameter(torch.zeros(X.shape[1]))
    b = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return w.detach(), b.detach(), losses
'''
WRONG = {
    "clip-100": ("# CLIP", "torch.nn.utils.clip_grad_norm_([w, b], 100.0)", "gradient-clipped"),
    "clip-1000": ("# CLIP", "torch.nn.utils.clip_grad_norm_([w, b], 1000.0)",
                  "gradient-clipped"),
    "stop-1e-7": ("# STOP", "if len(losses) > 1 and abs(losses[-1] - losses[-2]) < 1e-7:\n"
                            "            break", "stopped-early"),
    "stop-when-equal": ("# STOP", "if len(losses) > 1 and losses[-1] == losses[-2]:\n"
                                  "            break", "stopped-early"),
    "first-1024-rows": ("# ROWS", "rows = slice(0, 1024)", "mini-batches"),
}


@pytest.mark.parametrize("source", [LOOP, OPTIMIZER], ids=["by-hand", "sgd"])
@pytest.mark.parametrize("seed", range(4))
def test_a_right_loop_passes_every_regime(source, seed):
    result = check_train_logreg_regimes(notebooks.defined(source, "train_logreg"),
                                        generator(seed))
    assert result.passed, result.message


@pytest.mark.parametrize("case", sorted(WRONG))
@pytest.mark.parametrize("seed", range(3))
def test_a_loop_right_only_inside_the_published_regimes_is_named(case, seed):
    mark, line, name = WRONG[case]
    fn = notebooks.defined(LOOP.replace(mark, line), "train_logreg")
    result = check_train_logreg_regimes(fn, generator(seed))
    assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", range(40))
def test_the_new_regimes_reach_past_the_published_ones(seed):
    rng = np.random.default_rng(seed)
    X, y, _, _ = draws.draw_regime(rng, "huge-gradient")
    assert draws.first_gradient_norm(X, y) > 1000
    X, y, lr, steps = draws.draw_regime(rng, "converged")
    losses = torch.tensor(reference_run(X, y, lr, steps)[2], dtype=torch.float32)
    settled = torch.nonzero(losses.diff().abs() < 1e-8)  # the changes under 1e-8
    assert len(settled) and int(settled[0, 0]) < steps - 15, (settled, steps)
    X, _, _, _ = draws.draw_regime(rng, "more-rows")
    assert X.shape[0] > 1024
