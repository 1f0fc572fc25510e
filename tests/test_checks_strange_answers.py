"""Strange answers are the student's failing check, never the grader's error; references come
from the inputs as they were before the call; NaN is never close. The red team's notebooks
(2026-12-02) replayed as the functions they define, called
by the checks directly (in-process: the sealed judge hands the checks the same values, meta
tensors and ints too large for a float included, and mirrors in-place changes back)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.authoring.layout import ASSIGNMENTS
from autograder.checks import all_checks, closeness
from autograder.checks.calling import call
from autograder.checks.describing import describe, plain
from autograder.checks.porting import device, device_predict, microbatch
from autograder.harness import expect
from notebooks import namespace, solution


def correct_accumulated_grad(w, X, y, sizes):
    w.grad = None
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        (loss * (len(yj) / sum(sizes))).backward()
    return w.grad.clone()


def zeroes_inputs(w, X, y, sizes):
    """microbatch-zero-inputs.ipynb: wipes the caller's X, returns zeros."""
    with torch.no_grad():
        X.zero_()
    return torch.zeros_like(w.detach())


def right_then_wipes(w, X, y, sizes):
    """The right gradient, then the caller's y overwritten: the answer is right, the call is
    not."""
    grad = correct_accumulated_grad(w, X, y, sizes)
    y.fill_(0.5)
    return grad


MICROBATCH = [lambda f, rng: microbatch.check_accumulated_grad(f, rng, stale=False),
              lambda f, rng: microbatch.check_accumulated_grad(f, rng, stale=True),
              microbatch.check_same_objects]


@pytest.mark.parametrize("check", MICROBATCH, ids=["weighted", "stale", "same_objects"])
@pytest.mark.parametrize("fn", [zeroes_inputs, right_then_wipes])
def test_microbatch_judges_the_inputs_as_handed_over(check, fn):
    """Is a call that changes the caller's X or y failed as ``modified-input`` by every
    microbatch check, its reference taken from private copies made before the call (the
    zeroing one earned 2/4 when the reference was computed from X after the call)?"""
    result = check(fn, np.random.default_rng(5))
    assert not result.passed and result.misconception == "modified-input", result.message
    assert "changed what it was given" in result.message
    if fn is zeroes_inputs:
        assert "the answer was also wrong" in result.message, result.message
    assert check(correct_accumulated_grad, np.random.default_rng(5)).passed


def nan_lr_optimizer(model, device, lr=0.1):
    """optimizer-nan-lr.ipynb."""
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=float("nan"))


@pytest.mark.parametrize("moved", [False, True])
def test_make_optimizer_with_nan_lr_fails(moved):
    """Does an optimizer built with lr=nan lose both hidden optimizer checks (``abs(v - lr) >
    tol`` is False for NaN, so it passed)?"""
    result = device.check_make_optimizer(nan_lr_optimizer, np.random.default_rng(1), moved=moved)
    assert not result.passed and result.misconception == "lr-ignored", result.message


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 10**400, True, "0.5", None])
def test_an_lr_no_float_equals_is_not_the_lr(bad):
    model = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    opt.param_groups[0]["lr"] = bad
    verdict = device.judge_optimizer(opt, model, torch.device("cpu"), 0.5,
                                     {id(p) for p in model.parameters()})
    assert verdict.misconception == "lr-ignored", verdict.message


def test_near_never_takes_nan_or_a_huge_int():
    assert closeness.near(0.5, 0.5, 1e-12) and closeness.near(np.float32(0.5), 0.5, 1e-6) \
        and closeness.near(2, 2.0, 0.0)
    assert not any(closeness.near(v, 0.5, 1e-3, 1.0)
                   for v in (float("nan"), 10**400, True, "0.5", None))


def shape_only_predict(model, batch, device):
    """predict-meta-shape-only.ipynb: the output's shape, never the model."""
    out_features = [p for p in model.parameters()][-1].shape[0]
    return torch.empty(batch.shape[0], out_features, dtype=torch.bool, device=device)


def unmoved_shape_predict(model, batch, device):
    """The right dtype, still without running the model there."""
    out_features = [p for p in model.parameters()][-1].shape[0]
    return torch.empty(batch.shape[0], out_features, device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the moved check runs on CUDA here")
@pytest.mark.parametrize("fn, name", [(shape_only_predict, "output-not-from-model"),
                                      (unmoved_shape_predict, "model-not-moved")])
def test_predict_on_meta_must_show_the_model_ran(fn, name):
    """On ``meta`` (no values), is an answer of the right shape that the model did not make
    failed: the dtype of the grader's own forward on meta, and the model on meta after?"""
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=True)
    assert not result.passed and result.misconception == name, result.message


def huge_counts(net, inputs, track):
    """saved-huge-int.ipynb."""
    return (10**400, 10**400)


def meta_vjp(x, weights):
    """vjp-meta-tensor.ipynb."""
    return torch.empty(x.shape, dtype=x.dtype, device="meta")


@pytest.mark.parametrize("assignment, key, name, fn", [
    ("autograd-exercises", "q2_saved/count_saved_tracked", "count_saved", huge_counts),
    ("autograd-exercises", "q2_saved/count_saved_untracked", "count_saved", huge_counts),
    ("autograd-exercises", "q4_vjp/vjp_square_values", "vjp_square", meta_vjp),
])
def test_red_team_answers_fail_as_the_students(assignment, key, name, fn):
    """Is each answer the red team's notebooks gave (each a grader error for the whole
    submission) that check's failure, through ``expect`` as otter runs it: an
    ``AssertionError`` that says what came back, not a ``GraderFault``?"""
    env = {**namespace(solution(assignment)), name: fn}
    with pytest.raises(AssertionError) as failed:
        expect(env, assignment, key)
    assert "which is or holds" in str(failed.value), failed.value


def _strange(value, kind):
    if isinstance(value, torch.Tensor):
        if kind == "meta":
            return torch.empty(value.shape, dtype=value.dtype, device="meta")
        return value.to_sparse() if value.dim() else value
    if isinstance(value, (tuple, list)):
        return type(value)(_strange(v, kind) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and kind == "huge":
        return 10**400
    return value


CASES = [(a, key) for a in ASSIGNMENTS for key in all_checks()[a]]


@pytest.mark.parametrize("kind", ["meta", "huge", "sparse"])
def test_no_check_raises_on_a_strange_answer(kind):
    """Every check, each function of the solution with its answer made strange (tensors on
    meta or sparse, numbers too large for a float): the check returns a result, and a wrong
    one is the student's (the red team's in-process fuzzing crashed q1_logreg's 4 checks,
    q2_microbatch's 3, q3_gradcheck/forward, q4_vjp and q2_saved)."""
    for assignment in ASSIGNMENTS:
        env = namespace(solution(assignment))
        for key, check in all_checks()[assignment].items():
            values = {}
            for n in check.needs:
                fn = env[n]
                values[n] = fn if isinstance(fn, type) or not callable(fn) else (
                    lambda *a, _fn=fn, **k: _strange(_fn(*a, **k), kind))
            result = check(values, np.random.default_rng(3))
            assert result.passed or result.fault == "student", (key, result.message)


def test_the_describing_helpers_take_what_a_student_can_return():
    """``describe`` and ``plain`` of values with no readable numbers do not raise."""
    for value in (torch.empty(2, 3, device="meta"), torch.eye(2).to_sparse(), 10**5000,
                  [1, (10**400,)]):
        assert describe(value) and plain(value) is not None
    assert "digits" in describe(10**5000)


def test_an_unreadable_answer_says_what_came_back():
    got, failure = call(lambda: (1, 10**400), "count_saved")
    assert got is None and failure.misconception == "unreadable-answer"
    assert "an int of about 401 digits, too large for a float" in failure.message
    got, failure = call(lambda: torch.empty(2, device="meta"), "vjp_square")
    assert failure.misconception == "unreadable-answer" and "'meta' device" in failure.message


def test_the_microbatch_public_test_builds_its_own_data():
    """public-test-own-data.ipynb: a last cell ``X = torch.zeros(200, 5)`` made every
    full-batch gradient 0, and a zero-returning ``accumulated_grad`` passed the public test,
    which read X and y from the notebook. It builds the lesson's data itself now."""
    from notebooks import public_results

    env = {**namespace(solution("autograd-porting")), "X": torch.zeros(200, 5),
           "accumulated_grad": lambda w, X, y, sizes: torch.zeros(5)}
    assert not any(public_results("autograd-porting", "q2_microbatch", env))
