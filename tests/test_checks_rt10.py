"""Red team rt-10's other findings on the exercises: an export in the other byte order
(``'>f4'``) was refused by the wire as an unreadable answer, with no word of byte order; it
now reaches the checks as it is and is told as a byte-order change."""

from __future__ import annotations

import numpy as np
import pytest

import notebooks
from autograder.checks import find
from autograder.checks.seeding import generator
from autograder.worker import wire

ASSIGNMENT = "autograd-exercises"

BIG_ENDIAN = '''
def export_numpy(t):
    a = t.detach().cpu().numpy()
    return a.astype(a.dtype.newbyteorder(">"))
'''


@pytest.mark.parametrize("dtype", [">f4", "<f8", ">i8", ">u2", "float32"])
def test_an_array_in_either_byte_order_crosses_the_wire_as_it_is(dtype):
    a = (np.arange(6) * 3 - 4).astype(dtype).reshape(2, 3)
    back = wire.decode_ndarray(wire.encode_ndarray(a))
    assert back.dtype == a.dtype and np.array_equal(back, a)


@pytest.mark.parametrize("name", [">c8", ">f3", ">S4", "<O", ">f4x", 7])
def test_other_dtype_names_are_still_refused(name):
    encoded = wire.encode_ndarray(np.zeros(2, np.float32))
    encoded["dtype"] = name
    with pytest.raises(wire.WireError):
        wire.decode_ndarray(encoded)


@pytest.mark.parametrize("seed", range(3))
def test_an_export_in_the_other_byte_order_is_told_so(seed):
    fn = notebooks.defined(BIG_ENDIAN, "export_numpy")
    result = find(ASSIGNMENT, "q5_numpy/export_numpy_values")({"export_numpy": fn},
                                                               generator(seed))
    assert not result.passed and result.misconception == "dtype-changed", result.message
    assert "other byte order (big-endian)" in result.message, result.message


@pytest.mark.slow
def test_the_sealed_judge_tells_the_byte_order_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "export_numpy", BIG_ENDIAN)
    doc = notebooks.judged_sealed(nb, tmp_path / "big.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert ("export_numpy_values", "dtype-changed") in notebooks.failed_checks(doc, "q5_numpy")
    assert not notebooks.lost_elsewhere(doc, "q5_numpy")
