"""q5 ``export_numpy`` that caches its arrays by ``t.data_ptr()`` (red team rt-7): no check
exported the same tensor again after its values had changed, so the stale array never showed
and the function kept 4/4. ``export_numpy_values`` now ends with the first tensor, the same
object, changed in place (as a training step changes a parameter): the stale array is
``answer-cached``, here and through the sealed judge, whose worker keeps the judge's tensor
as the same object between calls."""

from __future__ import annotations

import pytest

import notebooks
from autograder.checks.exercises.export import check_export
from autograder.checks.seeding import generator

ASSIGNMENT = "autograd-exercises"

BY_POINTER = '''
_EXPORTS = {}


def export_numpy(t):
    key = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
    if key not in _EXPORTS:
        _EXPORTS[key] = t.detach().cpu().numpy().copy()
    return _EXPORTS[key].copy()
'''

BY_ID = BY_POINTER.replace("t.data_ptr()", "id(t)")

RIGHT = '''
def export_numpy(t):
    return t.detach().cpu().numpy().copy()
'''


@pytest.mark.parametrize("source", [BY_POINTER, BY_ID])
@pytest.mark.parametrize("seed", range(4))
def test_an_export_cached_for_the_same_tensor_is_named(seed, source):
    result = check_export(notebooks.defined(source, "export_numpy"), generator(seed))
    assert not result.passed and result.misconception == "answer-cached", result.message
    assert "changed in place" in result.message and "t.data_ptr()" in result.message


@pytest.mark.parametrize("seed", range(4))
def test_a_fresh_copy_each_call_keeps_the_point(seed):
    assert check_export(notebooks.defined(RIGHT, "export_numpy"), generator(seed)).passed


@pytest.mark.slow
def test_the_sealed_judge_sees_the_stale_export_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "export_numpy", BY_POINTER)
    doc = notebooks.judged_sealed(nb, tmp_path / "cached.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q5_numpy")
    assert failed == {("export_numpy_values", "answer-cached")}, failed
    assert not notebooks.lost_elsewhere(doc, "q5_numpy")
