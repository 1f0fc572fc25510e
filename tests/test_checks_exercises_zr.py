"""Blind round zr, autograd-exercises: two answers lost points but were told only part of why.

- q2 ``count_saved`` that runs ``net.float()`` / ``inputs.float()`` first: a float64 network
  reports half its bytes and is left float32 (``Module.float()`` converts in place). Told that
  the values of its parameters changed; now told that their dtype changed, and that
  ``.float()`` / ``.double()`` / ``.to(dtype)`` convert the caller's network in place
  (``modified-network``). Near-misses: a converted copy (wrong counts, network untouched), a
  round trip float64 -> float32 -> float64 (values rounded, dtype kept), a frozen network.
- q4 ``vjp_square`` that hands backward ``weights.flatten()``: right for 1-D x, torch's
  "Mismatch in shape" on 2-D x. Named ``weights-reshaped`` when the raise shows a grad_output of
  the output's size in another shape. Near-misses: ``v.flatten().backward(weights.flatten())``
  (right), a row of the weights of an x of more rows (another size), transposed weights
  (``weights-transposed``). Graded blind, student_03 drew a (1, 3) x: weights[0] gives that
  (3,) too, the same weights in another shape, told the same.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import saved, vjp, vjp_untouched
from autograder.checks.exercises.saved_left_alone import RETYPED_HINT
from autograder.checks.exercises.vjp_flattened import RESHAPED
from autograder.checks.exercises.vjp_transposed import TRANSPOSED
from autograder.checks.seeding import generator
from test_observations import Loopback

_PACK = '''
def count_saved(net, inputs, track):
    {before}
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            {forward}
    {after}
    return len(sizes), int(sum(sizes))
'''


def _saved(before: str = "pass", forward: str = "net(inputs)", after: str = "pass") -> str:
    return _PACK.format(before=before, forward=forward, after=after)


RETYPING = {
    "net.float(); inputs.float()": _saved("net = net.float()\n    inputs = inputs.float()"),
    "net.to(torch.float32)": _saved("net.to(torch.float32)\n    inputs = inputs.float()"),
    "net.to(dtype=float32), no reassignment": _saved(
        "net.to(dtype=torch.float32)\n    inputs = inputs.to(torch.float32)"),
    "net.double(); inputs.double()": _saved("net.double()\n    inputs = inputs.double()"),
    "p.data = p.data.float()": _saved(
        "for p in net.parameters():\n        p.data = p.data.float()\n"
        "    inputs = inputs.float()"),
}

NOT_RETYPED = {
    "a converted copy": _saved("import copy\n    net = copy.deepcopy(net).float()\n"
                               "    inputs = inputs.float()"),
    "a round trip float32 and back": _saved(
        "dtype = next(net.parameters()).dtype\n    net.float()\n    inputs = inputs.float()",
        after="net.to(dtype)"),
    "a frozen network": _saved(forward="net(inputs)\n            "
                               "[p.requires_grad_(False) for p in net.parameters()]"),
}


def _local(source: str, name: str):
    space = {"__name__": "__main__"}
    exec("import torch\nfrom torch import nn\n" + source, space)
    return space[name]


def _functions(source: str, name: str):
    return _local(source, name), Loopback(source).function(name)


@pytest.mark.parametrize("how", sorted(RETYPING))
@pytest.mark.parametrize("seed", range(2))
def test_a_network_converted_in_place_is_told_its_dtype(how, seed):
    for fn in _functions(RETYPING[how], "count_saved"):
        result = saved.check_count_saved(fn, generator(seed), track=True)
        assert (result.passed, result.misconception) == (False, "modified-network"), \
            result.message
        assert RETYPED_HINT in result.message, result.message
        assert "(it was float" in result.message and "became float" in result.message, \
            result.message


@pytest.mark.parametrize("how", sorted(NOT_RETYPED))
def test_near_misses_are_not_told_a_dtype_change(how):
    for fn in _functions(NOT_RETYPED[how], "count_saved"):
        result = saved.check_count_saved(fn, generator(3), track=True)
        assert not result.passed, result.message
        assert RETYPED_HINT not in result.message and "became float" not in result.message, \
            result.message


def test_student_02_is_told_the_dtype_through_the_worker():
    fn = Loopback(RETYPING["net.float(); inputs.float()"]).function("count_saved")
    result = saved.check_count_saved(fn, generator(11), track=True)
    assert result.misconception == "modified-network", result.message
    assert "became float32 (it was float64)" in result.message, result.message


def _backward_with(weights_of, v_of=lambda v: v):
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        v = leaf ** 2
        v_of(v).backward(weights_of(weights))
        return leaf.grad
    return vjp_square


def _grad_outputs(weights_of):
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(leaf * leaf, leaf, grad_outputs=weights_of(weights))
        return grad
    return vjp_square


def _backward_list(x, weights):
    leaf = torch.empty_like(x).copy_(x.detach()).requires_grad_()
    torch.autograd.backward([leaf.mul(leaf)], [weights.flatten()])
    return leaf.grad


FLATTENING = {
    "v.backward(weights.flatten())": _backward_with(lambda w: w.flatten()),
    "v.backward(weights.view(-1))": _backward_with(lambda w: w.view(-1)),
    "v.backward(weights.reshape(-1))": _backward_with(lambda w: w.reshape(-1)),
    "grad_outputs=weights.ravel()": _grad_outputs(lambda w: w.ravel()),
    "torch.autograd.backward([v], [weights.flatten()])": _backward_list,
    "weights.reshape(1, -1)": _backward_with(lambda w: w.reshape(1, -1)),
}


@pytest.mark.parametrize("how", sorted(FLATTENING))
@pytest.mark.parametrize("seed", range(4))
def test_flattened_weights_are_named(how, seed):
    for check in (vjp.check_vjp, vjp_untouched.check_untouched):
        result = check(FLATTENING[how], generator(seed))
        assert (result.passed, result.misconception) == (False, RESHAPED), result.message
        for words in ("Mismatch in shape", "v's shape", "flatten", "Pass weights as they are"):
            assert words in result.message, result.message


def test_student_03_named_through_the_worker():
    source = ('def vjp_square(x, weights):\n'
              '    leaf = torch.empty_like(x).copy_(x.detach()).requires_grad_()\n'
              '    torch.autograd.backward([leaf.mul(leaf)], [weights.flatten()])\n'
              '    return leaf.grad\n')
    remote = vjp.check_vjp(Loopback(source).function("vjp_square"), np.random.default_rng(11))
    assert (remote.passed, remote.misconception) == (False, RESHAPED), remote.message


NOT_FLATTENED = {
    "v.flatten().backward(weights.flatten())": (
        _backward_with(lambda w: w.flatten(), lambda v: v.flatten()), True, None),
    "the first row of the weights (x of more than one row)": (
        _backward_with(lambda w: w[0] if w.dim() == 2 else w), False, "raised"),
    "v.backward(weights.T)": (_backward_with(lambda w: w.T), False, TRANSPOSED),
}


@pytest.mark.parametrize("how", sorted(NOT_FLATTENED))
@pytest.mark.parametrize("seed", range(4))
def test_near_misses_are_not_taken_for_flattened_weights(how, seed):
    """(seed 3 draws a (1, 2) x first, where weights[0] is the weights flattened: skipped)"""
    fn, right, name = NOT_FLATTENED[how]
    result = vjp.check_vjp(fn, generator(seed if seed != 3 else 4))
    assert result.passed == right, result.message
    assert result.misconception != RESHAPED, result.message
    if name == TRANSPOSED:
        assert result.misconception == TRANSPOSED, result.message
