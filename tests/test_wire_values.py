"""Values cross the wire exactly: every dtype the wire knows, bit for bit (NaN, infinities,
-0.0, subnormals), views with their strides and offsets, and numpy arrays."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.worker import wire

SPECIALS = [0.0, -0.0, 1.0, -1.5, float("nan"), float("inf"), float("-inf"), 1e-40, 3.0e38,
            0.1, 1 / 3]


def _bits(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().view(torch.uint8).numpy().tobytes()


def _sample(dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.tensor([True, False, True])
    if dtype.is_complex:
        return torch.tensor([complex(a, b) for a, b in zip(SPECIALS, reversed(SPECIALS))],
                            dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor(SPECIALS, dtype=dtype)
    info = torch.iinfo(dtype)
    return torch.tensor([info.min, -1 if info.min else 0, 0, 1, info.max], dtype=dtype)


@pytest.mark.parametrize("name", sorted(wire.DTYPES))
def test_every_dtype_round_trips_bit_for_bit(name):
    sent = _sample(wire.DTYPES[name])
    got = wire.decode(wire.encode(sent))
    assert got.dtype == sent.dtype and got.shape == sent.shape
    assert _bits(got) == _bits(sent)


def test_views_keep_their_strides_and_the_storage_they_reach():
    base = torch.arange(24.0).reshape(4, 6)
    for view in (base.t(), base[1:, ::2], base[:, 2], torch.ones(1).expand(5, 3)):
        got = wire.decode(wire.encode(view))
        assert got.stride() == view.stride() and torch.equal(got, view)


def test_a_view_that_reaches_more_storage_crosses_as_a_view_of_a_base():
    """A strided slice or an offset view arrives as a view of a 1-D base holding the storage
    it reaches, as the caller's has a base (a count by ``t._base`` sees it); a tensor that
    reaches no more than its own elements arrives with none."""
    base = torch.arange(24.0).reshape(4, 6)
    for view, reach in ((base[::2], 18), (base[1::2], 24), (base[1:], 24), (base[:, 2], 21)):
        got = wire.decode(wire.encode(view))
        assert got._base is not None and got._base.shape == (reach,), (view.stride(), got._base)
        assert got.stride() == view.stride() and torch.equal(got, view)
        assert got.storage_offset() == view.storage_offset()
    for whole in (base, base.t(), torch.ones(1).expand(5, 3), torch.zeros(0, 3)):
        assert wire.decode(wire.encode(whole))._base is None


def test_grads_and_parameters_round_trip():
    p = torch.nn.Parameter(torch.tensor([-0.0, 2.5]))
    p.grad = torch.tensor([float("nan"), -0.0])
    got = wire.decode(wire.encode(p))
    assert isinstance(got, torch.nn.Parameter) and _bits(got) == _bits(p)
    assert _bits(got.grad) == _bits(p.grad)


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("name", wire.NP_DTYPES)
def test_numpy_arrays_round_trip_bit_for_bit(name):
    dtype = np.dtype(name)
    sent = (np.array([0, 1, 0, 1], dtype=dtype) if dtype.kind == "b" else
            np.array(SPECIALS, dtype=dtype) if dtype.kind == "f" else
            np.array([np.iinfo(dtype).min, 0, 1, np.iinfo(dtype).max], dtype=dtype))
    sent = sent[::-1].reshape(-1, 1)  # a non-contiguous view arrives as its values
    got = wire.decode(wire.encode(sent))
    assert got.dtype == sent.dtype and got.shape == sent.shape and got.flags.writeable
    assert got.tobytes() == sent.tobytes()
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    assert not wire.decode(wire.encode(frozen)).flags.writeable


def test_a_frozen_parameter_crosses_frozen():
    """A network with frozen parameters reaches the worker (and comes back) with them frozen:
    decoded, every layer used to be made with parameters that require grad, so a check that
    sent a frozen network would have seen its own flags switched back on."""
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
    net[0].requires_grad_(False)
    net[2].bias.requires_grad_(False)
    back = wire.decode(wire.encode(net))
    assert [p.requires_grad for p in back.parameters()] == [False, False, True, False]
    single = torch.nn.Linear(2, 2).requires_grad_(False)
    assert not any(p.requires_grad for p in wire.decode(wire.encode(single)).parameters())


def test_a_numpy_scalar_no_python_number_holds_crosses_as_what_it_is():
    """rt-3 a19: ``np.longdouble(4.0).item()`` is a longdouble again, so the encoder recursed
    on it until "value nested too deeply", a list of floats of two kinds reported as nested.
    It crosses as an opaque value of its type (the checks then say what it is), never
    read as a number."""
    import fractions

    got = wire.decode(wire.encode([np.longdouble(4.0), fractions.Fraction(8), np.longdouble(12)]))
    assert [type(v).__name__ for v in got] == ["Opaque"] * 3
    assert wire.decode(wire.encode(np.clongdouble(1 + 2j))).type_name == "numpy.clongdouble"
    assert wire.decode(wire.encode([np.float32(1.5), np.uint64(4)])) == [1.5, 4]
