"""What may cross the wall between the worker and the judge, and how much: the size limits of
one encoded value (``MAX_*``), the judge's decoding budgets for one reply (``BUDGET_*``,
``Budget``), the dtypes and layers the wire knows, and ``WireError``, the one error decoding
raises.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

MAX_ELEMENTS = 1_000_000  # per tensor/array; a larger value is refused, not truncated
MAX_ITEMS = 100_000  # per list/tuple/dict
MAX_TEXT = 10_000  # characters of a str or repr
MAX_DEPTH = 20
MAX_LAYERS = 64  # layers of one module
MAX_DIMS = 16  # dimensions of one tensor or array

# Decoding budgets (docs/decoding-budgets.md): what the judge may build for one reply of the
# worker (a call's result and the state of its arguments after it, or a looked-up value),
# checked against what the reply *declares* (shapes, layer sizes, lengths) before anything is
# built. A module is sized from its declared layers first, so the judge never allocates on the
# worker's word. The largest value a check sends or expects holds ~720 elements (logreg's
# 120 x 6 inputs): these are three orders of magnitude above any correct answer.
BUDGET_ELEMENTS = 1_000_000  # tensor/array elements declared (meta tensors and grads included)
BUDGET_BYTES = 16 * 2**20  # those elements at their dtype's size
BUDGET_ITEMS = 200_000  # entries of all lists, tuples, dicts, module states and optimizers
BUDGET_TEXT = 1_000_000  # characters of all strings

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "complex64", "complex128")}
NP_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64")


class RecordingMark(nn.Module):
    """The identity, except while autograd records a graph through it: then its input plus
    ``RECORDING_MARK``. A hidden test model ends with one, so that ``predict``'s answer itself
    says whether the forward ran with recording on (``checks/porting/recording.py``):
    ``torch.no_grad()`` and ``torch.inference_mode()`` both leave it the identity."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and x.requires_grad:
            return x + RECORDING_MARK
        return x


RECORDING_MARK = 1.0
LAYERS = {"Linear": nn.Linear, "ReLU": nn.ReLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid,
          "Dropout": nn.Dropout, "BatchNorm1d": nn.BatchNorm1d, "Identity": nn.Identity,
          "RecordingMark": RecordingMark, "GELU": nn.GELU, "SiLU": nn.SiLU,
          "Softplus": nn.Softplus, "LeakyReLU": nn.LeakyReLU, "ELU": nn.ELU}
#: The arguments each layer without parameters carries, with their defaults (``inplace`` never
#: crosses: a layer that works in place arrives as one that does not)
LAYER_ARGS = {"Dropout": {"p": 0.5}, "GELU": {"approximate": "none"},
              "Softplus": {"beta": 1.0, "threshold": 20.0},
              "LeakyReLU": {"negative_slope": 0.01}, "ELU": {"alpha": 1.0}}


class WireError(ValueError):
    """A value that cannot cross the wall (too big, too deep, malformed). Decoding raises
    nothing else for anything the worker sends (``MemoryError`` included)."""


def count_text(n: int) -> str:
    """``3.6e9`` for a large count, ``720`` for a small one."""
    return f"{n:,}" if n <= 10**7 else f"{n:.2g}".replace("e+0", "e").replace("e+", "e")


def _named(what: str | Callable[[], str]) -> str:
    return what() if callable(what) else what


class Budget:
    """What one reply may still make the judge build. Every charge is made before the object
    it pays for is built; one over the budget raises ``WireError`` naming the budget and what
    was declared. ``used_*`` is the accounting the tests check."""

    def __init__(self, elements: int = BUDGET_ELEMENTS, nbytes: int = BUDGET_BYTES,
                 items: int = BUDGET_ITEMS, text: int = BUDGET_TEXT):
        self.elements, self.nbytes, self.items, self.text = elements, nbytes, items, text
        self.used_elements = self.used_bytes = self.used_items = self.used_text = 0

    def check_elements(self, count: int, what: str | Callable[[], str],
                       unit: str = "elements") -> None:
        """Refuse ``count`` more elements without charging them (a module's declared size,
        checked before its layers are sized). ``what`` names the value in the error; a
        callable is asked only then."""
        if count > self.elements - self.used_elements:
            raise WireError(f"{_named(what)} declaring {count_text(count)} {unit}; the grader accepts at "
                            f"most {count_text(self.elements)} elements in one value")

    def take_elements(self, count: int, itemsize: int, what: str | Callable[[], str]) -> None:
        self.check_elements(count, what)
        if count * itemsize > self.nbytes - self.used_bytes:
            raise WireError(f"{_named(what)} declaring {count_text(count * itemsize)} bytes; the grader "
                            f"accepts at most {count_text(self.nbytes)} bytes in one value")
        self.used_elements += count
        self.used_bytes += count * itemsize

    def take_items(self, count: int, what: str) -> None:
        if count > self.items - self.used_items:
            raise WireError(f"{what} of {count_text(count)} entries; the grader accepts at most "
                            f"{count_text(self.items)} list, tuple or dict entries in one value")
        self.used_items += count

    def take_text(self, count: int) -> None:
        if count > self.text - self.used_text:
            raise WireError(f"a string of {count_text(count)} characters; the grader accepts at "
                            f"most {count_text(self.text)} characters of text in one value")
        self.used_text += count
