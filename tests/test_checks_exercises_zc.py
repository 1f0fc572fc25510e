"""Blind round zc, autograd-exercises: two calls that changed their argument kept full marks,
in the sealed runner above all (the judge mirrors what the worker reports after a call).

- q2 ``count_saved`` that runs backward after its tracked forward: the counts are right, but
  the caller's network's parameters get a ``.grad`` (growing on every call): named
  ``modified-network``, told that counting needs only the forward. Near-misses: a backward
  whose grads are set back to ``None``, passes; a network frozen
  by the call keeps the general message.
- q5 ``export_numpy`` that runs ``t.data = t.data.contiguous()``: the array is right, but the
  caller's view gets new strides and memory of its own (no longer a view of its base): named
  ``modified-input``. Near-misses: ``t.contiguous()`` into a name of one's own passes.
"""

from __future__ import annotations

import pytest

from autograder.checks.exercises import export, saved, vjp
from autograder.checks.exercises.saved_backward import RAN_BACKWARD
from autograder.checks.seeding import generator
from test_observations import Loopback

_PACK = '''
def count_saved(net, inputs, track):
    calls, nbytes = 0, 0

    def pack(t):
        nonlocal calls, nbytes
        calls += 1
        nbytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            out = {forward}
            {after}
        else:
            with torch.no_grad():
                net(inputs)
    return calls, nbytes
'''


def _saved(after: str, forward: str = "net(inputs)") -> str:
    return _PACK.format(forward=forward, after=after)


BACKWARDS = {
    "out.sum().backward()": _saved("out.sum().backward()"),
    "out.mean().backward()": _saved("out.mean().backward()"),
    "out.backward(ones_like)": _saved("out.backward(torch.ones_like(out))"),
    "squared loss, retain_graph": _saved("(out ** 2).sum().backward(retain_graph=True)"),
    "backward on the first output only": _saved("out[0].sum().backward()"),
}

LEFT_ALONE = {
    "backward, then each p.grad = None": _saved(
        "out.sum().backward()\n            for p in net.parameters():\n"
        "                p.grad = None"),
    "backward, then the grads set back to None": _saved(
        "out.sum().backward()\n            net.zero_grad(set_to_none=True)"),
    "torch.autograd.grad (no .grad written)": _saved(
        "torch.autograd.grad(out.sum(), list(net.parameters()))"),
}

FROZEN = _saved("pass", forward="net(inputs)\n            "
                "[p.requires_grad_(False) for p in net.parameters()]")


def _local(source: str, name: str):
    space = {"__name__": "__main__"}
    exec("import torch\nfrom torch import nn\n" + source, space)
    return space[name]


@pytest.mark.parametrize("how", sorted(BACKWARDS))
@pytest.mark.parametrize("seed", range(2))
def test_a_backward_in_count_saved_is_named(how, seed):
    result = saved.check_count_saved(_local(BACKWARDS[how], "count_saved"), generator(seed),
                                     track=True)
    assert (result.passed, result.misconception) == (False, "modified-network"), result.message
    assert RAN_BACKWARD in result.message and ".grad was set" in result.message, result.message


@pytest.mark.parametrize("how", ["out.sum().backward()", "out.backward(ones_like)"])
def test_a_backward_in_count_saved_is_named_through_the_worker(how):
    fn = Loopback(BACKWARDS[how]).function("count_saved")
    result = saved.check_count_saved(fn, generator(11), track=True)
    assert (result.passed, result.misconception) == (False, "modified-network"), result.message
    assert RAN_BACKWARD in result.message, result.message


@pytest.mark.parametrize("how", sorted(LEFT_ALONE))
def test_a_network_left_alone_passes(how):
    """Right on every network whose parameters require grad; on the frozen hidden case
    (saved_frozen, drawn last) the backward raises, told that counting needs no backward."""
    for fn in (_local(LEFT_ALONE[how], "count_saved"),
               Loopback(LEFT_ALONE[how]).function("count_saved")):
        result = saved.check_count_saved(fn, generator(3), track=True)
        assert not result.passed and "frozen" in result.message, result.message
        assert "needs only the forward, no backward" in result.message, result.message
        assert "does not require grad" in result.message, result.message
        assert result.misconception != "modified-network", result.message


def test_a_frozen_network_keeps_the_general_message():
    for fn in (_local(FROZEN, "count_saved"), Loopback(FROZEN).function("count_saved")):
        result = saved.check_count_saved(fn, generator(3), track=True)
        assert result.misconception == "modified-network", result.message
        assert RAN_BACKWARD not in result.message and "requires_grad" in result.message


_EXPORT = "t.detach().cpu().numpy().copy()"

RELAID = {
    "t.data = t.data.contiguous()": f'''
def export_numpy(t):
    if not t.is_contiguous():
        t.data = t.data.contiguous()
    return {_EXPORT}
''',
    "t.data = t.data.clone(contiguous_format)": f'''
def export_numpy(t):
    t.data = t.data.clone(memory_format=torch.contiguous_format)
    return {_EXPORT}
''',
    "t.set_ on a contiguous copy": f'''
def export_numpy(t):
    if not t.is_contiguous():
        with torch.no_grad():
            t.set_(t.detach().contiguous())
    return {_EXPORT}
''',
}

KEPT = {
    "t.contiguous() into a name of its own": '''
def export_numpy(t):
    c = t.detach().contiguous()
    return c.cpu().numpy().copy()
''',
    "np.array of the detached tensor": '''
import numpy as np
def export_numpy(t):
    return np.array(t.detach().cpu().numpy(), copy=True)
''',
}


@pytest.mark.parametrize("how", sorted(RELAID))
@pytest.mark.parametrize("seed", range(2))
def test_a_view_given_new_memory_is_named(how, seed):
    result = export.check_independent(_local(RELAID[how], "export_numpy"), generator(seed))
    assert (result.passed, result.misconception) == (False, "modified-input"), result.message
    assert "replaced t's storage" in result.message, result.message


@pytest.mark.parametrize("how", sorted(RELAID))
def test_a_view_given_new_memory_is_named_through_the_worker(how):
    fn = Loopback(RELAID[how]).function("export_numpy")
    result = export.check_independent(fn, generator(11))
    assert (result.passed, result.misconception) == (False, "modified-input"), result.message
    assert "replaced t's storage" in result.message, result.message


@pytest.mark.parametrize("how", sorted(KEPT))
def test_an_export_that_leaves_t_alone_passes(how):
    for fn in (_local(KEPT[how], "export_numpy"),
               Loopback(KEPT[how]).function("export_numpy")):
        assert export.check_independent(fn, generator(4)).passed


LOWER = {
    "float32 leaf and weights, cast back": '''
def vjp_square(x, weights):
    leaf = x.detach().to(torch.float32).requires_grad_()
    (leaf ** 2).backward(weights.to(torch.float32))
    return leaf.grad.to(x.dtype)
''',
    ".float() then .double()": '''
def vjp_square(x, weights):
    leaf = x.detach().float().clone().requires_grad_(True)
    v = leaf * leaf
    v.backward(weights.float())
    return leaf.grad.to(dtype=x.dtype)
''',
    "bfloat16": '''
def vjp_square(x, weights):
    leaf = x.detach().to(torch.bfloat16).requires_grad_()
    (leaf ** 2).backward(weights.to(torch.bfloat16))
    return leaf.grad.to(x.dtype)
''',
    "float16": '''
def vjp_square(x, weights):
    leaf = x.detach().half().requires_grad_()
    (leaf ** 2).backward(weights.half())
    return leaf.grad.type(x.dtype)
''',
}

NOT_LOWER = {
    "right": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad
''',
    "off by a constant": '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad + 1e-6
''',
    "float32 except on three entries (not on a second input)": '''
def vjp_square(x, weights):
    dtype = torch.float32 if x.numel() != 3 else x.dtype
    leaf = x.detach().to(dtype).requires_grad_()
    (leaf ** 2).backward(weights.to(dtype))
    return leaf.grad.to(x.dtype)
''',
}


@pytest.mark.parametrize("how", sorted(LOWER))
@pytest.mark.parametrize("seed", range(3))
def test_a_pullback_in_a_lower_precision_is_named(how, seed):
    result = vjp.check_vjp(_local(LOWER[how], "vjp_square"), generator(seed))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message
    assert "inputs. " in result.message and "significant bits" in result.message, result.message


def test_a_pullback_in_float32_is_named_through_the_worker():
    fn = Loopback(LOWER["float32 leaf and weights, cast back"]).function("vjp_square")
    result = vjp.check_vjp(fn, generator(11))
    assert (result.passed, result.misconception) == (False, "low-precision"), result.message


@pytest.mark.parametrize("how", sorted(NOT_LOWER))
@pytest.mark.parametrize("seed", range(3))
def test_other_answers_are_not_named_low_precision(how, seed):
    result = vjp.check_vjp(_local(NOT_LOWER[how], "vjp_square"), generator(seed))
    assert result.misconception != "low-precision", result.message
    if how != "float32 except on three entries (not on a second input)":
        assert result.passed == (how == "right"), result.message
