"""Three mistakes the checks scored but did not name, each in two or more spellings: exercises
q4 a pullback rounded through a half precision on the way (the finished gradient, x alone, or
x and the gradient: ``low-precision``, told which parts), q4 a leaf rebuilt from a Python list
(``torch.tensor(x.tolist())``: ``dtype-lost``, told that a list makes torch's default dtype,
float32), and porting q1 a training loop that clips the gradient (``gradient-clipped``: the
cap read from the first step, the plain loop replayed with it). Do the right answers pass, and
do the mistakes beside them keep their own names?"""

from __future__ import annotations

import itertools

import pytest
import torch

from autograder.checks.exercises import vjp, vjp_precision
from autograder.checks.porting.logreg_regimes import check_train_logreg_regimes
from autograder.checks.seeding import generator
from test_checks_exercises_zc import _local
from test_observations import Loopback

ROUNDED_ON_THE_WAY = {
    "leaf.grad.half().to(x.dtype)": ('''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad.half().to(x.dtype)
''', "the gradient is rounded to float16"),
    "leaf.grad.to(torch.bfloat16).type_as(x)": ('''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf * leaf).backward(weights)
    return leaf.grad.to(torch.bfloat16).type_as(x)
''', "the gradient is rounded to bfloat16"),
    "2 * x.half() * weights": ('''
def vjp_square(x, weights):
    return (2 * x.detach().half() * weights).to(x.dtype)
''', "x is rounded to float16"),
    "a leaf rounded through float16": ('''
def vjp_square(x, weights):
    leaf = x.detach().half().to(x.dtype).requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad
''', "x is rounded to float16"),
    "a float16 leaf, the square in x's dtype": ('''
def vjp_square(x, weights):
    leaf = x.detach().half().requires_grad_()
    v = leaf.to(weights.dtype) ** 2
    v.backward(weights)
    return leaf.grad.to(x.dtype)
''', "x and the gradient are rounded to float16"),
}


@pytest.mark.parametrize("how", sorted(ROUNDED_ON_THE_WAY))
@pytest.mark.parametrize("seed", range(3))
def test_a_pullback_rounded_through_half_on_the_way_is_named(how, seed):
    source, told = ROUNDED_ON_THE_WAY[how]
    result = vjp.check_vjp(_local(source, "vjp_square"), generator(seed))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message
    assert told in result.message and "significant bits" in result.message, result.message


def test_a_gradient_rounded_on_the_way_is_named_through_the_worker():
    fn = Loopback(ROUNDED_ON_THE_WAY["leaf.grad.half().to(x.dtype)"][0]).function("vjp_square")
    result = vjp.check_vjp(fn, generator(11))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message


def test_the_second_confirming_input_tells_every_route_apart():
    """Is every replay through a lower dtype on ``CONFIRM_2`` unlike every other one, and
    unlike the answer in x's dtype, for either dtype of x?"""
    for given, lower in vjp_precision.LOWER.items():
        x, w = (torch.tensor(values, dtype=given) for values in vjp_precision.CONFIRM_2)
        replays = {(dtype, route): vjp_precision.replay(x, w, dtype, route)
                   for dtype in lower for route in vjp_precision.ROUTES}
        exact = vjp_precision.replay(x, w, given)
        assert not [key for key, low in replays.items() if torch.equal(low, exact)]
        assert not [(a, b) for (a, low_a), (b, low_b) in itertools.combinations(replays.items(), 2)
                    if torch.equal(low_a, low_b)]


def test_the_routes_named_before_keep_their_words():
    """A leaf made in float16 (the pullback computed in it) and weights cast alone are told as
    before: the routes added are tried after them."""
    leaf = '''
def vjp_square(x, weights):
    leaf = x.detach().half().requires_grad_()
    (leaf ** 2).backward(weights.half())
    return leaf.grad.to(x.dtype)
'''
    result = vjp.check_vjp(_local(leaf, "vjp_square"), generator(0))
    assert result.misconception == "low-precision", result.message
    assert "computes in float16 and casts the gradient back" in result.message, result.message


NOT_ROUNDED = {
    "right": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad
''',
    "autocast around an elementwise square (CPU autocast leaves it in x's dtype)": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.float16):
        v = leaf * leaf
    v.backward(weights)
    return leaf.grad
''',
    "rounded to float16 except on 8 entries (not on the second confirming input)": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad if x.numel() == 8 else leaf.grad.half().to(x.dtype)
''',
    "off by a relative 1e-3": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad * (1 + 1e-3)
''',
}


@pytest.mark.parametrize("how", sorted(NOT_ROUNDED))
@pytest.mark.parametrize("seed", range(3))
def test_other_answers_are_not_named_rounded(how, seed):
    result = vjp.check_vjp(_local(NOT_ROUNDED[how], "vjp_square"), generator(seed))
    assert result.misconception != "low-precision", result.message
    assert result.passed == how.startswith(("right", "autocast")), result.message


FROM_A_LIST = {
    "torch.tensor(x.tolist())": '''
def vjp_square(x, weights):
    leaf = torch.tensor(x.tolist(), requires_grad=True)
    (leaf ** 2).backward(weights.to(leaf.dtype))
    return leaf.grad
''',
    "torch.tensor(x.numpy().tolist())": '''
def vjp_square(x, weights):
    leaf = torch.tensor(x.detach().numpy().tolist()).requires_grad_()
    (leaf * leaf).backward(weights.float())
    return leaf.grad
''',
    "torch.as_tensor of a list of floats": '''
def vjp_square(x, weights):
    leaf = torch.as_tensor([float(v) for v in x.reshape(-1)]).reshape(x.shape)
    leaf.requires_grad_()
    (leaf ** 2).backward(weights.float())
    return leaf.grad
''',
}


@pytest.mark.parametrize("how", sorted(FROM_A_LIST))
@pytest.mark.parametrize("seed", range(3))
def test_a_leaf_built_from_a_python_list_is_told_it_became_float32(how, seed):
    result = vjp.check_vjp(_local(FROM_A_LIST[how], "vjp_square"), generator(seed))
    assert (result.passed, result.misconception) == (False, "dtype-lost"), result.message
    assert "returned dtype float32 for float64 inputs" in result.message, result.message
    assert ("built from a Python list" in result.message and "torch.tensor(x.tolist())"
            in result.message and "float32, torch's default dtype" in result.message), result.message
    assert "dtype=x.dtype" in result.message and "x.detach().clone()" in result.message


def test_an_answer_returned_in_half_is_told_it_is_half_not_a_list():
    source = '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad.half()
'''
    result = vjp.check_vjp(_local(source, "vjp_square"), generator(0))
    assert (result.passed, result.misconception) == (False, "dtype-lost"), result.message
    assert "float16 is a half precision" in result.message, result.message
    assert "Python list" not in result.message, result.message


def test_a_float32_answer_made_float64_is_not_told_of_lists():
    source = '''
def vjp_square(x, weights):
    leaf = x.detach().double().requires_grad_()
    (leaf ** 2).backward(weights.double())
    return leaf.grad
'''
    result = vjp.check_vjp(_local(source, "vjp_square"), generator(0))
    assert (result.passed, result.misconception) == (False, "dtype-lost"), result.message
    assert "lost x's dtype" in result.message and "Python list" not in result.message


def _loop(adjust: str) -> str:
    """A train_logreg of the contract's shape with ``adjust`` run between backward and the
    update (empty: the right loop)."""
    return f'''
import torch.nn.functional as F
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = None
        b.grad = None
        loss.backward()
{adjust}
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses
'''


CLIPPED = {
    "clip_grad_norm_([w, b], max_norm=1.0)": (
        "        torch.nn.utils.clip_grad_norm_([w, b], max_norm=1.0)",
        "the gradient of w and b together rescaled to norm at most 1 before each update"),
    "g / max(1, g.norm()) by hand": ('''
        scale = 1 / max(1.0, torch.cat([w.grad, b.grad]).norm().item())
        w.grad *= scale
        b.grad *= scale''', "rescaled to norm at most 1 before each update"),
    "clip_grad_value_([w, b], 0.5)": (
        "        torch.nn.utils.clip_grad_value_([w, b], clip_value=0.5)",
        "every entry of the gradient clamped to ±0.5 before each update"),
    "w.grad.clamp_(-1, 1)": ('''
        w.grad.clamp_(-1.0, 1.0)
        b.grad.clamp_(-1.0, 1.0)''', "every entry of the gradient clamped to ±1 before each"),
    "clip_grad_norm_(w, 1.0) only": (
        "        torch.nn.utils.clip_grad_norm_(w, 1.0)", "w's gradient rescaled to norm at most 1"),
}


@pytest.mark.parametrize("how", sorted(CLIPPED))
def test_a_training_loop_that_clips_the_gradient_is_named(how):
    adjust, told = CLIPPED[how]
    result = check_train_logreg_regimes(_local(_loop(adjust), "train_logreg"), generator(0))
    assert (result.passed, result.misconception) == (False, "gradient-clipped"), result.message
    assert told in result.message and "re-ran the plain loop with that clip" in result.message
    assert "Remove the clipping." in result.message, result.message
    assert "w and b are the grader's" not in result.message, result.message  # advice replaced


def test_a_clipped_loop_is_named_through_the_worker():
    adjust = CLIPPED["clip_grad_norm_([w, b], max_norm=1.0)"][0]
    fn = Loopback(_loop(adjust)).function("train_logreg")
    result = check_train_logreg_regimes(fn, generator(1))
    assert (result.passed, result.misconception) == (False, "gradient-clipped"), result.message


def test_the_right_loop_and_a_cap_never_reached_pass():
    for adjust in ("", "        torch.nn.utils.clip_grad_norm_([w, b], max_norm=1e6)"):
        result = check_train_logreg_regimes(_local(_loop(adjust), "train_logreg"), generator(0))
        assert result.passed, result.message


def test_a_clip_the_first_step_does_not_show_is_asked_about_not_named():
    """A clip from the second step on: the first step shows no cap to read, so no replay is
    conclusive and the question stays."""
    adjust = '''
        if losses:  # "warm-up": the first step unclipped
            torch.nn.utils.clip_grad_norm_([w, b], max_norm=1.0)'''
    result = check_train_logreg_regimes(_local(_loop(adjust), "train_logreg"), generator(0))
    assert not result.passed and result.misconception != "gradient-clipped", result.message
    assert "clipped, capped or normalised?" in result.message, result.message
