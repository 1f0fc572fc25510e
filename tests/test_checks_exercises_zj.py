"""Blind round zj, autograd-exercises: three answers whose feedback missed the cause.

- q2 ``count_saved`` memoised per ``(repr(net), inputs.shape, track)``: ``repr`` shows no
  dtype, so a float64 copy of a float32 network on a batch of the same shape got the float32
  counts, and kept full marks. A hidden case, drawn last, asks the same architecture in the
  other dtype right after the first network: named ``counts-cached``, told that the key does
  not see the dtype. Near-misses: a key with the dtype (or the network object) passes.
- q5 ``export_numpy`` returning ``t.detach().cpu().numpy() * 1``: a NumPy scalar for a 0-d
  tensor, told the ``.item()`` hint it never earned. Named ``zero-dim-scalar``, told that
  arithmetic on a 0-d array returns a scalar. Near-miss: ``.copy()`` keeps a 0-d array.
- q4 ``vjp_square`` returning ``leaf.grad.squeeze()``: ``wrong-shape`` now says a dimension of
  size 1 was dropped. Near-miss: a flattened 2-D gradient is not told that.
"""

from __future__ import annotations

import pytest

from autograder.checks.exercises import export, saved, vjp, vjp_untouched
from autograder.checks.exercises.saved_cached import CACHED
from autograder.checks.seeding import generator
from test_observations import Loopback


def _local(source: str, name: str):
    space = {"__name__": "__main__"}
    exec("import torch\nimport numpy as np\nfrom torch import nn\n" + source, space)
    return space[name]


_COUNT = '''
def _count(net, inputs, track):
    calls, nbytes = 0, 0

    def pack(t):
        nonlocal calls, nbytes
        calls += 1
        nbytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(bool(track)):
            net(inputs)
    return calls, nbytes
'''


def _keyed(key: str) -> str:
    return _COUNT + f'''
_memo = {{}}

def count_saved(net, inputs, track):
    key = {key}
    if key not in _memo:
        _memo[key] = _count(net, inputs, track)
    return _memo[key]
'''


BLIND_DTYPE = {
    "repr(net), shape, track": _keyed("(repr(net), tuple(inputs.shape), track)"),
    "str(net), shape, track": _keyed("(str(net), inputs.shape, bool(track))"),
    "layer sizes and batch size": _keyed(
        "(tuple((m.in_features, m.out_features) for m in net if isinstance(m, nn.Linear)), "
        "tuple(type(m).__name__ for m in net), inputs.shape[0], track)"),
    "repr and numel": _keyed("(repr(net), inputs.numel(), track)"),
}

SEES_DTYPE = {
    "repr(net), shape, dtype, track": _keyed(
        "(repr(net), tuple(inputs.shape), inputs.dtype, track)"),
    "repr(net), shape, weight dtype": _keyed(
        "(repr(net), tuple(inputs.shape), next(net.parameters()).dtype, track)"),
    "no cache": _COUNT + "\ncount_saved = _count\n",
}


@pytest.mark.parametrize("how", sorted(BLIND_DTYPE))
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_a_cache_blind_to_the_dtype_is_named(how, track, seed):
    result = saved.check_count_saved(_local(BLIND_DTYPE[how], "count_saved"), generator(seed),
                                     track=track)
    if not track:  # nothing is saved untracked, in either dtype: (0, 0) is right
        assert result.passed, result.message
        return
    assert not result.passed and result.misconception == CACHED, result.message
    for words in ("does not see the dtype", "float32", "float64"):
        assert words in result.message, result.message


@pytest.mark.parametrize("how", ["repr(net), shape, track", "layer sizes and batch size"])
def test_a_cache_blind_to_the_dtype_is_named_through_the_worker(how):
    fn = Loopback(BLIND_DTYPE[how]).function("count_saved")
    result = saved.check_count_saved(fn, generator(11), track=True)
    assert not result.passed and result.misconception == CACHED, result.message


@pytest.mark.parametrize("how", sorted(SEES_DTYPE))
@pytest.mark.parametrize("seed", range(3))
def test_a_key_that_sees_the_dtype_passes(how, seed):
    for track in (True, False):
        result = saved.check_count_saved(_local(SEES_DTYPE[how], "count_saved"),
                                         generator(seed), track=track)
        assert result.passed, result.message
    fn = Loopback(SEES_DTYPE[how]).function("count_saved")
    assert saved.check_count_saved(fn, generator(seed), track=True).passed


SCALARS = {
    "numpy() * 1": "def export_numpy(t):\n    return t.detach().cpu().numpy() * 1\n",
    "numpy() + 0": "def export_numpy(t):\n    return t.detach().numpy() + 0\n",
    "a[()]": "def export_numpy(t):\n    a = t.detach().clone().numpy()\n"
             "    return a[()] if a.ndim == 0 else a\n",
    "a.sum() on a 0-d array": "def export_numpy(t):\n    a = t.detach().cpu().numpy().copy()\n"
                              "    return a.sum() if a.ndim == 0 else a\n",
    "np.multiply": "def export_numpy(t):\n    return np.multiply(t.detach().numpy(), 1)\n",
}

ARRAYS = {
    ".copy()": "def export_numpy(t):\n    return t.detach().cpu().numpy().copy()\n",
    "np.array(copy=True)": "def export_numpy(t):\n    return np.array(t.detach().cpu().numpy(), "
                           "copy=True)\n",
}


@pytest.mark.parametrize("how", sorted(SCALARS))
@pytest.mark.parametrize("seed", range(3))
def test_a_numpy_scalar_for_a_zero_dim_tensor_is_told_why(how, seed):
    result = export.check_export(_local(SCALARS[how], "export_numpy"), generator(seed))
    assert not result.passed and result.misconception == "zero-dim-scalar", result.message
    assert "leave NumPy" not in result.message, result.message
    for words in ("NumPy scalar", "0-d array", ".copy()"):
        assert words in result.message, result.message
    other = export.check_independent(_local(SCALARS[how], "export_numpy"), generator(seed))
    assert other.passed or other.misconception == "zero-dim-scalar", other.message


def test_a_python_number_for_a_zero_dim_tensor_is_told_both_routes():
    """A Python number (.item(), or the sealed judge's wire's rendering of a NumPy scalar):
    the message names both routes, so it never blames a call the export did not make."""
    fn = _local("def export_numpy(t):\n    return t.item() if t.dim() == 0 else "
                "t.detach().numpy().copy()\n", "export_numpy")
    result = export.check_export(fn, generator(0))
    assert not result.passed and result.misconception == "zero-dim-scalar", result.message
    assert ".item()" in result.message and "NumPy scalar" in result.message, result.message


def test_a_numpy_scalar_is_named_through_the_worker():
    fn = Loopback(SCALARS["numpy() * 1"]).function("export_numpy")
    result = export.check_export(fn, generator(0))
    assert not result.passed and result.misconception == "zero-dim-scalar", result.message


@pytest.mark.parametrize("how", sorted(ARRAYS))
@pytest.mark.parametrize("seed", range(3))
def test_a_zero_dim_array_passes(how, seed):
    fn = _local(ARRAYS[how], "export_numpy")
    assert export.check_export(fn, generator(seed)).passed
    assert export.check_independent(fn, generator(seed)).passed


_VJP = '''
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    leaf.pow(2).backward(weights)
    g = leaf.grad
    return {ret}
'''

DROPPED = {
    ".squeeze()": "g.squeeze()",
    ".flatten()": "g.flatten() if 1 in g.shape else g",
    ".view(-1)": "g.view(-1) if 1 in g.shape else g",
    "[0] on a leading 1": "g[0] if g.dim() > 1 and g.shape[0] == 1 else g",
    ".squeeze(-1)": "g.squeeze(-1)",
}


@pytest.mark.parametrize("how", sorted(DROPPED))
@pytest.mark.parametrize("seed", range(4))
def test_a_dropped_size_one_dimension_is_told(how, seed):
    result = vjp.check_vjp(_local(_VJP.format(ret=DROPPED[how]), "vjp_square"),
                           generator(seed))
    if result.passed:  # no x of the drawn shapes had a size-1 dimension where it drops one
        assert how == ".squeeze(-1)", result.message
        return
    if result.misconception == "wrong-shape":
        assert "a dimension of size 1 was dropped" in result.message, result.message


def test_the_blind_squeeze_is_told_on_seed_11():
    fn = _local(_VJP.format(ret="g.squeeze()"), "vjp_square")
    result = vjp.check_vjp(fn, generator(11))
    assert result.misconception == "wrong-shape", result.message
    assert "a dimension of size 1 was dropped" in result.message, result.message
    # the leaves-inputs check judges x and the weights only: the shape is this check's to
    # charge (it charged it a second time, as wrong-type, before)
    assert vjp_untouched.check_untouched(fn, generator(11)).passed


def test_a_flattened_matrix_is_not_told_a_size_one_drop():
    fn = _local(_VJP.format(ret="g.flatten() if all(n > 1 for n in g.shape) else g"),
                "vjp_square")
    for seed in range(4):
        result = vjp.check_vjp(fn, generator(seed))
        if not result.passed:
            assert "size 1 was dropped" not in result.message, result.message
