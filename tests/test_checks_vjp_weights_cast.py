"""q4 ``vjp_square`` with only the weights cast to a lower dtype (blind round zf:
``backward(weights.float())``, the leaf kept in x's dtype): exact on float32 inputs, rounded
weights on float64 ones. Named ``low-precision``, told it was the weights; an answer right
in x's dtype is not."""

from __future__ import annotations

import pytest

from autograder.checks.exercises import vjp
from autograder.checks.seeding import generator
from test_checks_exercises_zc import _local
from test_observations import Loopback

WEIGHTS_CAST = {
    "backward(weights.float())": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights.float())
    return leaf.grad
''',
    "weights.to(torch.float32) in autograd.grad": '''
def vjp_square(x, weights):
    leaf = x.detach().requires_grad_()
    (g,) = torch.autograd.grad(leaf.pow(2), leaf, grad_outputs=weights.to(torch.float32).to(x.dtype))
    return g
''',
    "weights through bfloat16": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf * leaf).backward(weights.bfloat16().to(x.dtype))
    return leaf.grad
''',
}


@pytest.mark.parametrize("how", sorted(WEIGHTS_CAST))
@pytest.mark.parametrize("seed", range(3))
def test_weights_cast_to_a_lower_dtype_are_named(how, seed):
    result = vjp.check_vjp(_local(WEIGHTS_CAST[how], "vjp_square"), generator(seed))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message
    assert "casts the weights to" in result.message, result.message


def test_weights_cast_are_named_through_the_worker():
    fn = Loopback(WEIGHTS_CAST["backward(weights.float())"]).function("vjp_square")
    result = vjp.check_vjp(fn, generator(11))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message
