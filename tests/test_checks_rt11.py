"""q1 ``logreg_grads`` that differentiates with autograd, which the contract rules out (red
team rt-11 kept its point with ``torch.autograd.grad`` on detached copies): asked once more
under ``torch.inference_mode()``, a closed form computes as usual and autograd raises."""

from __future__ import annotations

import re

import numpy as np
import pytest

import notebooks
from autograder.checks.porting.logreg_grads import check_logreg_grads

ASSIGNMENT = "autograd-porting"
HEAD = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n"

CLOSED = {
    "plain": '''
def logreg_grads(X, y, w, b):
    r = torch.sigmoid(X @ w + b) - y
    return X.T @ r / X.shape[0], r.mean().reshape(1)
''',
    "no-grad-decorated": '''
@torch.no_grad()
def logreg_grads(X, y, w, b):
    r = torch.sigmoid(X @ w + b) - y
    return X.T @ r / X.shape[0], r.mean().reshape(1)
''',
    "in-place": '''
def logreg_grads(X, y, w, b):
    r = torch.sigmoid(X @ w + b)
    r.sub_(y)
    grad_w = X.T @ r
    grad_w /= X.shape[0]
    return grad_w, r.mean().reshape(1)
''',
    "numpy": '''
def logreg_grads(X, y, w, b):
    Xn, yn, wn, bn = (t.detach().numpy() for t in (X, y, w, b))
    r = 1 / (1 + np.exp(-(Xn @ wn + bn))) - yn
    return torch.from_numpy(Xn.T @ r / len(yn)), torch.tensor([r.mean()])
''',
}
AUTOGRAD = {
    "autograd-grad": '''
def logreg_grads(X, y, w, b):
    w2 = w.detach().clone().requires_grad_(True)
    b2 = b.detach().clone().requires_grad_(True)
    loss = F.binary_cross_entropy_with_logits(X @ w2 + b2, y)
    return torch.autograd.grad(loss, (w2, b2))
''',
    "backward-under-enable-grad": '''
def logreg_grads(X, y, w, b):
    with torch.enable_grad():
        w2 = w.detach().clone().requires_grad_(True)
        b2 = b.detach().clone().requires_grad_(True)
        F.binary_cross_entropy_with_logits(X @ w2 + b2, y).backward()
    return w2.grad, b2.grad
''',
}


@pytest.mark.parametrize("case", sorted(CLOSED))
@pytest.mark.parametrize("seed", range(3))
def test_a_closed_form_keeps_its_point(case, seed):
    fn = notebooks.defined(HEAD + CLOSED[case], "logreg_grads")
    result = check_logreg_grads(fn, np.random.default_rng(seed))
    assert result.passed, result.message


@pytest.mark.parametrize("case", sorted(AUTOGRAD))
@pytest.mark.parametrize("seed", range(3))
def test_a_gradient_taken_with_autograd_is_named(case, seed):
    fn = notebooks.defined(HEAD + AUTOGRAD[case], "logreg_grads")
    result = check_logreg_grads(fn, np.random.default_rng(seed))
    assert not result.passed and result.misconception == "autograd-used", result.message
    assert "under torch.inference_mode()" in result.message, result.message


@pytest.mark.slow
def test_the_sealed_worker_runs_the_call_under_inference_mode(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "logreg_grads", HEAD + AUTOGRAD["autograd-grad"])
    doc = notebooks.judged_sealed(nb, tmp_path / "autograd.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert ("logreg_grads", "autograd-used") in notebooks.failed_checks(doc, "q1_logreg")
    assert not notebooks.lost_elsewhere(doc, "q1_logreg")


# --- q4_vjp at a 3-D x ------------------------------------------------------------------------

VJP_HEAD = '''
import torch


def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    g = leaf.grad
'''
VJP_WRONG_AT_3D = {  # each right at every 1-D and 2-D x
    "t-per-matrix": ("    return g if g.dim() < 3 else g.transpose(0, 1).reshape(g.shape)\n",
                     None),
    "dims-reversed": ("    return g if g.dim() < 3 else g.permute(2, 1, 0)\n", "wrong-shape"),
    "two-dims-only": ("    return g if g.dim() < 3 else g.reshape(g.shape[0], -1)\n",
                      "wrong-shape"),
}


@pytest.mark.parametrize("seed", range(3))
def test_a_vjp_right_only_for_vectors_and_matrices_loses_the_values_point(seed):
    from autograder.checks.exercises.vjp import check_vjp
    for case, (tail, name) in VJP_WRONG_AT_3D.items():
        fn = notebooks.defined(VJP_HEAD + tail, "vjp_square")
        result = check_vjp(fn, np.random.default_rng(seed))
        assert not result.passed, (case, result.message)
        assert re.search(r"\(\d, \d, \d\)", result.message), result.message  # at the 3-D x
        # where the 3-D x's sizes read the same both ways, the shape is right and the
        # values say it
        assert result.misconception in (name, "probe.input-class.multi-dimensional"), (
            case, result.message)
    right = notebooks.defined(VJP_HEAD + "    return g\n", "vjp_square")
    assert check_vjp(right, np.random.default_rng(seed)).passed
