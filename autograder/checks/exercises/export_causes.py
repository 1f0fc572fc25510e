"""q5_numpy: causes told for two exports of blind round zb.

A one-element tensor exported as one number (``np.array(t.item())``, ``np.array(float(t))``,
``t.squeeze()``): an array of shape () holding t's value, told why its shape is wrong
(``one_number``). A tensor whose ``requires_grad`` flag was switched off to get past
``.numpy()`` (``t.requires_grad_(False)``, switched back or not): torch refuses it for a
non-leaf t, named ``requires-grad-toggled`` (``toggled``). Of round zf: an export that raised
on the 0-d tensor, asked after every tensor with dimensions had exported right (rows iterated,
``t[0]``, ``len(t)``), named ``zero-dim-unhandled`` (``zero_dim_raised``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..result import Verdict
from .common import renamed

TOGGLED = "requires-grad-toggled"
ZERO_DIM_UNHANDLED = "zero-dim-unhandled"
_REFUSED = "only change requires_grad flags of leaf variables"


def one_number(got: Any, t: torch.Tensor, expected: np.ndarray, export: str) -> str:
    """What an export is told whose answer is an array of shape () holding the value of ``t``,
    a tensor of one element with dimensions; ``""`` otherwise."""
    if not (isinstance(got, np.ndarray) and got.shape == () and t.numel() == 1 and t.dim()
            and np.array_equal(got.reshape(expected.shape), expected)):
        return ""
    return (f" The value is right but the array has no dimensions: t has one element, and it "
            "was taken out as one number (t.item(), float(t), t.squeeze()) and made into an "
            f"array, which drops t's dimensions. Export the tensor itself: {export} keeps t's "
            f"shape {tuple(t.shape)}, for one element as for many.")


def toggled(failure: Verdict, t: torch.Tensor, export: str) -> Verdict:
    """``failure`` (a raise) named ``TOGGLED`` when it is torch refusing to switch the flag of
    ``t``, a non-leaf tensor that requires grad; else ``failure`` as it is."""
    if failure.misconception != "raised" or _REFUSED not in failure.message or t.is_leaf \
            or not t.requires_grad:
        return failure
    return renamed(failure, TOGGLED, (
        "t is not a leaf (a view, or a result computed from a leaf that requires grad), and "
        "torch lets only a leaf's requires_grad flag be switched: t.requires_grad_(False) "
        "raised. Even on a leaf, switching the flag changes the caller's tensor (and anything "
        "that reads it meanwhile), not a copy. Leave t's flags alone and export a detached "
        f"tensor: t.detach() is a new tensor with t's values and no grad, so {export} works "
        "for every t."))


def draw_one_element(rng: np.random.Generator) -> torch.Tensor:
    """A tensor of one element that has dimensions, (1,) or (1, 1): float32, float64 (tracked
    or not) or int64. Drawn last in ``check_export``, so the cases before it keep their
    values for a seed."""
    shape = ((1,), (1, 1))[int(rng.integers(2))]
    dtype = (torch.float32, torch.float64, torch.int64)[int(rng.integers(3))]
    if dtype == torch.int64:
        return torch.from_numpy(rng.integers(-50, 50, size=shape))
    values = torch.from_numpy(rng.uniform(-10.0, 10.0, size=shape)).to(dtype)
    return values.requires_grad_(bool(rng.integers(2)))


def draw_zero_dim(rng: np.random.Generator) -> torch.Tensor:
    """A 0-d tensor (a scalar, as a loss is): float32, float64 (tracked or not) or int64. Drawn
    after ``draw_one_element``, last in ``check_export``."""
    dtype = (torch.float32, torch.float64, torch.int64)[int(rng.integers(3))]
    if dtype == torch.int64:
        return torch.tensor(int(rng.integers(-50, 50)))
    value = torch.tensor(float(rng.uniform(-10.0, 10.0)), dtype=dtype)
    return value.requires_grad_(bool(rng.integers(2)))


def dims_added(got: Any, t: torch.Tensor, expected: np.ndarray, export: str) -> str:
    """What an export is told whose answer holds the value of ``t``, a 0-d tensor, in an
    array with dimensions; ``""`` otherwise."""
    if not (isinstance(got, np.ndarray) and t.dim() == 0 and got.size == 1 and got.shape
            and np.array_equal(got.reshape(()), expected)):
        return ""
    return (f" The value is right but the array has shape {got.shape}: t is 0-d (a tensor "
            "with no dimensions, as a loss is), and the export added dimensions "
            "(np.atleast_1d, np.ascontiguousarray, reshape(-1), [value]). NumPy has 0-d "
            "arrays too: "
            f"{export} keeps shape ().")


def zero_dim_raised(failure: Verdict, t: torch.Tensor, export: str) -> Verdict:
    """``failure`` (a raise) named ``ZERO_DIM_UNHANDLED`` when ``t`` is 0-d: ``check_export``
    asks the 0-d tensor last, so every tensor with dimensions before it exported right; else
    ``failure`` as it is."""
    if failure.misconception != "raised" or t.dim() != 0:
        return failure
    return renamed(failure, ZERO_DIM_UNHANDLED, (
        "t is 0-d (a tensor with no dimensions, as a loss is), and every tensor with "
        "dimensions before it exported right: something in the export needs a dimension "
        "(iterating over t's rows, t[0], len(t), unbind). NumPy has 0-d arrays too: "
        f"{export} handles every shape, shape () included."))


def raised_cause(failure: Verdict, t: torch.Tensor, export: str) -> Verdict:
    """``failure`` named by the first of ``toggled`` and ``zero_dim_raised`` that applies."""
    return zero_dim_raised(toggled(failure, t, export), t, export)
