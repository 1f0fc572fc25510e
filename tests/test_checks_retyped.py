"""A caller's tensor given another dtype in place (blind round zk: ``check_my_op`` ran
``x.data = x.data.to(torch.float64)`` on the caller's x). ``torch.equal`` compares values
across dtypes, so the values alone missed it; the sealed judge's mirror cast the worker's
tensor back to the judge's dtype. Both now see it: ``modified-input``, here and through the
worker; a check_my_op on a float64 copy passes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import selfcheck
from autograder.checks.probes import side_effects
from test_observations import Loopback

RETYPING = {
    "x.data = x.data.to(float64)": '''
def check_my_op(x):
    x.data = x.data.to(torch.float64)
    return torch.autograd.gradcheck(my_op, (x.detach().requires_grad_(),), eps=1e-6, atol=1e-4, raise_exception=False)
''',
    "x.data = x.data.double() on a copy's view": '''
def check_my_op(x):
    x.data = x.double().data
    return torch.autograd.gradcheck(my_op, (x.detach().clone().requires_grad_(),), eps=1e-6,
                                    atol=1e-4, raise_exception=False)
''',
}
RIGHT = '''
def check_my_op(x):
    return torch.autograd.gradcheck(my_op, (x.detach().to(torch.float64).requires_grad_(),),
                                    eps=1e-6, atol=1e-4, raise_exception=False)
'''
OP = '''
class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        S, A = (x ** 3).sum(), x.abs().sum()
        ctx.save_for_backward(x, S, A)
        return S / (1 + A)

    @staticmethod
    def backward(ctx, g):
        x, S, A = ctx.saved_tensors
        return g * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)

my_op = MyOp.apply
'''


def test_a_tensor_given_another_dtype_is_a_change():
    x = torch.randn(3)
    before = side_effects.snapshot(x)
    x.data = x.data.double()
    assert side_effects.changes(before, x, "x") == ["x became float64 (it was float32)"]


@pytest.mark.parametrize("how", sorted(RETYPING))
def test_check_my_op_retyping_the_callers_x_is_named_through_the_worker(how):
    fn = Loopback(OP, RETYPING[how]).function("check_my_op")
    result = selfcheck.check_check_my_op(fn, np.random.default_rng(0))
    assert (result.passed, result.misconception) == (False, "modified-input"), result.message
    assert "became float64" in result.message, result.message


def test_check_my_op_on_a_copy_passes_through_the_worker():
    fn = Loopback(OP, RIGHT).function("check_my_op")
    assert selfcheck.check_check_my_op(fn, np.random.default_rng(0)).passed
