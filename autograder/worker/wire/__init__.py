"""Values as plain JSON, both ways: tensors as dtype/shape/strides/values, modules as an
architecture plus their state, anything else unknown as an opaque type name.

Decoding never evaluates code and never unpickles: it builds floats, lists, tensors and known
layers from numbers and names. A float subclass whose ``__eq__`` lies is sent as its plain
float value, so the judge compares the number, not the object.

The package holds the limits and budgets (``limits``), the worker's side (``encoding``) and
the judge's (``decoding``, with ``decoding_arrays``, ``decoding_modules`` and the field checks
they share, ``fields``); its public names are all here: ``wire.encode``, ``wire.decode``,
``wire.Budget``, ``wire.WireError``...
"""

from .decoding import OPTIMIZERS, Opaque, decode, decode_optimizer
from .decoding_arrays import decode_ndarray, decode_tensor
from .decoding_modules import decode_module, set_modes
from .encoding import (
    CHANGES,
    UNCHANGED,
    dtype_name,
    encode,
    encode_module,
    encode_ndarray,
    encode_optimizer,
    encode_tensor,
)
from .limits import (
    BUDGET_BYTES,
    BUDGET_ELEMENTS,
    BUDGET_ITEMS,
    BUDGET_TEXT,
    DTYPES,
    LAYERS,
    MAX_DEPTH,
    MAX_DIMS,
    MAX_ELEMENTS,
    MAX_ITEMS,
    MAX_LAYERS,
    MAX_TEXT,
    NP_DTYPES,
    RECORDING_MARK,
    Budget,
    RecordingMark,
    WireError,
)

__all__ = [
    "BUDGET_BYTES", "BUDGET_ELEMENTS", "BUDGET_ITEMS", "BUDGET_TEXT", "DTYPES", "LAYERS",
    "MAX_DEPTH", "MAX_DIMS", "MAX_ELEMENTS", "MAX_ITEMS", "MAX_LAYERS", "MAX_TEXT",
    "RECORDING_MARK", "RecordingMark",
    "NP_DTYPES", "OPTIMIZERS", "Budget", "Opaque", "WireError", "CHANGES", "UNCHANGED",
    "decode", "decode_module", "decode_ndarray", "decode_optimizer", "decode_tensor",
    "dtype_name", "encode", "encode_module", "encode_ndarray", "encode_optimizer",
    "encode_tensor", "set_modes",
]
