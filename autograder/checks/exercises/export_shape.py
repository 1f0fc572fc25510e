"""q5_numpy: t's values handed back in another shape (blind round zzi: ``src.squeeze(0)``
whenever the first dimension is 1, "a batch of one example: export the example itself").

An export that reshapes on the way out returns t's exact values, in a shape that is not t's:
size-1 dimensions dropped (``t.squeeze()``, ``squeeze(0)``, ``t[0]``: ``shape-squeezed``),
flattened to one dimension (``ravel()``, ``reshape(-1)``, ``flatten()``: ``shape-flattened``),
the axes reordered (``.T``, ``.mT``, ``permute``: ``shape-transposed``; for a square t the shape
comes out right and the values transposed, ``transposed_values``), size-1 dimensions added
(``[None]``, ``unsqueeze(0)``, ``np.atleast_2d``: ``dimension-added``). Named when exactly one of
these reshapings of t's values gives the answer (``reshapings``). Of a tensor with at most one
dimension over 1, a squeeze and a flatten make the same array: the export is then asked once
more on a tensor of t's dtype and flag with no size-1 dimension (``confirm``); an answer that
keeps that shape squeezes, one that flattens it flattens. The one-element and 0-d tensors keep
the messages of ``export_causes`` (``one_number``, ``dims_added``).

The independence check judges such an array too (``arranged``): writing to it shows whether it
shares t's memory, whatever its shape; its shape is the values check's to charge.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Callable

import numpy as np
import torch

from ..calling import call
from ..result import Verdict

SQUEEZED = "shape-squeezed"
FLATTENED = "shape-flattened"
TRANSPOSED = "shape-transposed"
ADDED = "dimension-added"
_KEEP = "An export keeps t's shape: t.numpy() already has it, so {export} needs no reshaping."


def _drops_ones(longer: tuple[int, ...], shorter: tuple[int, ...]) -> bool:
    """Is ``shorter`` ``longer`` with one or more of its size-1 dimensions left out?"""
    if len(shorter) >= len(longer):
        return False
    j = 0
    for n in longer:
        if j < len(shorter) and n == shorter[j]:
            j += 1
        elif n != 1:
            return False
    return j == len(shorter)


def _permuted(expected: np.ndarray) -> list[np.ndarray]:
    """``expected`` with its axes reordered, every order but its own (the reversed order and
    the last two swapped past 4 dimensions)."""
    ndim = expected.ndim
    if ndim < 2:
        return []
    orders = (itertools.permutations(range(ndim)) if ndim <= 4 else
              (tuple(reversed(range(ndim))), (*range(ndim - 2), ndim - 1, ndim - 2)))
    return [np.transpose(expected, p) for p in orders if list(p) != list(range(ndim))]


def _in_order(got: np.ndarray, expected: np.ndarray) -> bool:
    return got.size == expected.size and np.array_equal(got.reshape(-1), expected.reshape(-1))


def reshapings(got: Any, expected: np.ndarray) -> list[str]:
    """The reshapings of t's values (``expected``) that give ``got`` in a shape not t's."""
    if not isinstance(got, np.ndarray) or got.shape == expected.shape or not got.size \
            or got.size != expected.size:
        return []
    names = []
    in_order = _in_order(got, expected)
    if in_order and _drops_ones(expected.shape, got.shape):
        names.append(SQUEEZED)
    if in_order and expected.ndim >= 2 and got.shape == (expected.size,):
        names.append(FLATTENED)
    if got.ndim == expected.ndim and any(
            p.shape == got.shape and np.array_equal(p, got) for p in _permuted(expected)):
        names.append(TRANSPOSED)
    if in_order and _drops_ones(got.shape, expected.shape):
        names.append(ADDED)
    return names


def arranged(got: Any, expected: np.ndarray) -> bool:
    """Does ``got``, an array, hold t's values in t's order or a reshaping of it?"""
    return isinstance(got, np.ndarray) and (
        _in_order(got, expected) or bool(reshapings(got, expected)))


def _hint(name: str, got: np.ndarray, shape: tuple[int, ...], export: str) -> str:
    keep = _KEEP.format(export=export)
    if name == SQUEEZED:
        return (f" These are t's values, in order, with t's size-1 dimensions left out: "
                f"{got.shape} is t's shape {shape} squeezed (t.squeeze(), squeeze(0), t[0]). A "
                "dimension of size 1 is part of t's shape: a batch of one row is (1, n), not "
                f"(n,), and the caller indexes it so. {keep}")
    if name == FLATTENED:
        return (f" These are t's values, in order, flattened to one dimension (ravel(), "
                f"reshape(-1), flatten(), view(-1)): t has shape {shape}. {keep}")
    if name == TRANSPOSED:
        return (f" These are t's values with its axes reordered: the array is t transposed "
                f"(.T, .mT, permute, np.transpose), shape {got.shape} for t's {shape}. {keep}")
    return (f" These are t's values, in order, with size-1 dimensions added: {got.shape} is "
            f"t's shape {shape} with dimensions of size 1 put in ([None], unsqueeze(0), "
            f"np.expand_dims, np.atleast_2d). {keep}")


def shape_cause(got: np.ndarray, t: torch.Tensor, expected: np.ndarray,
                export: str) -> tuple[str, str]:
    """``(hint, name)`` for an array of another shape than t's: the reshaping named when
    exactly one gives it, else what was established (``"wrong-shape"``)."""
    names = reshapings(got, expected)
    shape = tuple(t.shape)
    if len(names) == 1:
        return _hint(names[0], got, shape, export), names[0]
    if set(names) == {SQUEEZED, FLATTENED}:
        return (f" These are t's values, in order, without t's size-1 dimensions: {got.shape} "
                f"is what both t.squeeze() and t.ravel() make of t's shape {shape}. "
                f"{_KEEP.format(export=export)}"), "wrong-shape"
    if _in_order(got, expected):
        return (f" These are t's values, in t's order, in another shape. "
                f"{_KEEP.format(export=export)}"), "wrong-shape"
    return "", "wrong-shape"


def transposed_values(got: np.ndarray, t: torch.Tensor, expected: np.ndarray,
                      export: str) -> str:
    """What an export of t's shape is told whose values are t's with its axes reordered (t
    square: ``.T`` keeps its shape); ``""`` otherwise."""
    if got.shape != expected.shape or np.array_equal(got, expected) or not any(
            p.shape == got.shape and np.array_equal(p, got) for p in _permuted(expected)):
        return ""
    where = " (entry [i, j] is t[j, i])" if t.dim() == 2 else ""
    return (f" These are t's values with its axes reordered (.T, .mT, permute, np.transpose): "
            f"t has shape {tuple(t.shape)}, so the array comes out in t's shape, but its "
            f"entries are in other places{where}. {_KEEP.format(export=export)}")


def _probe(t: torch.Tensor) -> torch.Tensor:
    """A tensor of t's dtype, ``requires_grad`` and number of dimensions (at least 2) with no
    dimension of size 1 and distinct values: (2, 3), (2, 3, 4), ..."""
    shape = tuple(range(2, 2 + max(t.dim(), 2)))
    values = torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape)
    if not t.dtype.is_floating_point:
        return values.to(t.dtype)
    return (values * 1.5 - 4).to(t.dtype).requires_grad_(t.requires_grad)


def confirm(verdict: Verdict, export_numpy: Callable, got: Any, t: torch.Tensor,
            expected: np.ndarray, shown: str, export: str) -> Verdict:
    """``verdict`` named ``SQUEEZED`` or ``FLATTENED`` when a squeeze and a flatten both give
    ``got`` and one more call, on a tensor with no size-1 dimension (``_probe``), tells them
    apart; else ``verdict`` as it is."""
    if verdict.misconception != "wrong-shape" or \
            set(reshapings(got, expected)) != {SQUEEZED, FLATTENED}:
        return verdict
    probe = _probe(t)
    want = probe.detach().numpy().copy()
    answer, failure = call(export_numpy, "export_numpy", probe)
    if failure is not None or not isinstance(answer, np.ndarray):
        return verdict
    if answer.shape == want.shape and np.array_equal(answer, want):
        name, fact = SQUEEZED, f"it kept the shape {want.shape}: only size-1 dimensions go"
    elif reshapings(answer, want) == [FLATTENED]:
        name, fact = FLATTENED, f"it came back flat too, shape {answer.shape}"
    else:
        return verdict
    return dataclasses.replace(verdict, misconception=name, message=(
        f"{shown} returned shape {got.shape}; expected t's shape {tuple(t.shape)}."
        f"{_hint(name, got, tuple(t.shape), export)} (Asked once more, on a tensor of shape "
        f"{want.shape} with no size-1 dimension, {fact}.)"))
