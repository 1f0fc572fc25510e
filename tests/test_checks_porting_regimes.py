"""The porting checks of issue 21: regimes of ``train_logreg``, ``logreg_grads`` at the trained
point, ``check_my_op`` asked about ops wrong on part of the input space, ``predict``'s recording
measured through its answer, the moves of ``make_optimizer``, ``pick_device``'s probe and
``accumulated_grad`` called twice on the same objects. The answers below are written the way
students write them, apart from the grader's own references."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.checks.porting import (
    device,
    logreg_grads_trained,
    logreg_regime_draws,
    logreg_regimes,
    logreg_runs,
    microbatch,
    recording,
    selfcheck_at_x,
)
from autograder.worker.stand_in import fresh_stand_ins, stand_in_gradient

FAST = settings(deadline=None, max_examples=8)
seeds = st.integers(0, 2**32 - 1)


def train(X, y, lr=0.5, steps=300, *, clip=None, stop=None, clamp=None):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        logits = X @ w + b
        if clamp is not None:
            logits = logits.clamp(-clamp, clamp)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        if stop is not None and loss.item() < stop:
            break
        w.grad, b.grad = None, None
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([w, b], clip)
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


def train_sgd(X, y, lr=0.5, steps=300):
    w, b = torch.nn.Parameter(torch.zeros(X.shape[1])), torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return w, b, losses


@FAST
@given(seeds)
def test_correct_loops_pass_every_regime(seed):
    """Do a hand-written float32 loop and an SGD loop match the float64 oracle in every regime?"""
    for fn in (train, train_sgd):
        result = logreg_regimes.check_train_logreg_regimes(fn, np.random.default_rng(seed))
        assert result.passed, result.message


def test_regimes_are_what_they_say():
    """Separable data's loss falls far; unscaled features give large first gradients; the
    first step sends a misclassified example's logit well past ±30."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        X, y, lr, steps = logreg_regime_draws.draw_regime(rng, "separable")
        losses = logreg_runs.reference_run(X, y, lr, steps)[2]
        assert steps >= 400 and losses[-1] < 5e-3, losses[-1]
        X, y, _, _ = logreg_regime_draws.draw_regime(rng, "unscaled")
        assert logreg_regime_draws.first_gradient_norm(X, y) > 1
        assert logreg_regime_draws.draw_regime(rng, "one-step")[3] == 1
        X, y, lr, steps = logreg_regime_draws.draw_regime(rng, "large-logits")
        logits = lr * logreg_regime_draws.first_logits(X, y)
        assert 3 <= steps <= 5 and logits[(logits > 0) != (y > 0.5)].abs().max() >= 60


@pytest.mark.parametrize("kwargs, name", [
    ({"clip": 1.0}, "gradient-clipped"),  # named since its cap replays the run
    ({"stop": 1e-2}, "stopped-early"),
    ({"clamp": 30.0}, "logits-clamped"),
    ({"clamp": 20.0}, "probe.input-class.large-logits"),
])
def test_clipping_early_stops_and_clamps_fail_with_their_cause(kwargs, name):
    for seed in range(4):
        result = logreg_regimes.check_train_logreg_regimes(
            lambda X, y, lr=0.5, steps=300: train(X, y, lr, steps, **kwargs),
            np.random.default_rng(seed))
        assert not result.passed and result.misconception == name, result.message


def train_on_rise(X, y, lr=0.5, steps=300, *, on_rise):
    """A loop that reacts when the loss goes up, as students write them: a "bold driver" that
    halves lr, an early stop (after recording the rise, or before), or the best weights kept."""
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses, best = [], None
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        rose = bool(losses) and loss.item() > losses[-1]
        if rose and on_rise == "stop-before":
            break
        if best is None or loss.item() < best[0]:
            best = (loss.item(), w.detach().clone(), b.detach().clone())
        losses.append(loss.item())
        if rose and on_rise == "stop-after":
            break
        if rose and on_rise == "halve-lr":
            lr = lr / 2
        w.grad, b.grad = None, None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    if on_rise == "keep-best":  # the last weights too, when their loss is the lowest
        with torch.no_grad():
            last = F.binary_cross_entropy_with_logits(X @ w + b, y).item()
        return (w, b, losses) if last < best[0] else (best[1], best[2], losses)
    return w, b, losses


def sigmoid_log(X, y, lr=0.5, steps=300, *, clip):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        p = torch.sigmoid(X @ w + b)
        if clip:
            p = p.clamp(1e-7, 1 - 1e-7)
        loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        w.grad, b.grad = None, None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


@pytest.mark.parametrize("on_rise", ["halve-lr", "stop-after", "stop-before", "keep-best"])
def test_a_loop_that_changes_once_the_loss_rises_is_named(on_rise):
    """Its losses are the grader's until the loss first rises (only with a large lr, where
    logits are large too): named for what it does, not taken for a large-logits mistake. Kept
    best weights are right where the last step's loss is the lowest: some seeds pass."""
    results = [logreg_regimes.check_train_logreg_regimes(
        lambda X, y, lr=0.5, steps=300: train_on_rise(X, y, lr, steps, on_rise=on_rise),
        np.random.default_rng(seed)) for seed in range(6)]
    failed = [r for r in results if not r.passed]
    assert len(failed) >= (2 if on_rise == "keep-best" else len(results))
    for result in failed:
        assert result.misconception == "changed-after-loss-rose", result.message
        assert "once the loss goes up" in result.message, result.message


@pytest.mark.parametrize("clip, name", [(False, "sigmoid-log"),
                                        (True, "probe.input-class.large-logits")])
def test_large_logit_mistakes_keep_their_names(clip, name):
    """A sigmoid then log (clipped or not) differs at the step whose loss jumped: it keeps its
    large-logits name, beside the clamps above."""
    for seed in range(4):
        result = logreg_regimes.check_train_logreg_regimes(
            lambda X, y, lr=0.5, steps=300: sigmoid_log(X, y, lr, steps, clip=clip),
            np.random.default_rng(seed))
        assert not result.passed and result.misconception == name, result.message


def unstable_loss(X, y, lr=0.5, steps=300, *, form):
    """A loop whose loss is a numerically unstable form of the logistic loss."""
    def loss_of(z):
        if form == "log1p-exp":  # the NumPy series' simplified form
            return torch.log1p(torch.exp(z)) - y * z
        if form == "log-one-plus-exp":
            return torch.log(1 + torch.exp(z)) - y * z
        if form == "log1p-exp-of-minus-z":
            return torch.log1p(torch.exp(-z)) + (1 - y) * z
        if form == "two-branch-exp":
            return y * torch.log1p(torch.exp(-z)) + (1 - y) * torch.log1p(torch.exp(z))
        if form == "sigmoid-by-hand":
            p = 1 / (1 + torch.exp(-z))
            return -(y * torch.log(p) + (1 - y) * torch.log(1 - p))
        if form == "log-sigmoid":
            return -(y * torch.log(torch.sigmoid(z)) + (1 - y) * torch.log(torch.sigmoid(-z)))
        raise ValueError(form)

    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = loss_of(X @ w + b).mean()
        w.grad, b.grad = None, None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w, b, losses


#: Each unstable form, and the names its evidence may give: the exp-based forms whose loss
#: turns inf where a logit passes 88.7 are told apart from a sigmoid then log (whose
#: probabilities round to 1 from about 17); forms whose evidence matches both get the class.
UNSTABLE_FORMS = {
    "log1p-exp": {"exp-overflow"},
    "log-one-plus-exp": {"exp-overflow"},
    "log1p-exp-of-minus-z": {"exp-overflow"},
    "two-branch-exp": {"unstable-logistic-loss"},
    "sigmoid-by-hand": {"sigmoid-log"},
    "log-sigmoid": {"sigmoid-log", "unstable-logistic-loss"},
}


@pytest.mark.parametrize("form", sorted(UNSTABLE_FORMS))
def test_unstable_forms_of_the_loss_are_named_for_what_is_unstable(form):
    """A loss that turns inf or NaN at large logits is named for what the evidence shows:
    exp(z) overflowing, a sigmoid rounding to 0 or 1, or, where the two give the same, the
    class; never a sigmoid for a loss that has none."""
    results = [logreg_regimes.check_train_logreg_regimes(
        lambda X, y, lr=0.5, steps=300: unstable_loss(X, y, lr, steps, form=form),
        np.random.default_rng(seed)) for seed in range(4)]
    failed = [r for r in results if not r.passed]
    assert len(failed) >= 3
    for result in failed:
        assert result.misconception in UNSTABLE_FORMS[form], result.message
        assert "binary_cross_entropy_with_logits" in result.message, result.message
        if result.misconception != "sigmoid-log":
            assert "overflow" in result.message, result.message
        if result.misconception == "exp-overflow":
            assert "sigmoid followed by log" not in result.message, result.message


def test_a_loss_nan_from_the_start_is_not_called_unstable():
    """Losses NaN from step 0 (features divided by a zero spread), where no logit is large yet:
    no unstable form of the loss is named."""
    def zero_spread(X, y, lr=0.5, steps=300):
        return unstable_loss(X / (X - X).std(0), y, lr, steps, form="log1p-exp")

    result = logreg_regimes.check_train_logreg_regimes(zero_spread, np.random.default_rng(0))
    assert not result.passed
    assert result.misconception not in ("exp-overflow", "sigmoid-log", "unstable-logistic-loss")


def test_logreg_grads_at_the_trained_point():
    """A closed form passes on leaves that require grad; a .numpy() port is named by its class;
    one that calls backward on the caller's w changes w.grad and fails."""
    def closed(X, y, w, b):
        r = torch.sigmoid(X @ w + b) - y
        return X.T @ r / X.shape[0], r.mean().reshape(1)

    def numpy_port(X, y, w, b):
        p = 1 / (1 + np.exp(-(X.numpy() @ w.numpy() + b.numpy())))
        r = p - y.numpy()
        return torch.from_numpy(X.numpy().T @ r / len(r)), torch.tensor([r.mean()])

    def via_backward(X, y, w, b):
        w.grad = b.grad = None
        F.binary_cross_entropy_with_logits(X @ w + b, y).backward()
        return w.grad.clone(), b.grad.clone()

    check = logreg_grads_trained.check_logreg_grads_trained
    assert check(closed, np.random.default_rng(0)).passed
    assert check(numpy_port, np.random.default_rng(0)).misconception == \
        "probe.input-class.requires-grad"
    assert check(via_backward, np.random.default_rng(0)).misconception == "modified-input"


def test_stand_in_ops_are_wrong_where_they_say():
    """gradcheck with the contract's settings: right where each stand-in is right, wrong where
    it is wrong; a looser eps or atol gives the other verdict at an x with a 0 entry."""
    def gc(kind, x, eps=1e-6, atol=1e-8):
        op = fresh_stand_ins({}, lambda x_, g: stand_in_gradient(kind, x_, g))["stand_in_apply"]
        leaf = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        return torch.autograd.gradcheck(op, (leaf,), eps=eps, atol=atol, raise_exception=False)

    positive, mixed, zero = [0.5, 1.2, 2.5], [-1.5, -0.5, 0.7, 2.0], [-1.5, 0.0, 0.7, 2.0]
    assert gc("negative", positive) and not gc("negative", mixed)
    assert gc("lesson", zero) and not gc("lesson", zero, eps=1e-3)
    assert gc("zero", mixed) and not gc("zero", zero)
    assert gc("offset", mixed) and not gc("offset", zero)
    assert gc("offset", zero, atol=1e-5)


def make_check(eps=1e-6, atol=1e-8, move=lambda x: x, to=torch.float64):
    def check_my_op(x):
        leaf = move(x.detach().double()).to(to).requires_grad_()
        return torch.autograd.gradcheck(my_op, (leaf,), eps=eps, atol=atol,
                                        raise_exception=False)
    return check_my_op


def also_at(where, **settings):
    """A check_my_op that also runs gradcheck at ``where(x)`` and returns the AND: False for
    an op right at x but wrong at the other point."""
    at_x, there = make_check(**settings), make_check(move=where, **settings)
    return lambda x: bool(at_x(x) and there(x))


def my_op(x):  # replaced by the stand-ins during each call (swap_globals)
    raise AssertionError("the check swaps in its own op")


@pytest.mark.parametrize("fn, passes, name", [
    (make_check(), True, None),
    (make_check(eps=1e-3), False, "probe.input-class.zero-entry"),
    (make_check(atol=1e-5), False, "tolerance-loosened"),
    (make_check(move=torch.abs), False, "probe.input-class.negative"),
    # checked at the lesson's point whatever x is: False for an op right at x, wrong elsewhere
    (make_check(move=lambda x: torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)),
     False, "checked-other-points"),
    (also_at(lambda x: -x), False, "checked-other-points"),
    # a random point of the student's own generator, seeded: the same point every call (one
    # from torch's global generator depends on what ran before, and a point where the op
    # happens to be right leaves the mistake unnamed)
    (also_at(lambda x: torch.randn(x.shape, dtype=torch.float64,
                                   generator=torch.Generator().manual_seed(3))), False,
     "checked-other-points"),
    (also_at(lambda x: torch.linspace(-1, 2, x.numel(), dtype=torch.float64)), False,
     "checked-other-points"),
    # the other causes keep their names, also in a check that looks elsewhere too
    (make_check(to=torch.float32), False, "checking-in-float32"),
    (also_at(lambda x: -x, to=torch.float32), False, "checking-in-float32"),
    (also_at(lambda x: x.abs(), eps=1e-3), False, "probe.input-class.zero-entry"),
    (also_at(lambda x: x.abs(), atol=1e-5), False, "tolerance-loosened"),
], ids=["contract", "eps-1e-3", "atol-1e-5", "abs", "fixed-point", "also-minus-x",
        "also-random", "also-grid", "float32", "float32-also-minus-x", "eps-also-abs",
        "atol-also-abs"])
def test_check_my_op_at_x(fn, passes, name):
    for seed in range(3):
        result = selfcheck_at_x.check_check_my_op_at_x(fn, np.random.default_rng(seed))
        assert result.passed == passes and result.misconception == name, result.message


def predictor(style):
    def predict(model, batch, where):
        model.to(where).eval()
        batch = batch.to(where)
        if style == "no_grad":
            with torch.no_grad():
                return model(batch)
        if style == "inference_mode":
            with torch.inference_mode():
                return model(batch)
        if style == "frozen":  # nothing recorded, unless the batch requires grad
            return model.requires_grad_(False)(batch)
        return model(batch).detach()
    return predict


@pytest.mark.parametrize("style, name", [("no_grad", None), ("inference_mode", None),
                                         ("frozen", "graph-recorded"),
                                         ("detach", "graph-recorded")])
def test_predict_recording_is_measured_through_the_answer(style, name):
    """Does the answer say whether the forward recorded, for a batch that requires grad too
    (the contract's output requires no grad whatever the batch: parameters set not to
    require grad do not stop a graph through the batch)?"""
    result = recording.check_predict_no_graph(predictor(style), np.random.default_rng(1))
    assert result.passed == (name is None) and result.misconception == name, result.message
    if style == "frozen":
        assert "nor do parameters set not to require grad" in result.message


def test_make_optimizer_that_never_moves_the_model_fails_on_meta():
    def lazy(model, where, lr=0.1):
        return torch.optim.SGD(model.parameters(), lr=lr)

    assert device.check_make_optimizer(lazy, np.random.default_rng(0), moved=False).passed
    moved = device.check_make_optimizer(lazy, np.random.default_rng(0), moved=True)
    assert not moved.passed and moved.misconception == "model-not-moved", moved.message


def test_a_cached_pick_device_is_named():
    answer = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # asked once
    result = device.check_pick_device(lambda: answer, np.random.default_rng(0))
    assert result.misconception == "availability-ignored", result.message


def accumulate(w, X, y, sizes):
    w.grad = None
    total = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * len(yj) / total).backward()
    return w.grad.clone()


def consumes_sizes(w, X, y, sizes):
    answer = accumulate(w, X, y, sizes)
    sizes.clear()
    return answer


def leaves_hook(w, X, y, sizes):
    w.grad = None
    total = sum(sizes)
    w.register_hook(lambda g: g / total)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum").backward()
    return w.grad.clone()


@pytest.mark.parametrize("fn, phrase", [(accumulate, None), (consumes_sizes, "sizes became"),
                                        (leaves_hook, "w has +1 hooks")])
def test_accumulated_grad_twice_on_the_same_objects(fn, phrase):
    result = microbatch.check_same_objects(fn, np.random.default_rng(0))
    assert result.passed == (phrase is None), result.message
    assert phrase is None or (phrase in result.message
                              and result.misconception == "modified-input"), result.message


def test_a_second_call_that_differs_is_named():
    """State left where no snapshot looks (an attribute on w) shows as a second answer."""
    def marks_w(w, X, y, sizes):
        answer = accumulate(w, X, y, sizes)
        if getattr(w, "_seen", False):
            answer = answer * 2
        w._seen = True
        return answer

    result = microbatch.check_same_objects(marks_w, np.random.default_rng(0))
    assert not result.passed and result.misconception == "second-call-differs", result.message
    assert "Called a second time on the same objects" in result.message


@pytest.mark.parametrize("error, named", [
    ("size mismatch, got input (49), mat (49x4), vec (5)", "foreign-size"),
    ("mat1 and mat2 shapes cannot be multiplied (49x4 and 5x1)", "foreign-size"),
    ("The size of tensor a (4) must match the size of tensor b (49) at non-singleton "
     "dimension 0", "raised"),  # every size is the arguments': nothing foreign to name
    ("division by zero", "raised"),
])
def test_a_shape_error_names_a_size_only_when_no_argument_has_it(error, named):
    from autograder.checks.porting.common import name_foreign_size
    from autograder.checks.result import Verdict

    failure = Verdict(False, f"train_logreg(...) raised RuntimeError: {error}", "raised")
    X, y = torch.zeros(49, 4), torch.zeros(49)
    assert name_foreign_size(failure, [X, y, 0.5]).misconception == named
