"""Blind round zb's porting classes that kept full marks, each with the variants a student
writes and the near-misses that must keep their verdicts:

- q1: ``train_logreg`` whose returned losses (or w, b) a later call overwrites
  (``result-reused``);
- q2: ``accumulated_grad`` by ``binary_cross_entropy(sigmoid(z))``, which saturates for large
  logits (``sigmoid-then-log``);
- q3: ``MyOp`` by ``torch.dot``, which raises for an x that is not 1-D (``only-1d-input``);
- q4: ``predict`` that switches off the caller's batch's ``requires_grad`` (``modified-input``),
  and (blind round zf) one that moves it through ``batch.data = batch.data.to(device)``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.porting import (
    device,
    device_predict,
    gradcheck,
    logreg,
    microbatch,
    recording,
)
from test_observations import Loopback

# --- q3: an op for 1-D x only -----------------------------------------------------------------


def _op(sums):
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            S, A = sums(x)
            ctx.save_for_backward(x, S, A)
            return S / (1 + A)

        @staticmethod
        def backward(ctx, grad_output):
            x, S, A = ctx.saved_tensors
            return grad_output * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)

    return Op


BY_DOT = _op(lambda x: (torch.dot(x, x * x), torch.dot(x.abs(), torch.ones_like(x))))
BY_VDOT = _op(lambda x: (torch.vdot(x, x ** 2), torch.vdot(x.abs(), torch.ones_like(x))))
BY_MATMUL = _op(lambda x: (x @ (x * x), x.abs() @ torch.ones_like(x)))
BY_SUM = _op(lambda x: ((x ** 3).sum(), x.abs().sum()))  # legal
BY_FLAT_DOT = _op(lambda x: (torch.dot(x.reshape(-1), x.reshape(-1) ** 2),  # legal
                             x.abs().sum()))
BY_DOT_WRONG = _op(lambda x: (torch.dot(x, x * x), torch.dot(x, torch.ones_like(x))))  # A wrong


@pytest.mark.parametrize("op", [BY_DOT, BY_VDOT, BY_MATMUL], ids=["dot", "vdot", "matmul"])
def test_an_op_for_1d_x_only_is_named(op):
    for result in (gradcheck.check_forward(op.apply, op, np.random.default_rng(0)),
                   gradcheck.check_backward(op, np.random.default_rng(0))):
        assert not result.passed, result.message
        assert result.misconception == "only-1d-input", result.message
        assert "any shape" in result.message and ".sum()" in result.message, result.message


@pytest.mark.parametrize("op", [BY_SUM, BY_FLAT_DOT], ids=["sum", "flat-dot"])
def test_an_op_for_any_shape_passes(op):
    assert gradcheck.check_forward(op.apply, op, np.random.default_rng(0)).passed
    assert gradcheck.check_backward(op, np.random.default_rng(0)).passed


def test_a_wrong_op_by_dot_keeps_its_failure_unnamed_as_1d():
    result = gradcheck.check_forward(BY_DOT_WRONG.apply, BY_DOT_WRONG, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception != "only-1d-input", result.message


# --- q4: the caller's batch changed ------------------------------------------------------------


def _forward(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        return model(batch.to(device))


def flag_off(model, batch, device):  # blind round zb's porting/student_05
    return _forward(model, batch.requires_grad_(False), device)


def flag_assigned(model, batch, device):
    batch.requires_grad = False
    return _forward(model, batch, device)


def detached_in_place(model, batch, device):
    batch.detach_()
    return _forward(model, batch, device)


def rebound(model, batch, device):  # legal
    batch = batch.detach()
    return _forward(model, batch, device)


def inference(model, batch, device):  # legal
    model.to(device).eval()
    with torch.inference_mode():
        return model(batch.to(device))


@pytest.mark.parametrize("fn", [flag_off, flag_assigned, detached_in_place])
def test_predict_changing_the_callers_batch_is_named(fn):
    result = recording.check_predict_no_graph(fn, np.random.default_rng(0))
    assert not result.passed, fn.__name__
    assert result.misconception == "modified-input", result.message
    assert "the batch no longer requires grad" in result.message, result.message
    assert "must not change its arguments" in result.message, result.message
    assert "no_grad/inference_mode" in result.message, result.message


@pytest.mark.parametrize("fn", [rebound, inference, _forward])
def test_predict_leaving_the_batch_passes(fn):
    assert recording.check_predict_no_graph(fn, np.random.default_rng(0)).passed


# --- q4: the caller's batch moved through .data (blind round zf) -------------------------------


def data_moved(model, batch, device):  # blind round zf's porting/student_03
    model.to(device)
    model.train(False)
    batch.data = batch.data.to(device)  # move the batch in place, like the model
    with torch.set_grad_enabled(False):
        return model(batch)


def data_from_to(model, batch, device):
    model.to(device).eval()
    batch.data = batch.to(device)
    with torch.no_grad():
        return model(batch)


def data_non_blocking(model, batch, device):
    model.eval().to(device=device)
    batch.data = batch.data.to(device, non_blocking=True)
    with torch.inference_mode():
        return model(batch)


def _move_(t, device):
    t.data = t.data.to(device)
    return t


def data_by_helper(model, batch, device):
    model.to(device)
    model.eval()
    with torch.no_grad():
        return model(_move_(batch, device))


def params_by_data(model, batch, device):  # the model moved through p.data: legal on a GPU
    for p in model.parameters():
        p.data = p.data.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch.to(device))


def params_and_batch_by_data(model, batch, device):  # both: not told apart on meta
    for p in model.parameters():
        p.data = p.data.to(device)
    batch.data = batch.data.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch)


DATA_MOVED = [data_moved, data_from_to, data_non_blocking, data_by_helper]


@pytest.mark.parametrize("fn", DATA_MOVED)
def test_predict_moving_the_callers_batch_through_data_is_named(fn):
    """batch.data = batch.data.to(device) moves the caller's batch itself: on meta it raises
    torch's set_data error, which the batch already on meta does not; named modified-input
    and told to move a copy."""
    for seed in range(3):
        result = device_predict.check_predict(fn, np.random.default_rng(seed), moved=True)
        if torch.cuda.is_available():
            continue  # a real device: the batch moves (left_unchanged's business)
        assert not result.passed, fn.__name__
        assert result.misconception == "modified-input", result.message
        assert "batch.to(device)" in result.message, result.message
        assert "changes the caller's tensor" in result.message, result.message


@pytest.mark.parametrize("fn", DATA_MOVED + [params_by_data])
def test_predict_through_data_passes_on_the_cpu(fn):
    """On the CPU, .to(device) returns the tensor itself: nothing moves, the answer is right."""
    assert device_predict.check_predict(fn, np.random.default_rng(0), moved=False).passed
    assert recording.check_predict_no_graph(fn, np.random.default_rng(0)).passed


def params_by_data_flat(model, batch, device):  # each parameter swapped, then the batch moved
    model.eval()
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            p.data = p.data.to(device)
    with torch.inference_mode():
        return model(batch.to(device))


@pytest.mark.parametrize("fn", [params_by_data, params_by_data_flat])
def test_predict_moving_the_model_through_data_passes(fn):
    """p.data = p.data.to(device) on the model's own parameters is legal on a GPU; on meta
    torch refuses the swap: asked again with the model already there, the call runs and is
    judged as the first would have been, and passes."""
    if torch.cuda.is_available():
        pytest.skip("meta only")
    for seed in range(3):
        result = device_predict.check_predict(fn, np.random.default_rng(seed), moved=True)
        assert result.passed, result.message


def test_predict_moving_the_model_and_the_batch_through_data_is_named():
    """Both swapped: with the model already on meta the batch's swap still raises."""
    if torch.cuda.is_available():
        pytest.skip("meta only")
    result = device_predict.check_predict(params_and_batch_by_data, np.random.default_rng(0),
                                          moved=True)
    assert not result.passed
    assert result.misconception == "modified-input", result.message
    assert "the batch was swapped too" in result.message, result.message


def test_predict_moving_the_model_through_data_but_wrong_still_fails():
    """The model-mover's call is judged: an answer that never ran the model on meta fails."""
    def params_then_empty(model, batch, device):
        for p in model.parameters():
            p.data = p.data.to(device)
        with torch.no_grad():
            out = model(batch)  # on the CPU batch: raises with the model on meta
        return out

    if torch.cuda.is_available():
        pytest.skip("meta only")
    assert not device_predict.check_predict(params_then_empty, np.random.default_rng(0),
                                            moved=True).passed


# --- q1: an answer a later call overwrites ----------------------------------------------------


def _run(X, y, lr, steps, losses, w=None, b=None):
    w = torch.zeros(X.shape[1], requires_grad=True) if w is None else w
    b = torch.zeros(1, requires_grad=True) if b is None else b
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = b.grad = None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w, b, losses


HISTORY = []


def history_cleared(X, y, lr=0.5, steps=300):  # blind round zb's porting/student_02
    HISTORY.clear()
    return _run(X, y, lr, steps, HISTORY)


def history_deleted(X, y, lr=0.5, steps=300):
    del HISTORY[:]
    return _run(X, y, lr, steps, HISTORY)


def on_the_function(X, y, lr=0.5, steps=300):
    on_the_function.losses.clear()
    return _run(X, y, lr, steps, on_the_function.losses)


on_the_function.losses = []
KEPT = {}


def params_kept(X, y, lr=0.5, steps=300):
    n = X.shape[1]
    if KEPT.get("n") != n:
        KEPT.update(n=n, w=torch.zeros(n, requires_grad=True), b=torch.zeros(1, requires_grad=True))
    with torch.no_grad():
        KEPT["w"].zero_()
        KEPT["b"].zero_()
    return _run(X, y, lr, steps, [], KEPT["w"], KEPT["b"])


def fresh_list(X, y, lr=0.5, steps=300):  # legal
    return _run(X, y, lr, steps, [])


def cache_copied(X, y, lr=0.5, steps=300):  # legal: the kept history is a copy
    HISTORY.clear()
    w, b, losses = _run(X, y, lr, steps, HISTORY)
    return w, b, list(losses)


@pytest.mark.parametrize("fn,part", [(history_cleared, "losses"), (history_deleted, "losses"),
                                     (on_the_function, "losses"), (params_kept, "params")])
def test_an_answer_a_later_call_overwrites_is_named(fn, part):
    result = logreg.check_train_logreg(fn, np.random.default_rng(0), part=part)
    assert not result.passed, fn.__name__
    assert result.misconception == "result-reused", result.message
    assert "called again" in result.message and "each call" in result.message, result.message


@pytest.mark.parametrize("fn", [fresh_list, cache_copied])
def test_a_fresh_answer_each_call_passes(fn):
    for part in ("losses", "params"):
        assert logreg.check_train_logreg(fn, np.random.default_rng(0), part=part).passed


# --- q2: a sigmoid then log -------------------------------------------------------------------


def _micro(loss_of):
    def accumulated_grad(w, X, y, sizes):
        w.grad = None
        B, start = sum(sizes), 0
        for size in sizes:
            Xj, yj = X[start:start + size], y[start:start + size]
            (loss_of(Xj @ w, yj) * size / B).backward()
            start += size
        return w.grad.clone()
    return accumulated_grad


def _by_hand(z, y):
    p = torch.sigmoid(z)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


def _by_expit(z, y):
    return F.binary_cross_entropy(torch.special.expit(z), y, reduction="sum") / len(y)


SIGMOID_LOG = {"bce(sigmoid)": _micro(lambda z, y: F.binary_cross_entropy(torch.sigmoid(z), y)),
               "by hand": _micro(_by_hand), "bce(expit), summed": _micro(_by_expit)}
FUSED = {"with_logits": _micro(F.binary_cross_entropy_with_logits),  # legal
         "logsigmoid": _micro(lambda z, y: -(y * F.logsigmoid(z)  # legal
                                             + (1 - y) * F.logsigmoid(-z)).mean())}


@pytest.mark.parametrize("how", list(SIGMOID_LOG))
def test_a_sigmoid_then_log_is_named(how):
    for stale in (False, True):
        result = microbatch.check_accumulated_grad(SIGMOID_LOG[how], np.random.default_rng(0),
                                                   stale=stale)
        assert not result.passed, how
        assert result.misconception == "sigmoid-log", result.message
        assert "binary_cross_entropy_with_logits" in result.message, result.message


@pytest.mark.parametrize("how", list(FUSED))
def test_a_stable_loss_passes(how):
    for stale in (False, True):
        assert microbatch.check_accumulated_grad(FUSED[how], np.random.default_rng(0),
                                                 stale=stale).passed


_PARAMS_BY_DATA = '''
def predict(model, batch, device):
    for p in model.parameters():
        p.data = p.data.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch.to(device))
'''


def test_predict_moving_the_model_through_data_passes_through_the_worker():
    if torch.cuda.is_available():
        pytest.skip("meta only")
    fn = Loopback(_PARAMS_BY_DATA).function("predict")
    result = device_predict.check_predict(fn, np.random.default_rng(11), moved=True)
    assert result.passed, result.message


def optimizer_by_data(model, device, lr=0.1):  # the model moved through p.data: legal on a GPU
    for p in model.parameters():
        p.data = p.data.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)


def optimizer_by_data_first(model, device, lr=0.1):  # same Parameter objects: order is free
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for p in model.parameters():
        p.data = p.data.to(device)
    return opt


@pytest.mark.parametrize("fn", [optimizer_by_data, optimizer_by_data_first])
def test_make_optimizer_moving_the_model_through_data_passes(fn):
    """On meta the swap raises; asked again with the model already there, it is judged."""
    for moved in (False, True):
        for seed in range(3):
            result = device.check_make_optimizer(fn, np.random.default_rng(seed), moved=moved)
            assert result.passed, result.message


def test_make_optimizer_with_momentum_through_data_still_fails():
    def with_momentum(model, device, lr=0.1):
        for p in model.parameters():
            p.data = p.data.to(device)
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    assert not device.check_make_optimizer(with_momentum, np.random.default_rng(0),
                                           moved=False).passed
