"""A name the tests look up that the notebook spelt otherwise: the feedback says which name a
cell defines instead, and which character only looks right (``reporting/near_names``)."""

from __future__ import annotations

import pytest

from autograder.checks import all_checks, contract_names
from autograder.reporting import feedback
from autograder.reporting.near_names import difference, near_name
from autograder.running.resultdoc import KIND, SCHEMA_VERSION, ResultDoc
from notebooks import judged_sealed, solution

CYRILLIC_E = "\u0435"


def test_does_the_plain_list_of_names_match_what_the_checks_read():
    for assignment, checks in all_checks().items():
        needs = {name for check in checks.values() for name in check.needs}
        assert set(contract_names.NAMES[assignment]) == needs, assignment


@pytest.mark.parametrize("defined, found", [
    (["square_grad", "torch"], "square_grad"),      # a letter left out
    (["squareGrads"], "squareGrads"),               # camel case
    (["export_to_numpy", "np"], "export_to_numpy"),  # a word added
    ([f"count_sav{CYRILLIC_E}d"], f"count_sav{CYRILLIC_E}d"),  # a look-alike character
])
def test_is_a_near_name_found(defined, found):
    wanted = "count_saved" if CYRILLIC_E in found else (
        "export_numpy" if "numpy" in found else "square_grads")
    assert near_name(wanted, defined) == found


@pytest.mark.parametrize("wanted, defined, taken", [
    ("predict", ["predictions", "preds"], ()),  # another word, not a misspelling
    ("my_op", ["MyOp"], ("MyOp", "my_op")),      # a name the tests read themselves
    ("vjp_square", ["torch", "nn", "x", "y"], ()),
])
def test_is_an_unrelated_name_left_alone(wanted, defined, taken):
    assert near_name(wanted, defined, taken) is None


def test_does_the_difference_name_the_look_alike_character():
    told = difference("count_saved", f"count_sav{CYRILLIC_E}d")
    assert told == f"character 10 is '{CYRILLIC_E}' (U+0435 CYRILLIC SMALL LETTER IE), not 'e'"
    assert difference("square_grads", "square_grad") is None  # a misspelling shows itself


def _not_defined(name: str, cells: list[dict]) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "a.ipynb",
           "assignment": "autograd-porting", "seed": 3, "status": "graded", "problems": [],
           "notebook": {"cells": cells},
           "questions": {"q3_gradcheck": {"points": 0.0, "possible": 1.0, "tests": [{
               "name": "q3_gradcheck - 2", "hidden": True, "passed": False, "points": 0.0,
               "possible": 1.0, "message": f"{name} is not defined: write it in the cell for "
               "q3_gradcheck and run that cell before grading. [grading seed 3]",
               "checks": [{"check": "forward", "misconception": "not-defined",
                           "fault": "student", "passed": False}]}]}}}
    return feedback.render_markdown(feedback.build(ResultDoc.from_dict(doc, "the test's")))


def test_is_a_contract_name_never_offered_for_another():
    cell = {"index": 3, "status": "ok", "defines": ["MyOp", "torch"],
            "name": "the cell defining MyOp"}
    md = _not_defined("my_op", [cell])
    assert "my_op is not defined: write it in the cell" in md  # the message as it was
    cell["defines"] = ["MyOp", "myop"]
    md = _not_defined("my_op", [cell])
    assert "my_op is not defined: the cell defining MyOp defines myop. The tests look" in md


@pytest.mark.slow
@pytest.mark.needs_root
def test_does_a_graded_notebook_hear_which_name_it_misspelt(zips, tmp_path):
    nb = solution("autograd-exercises")
    for cell in nb.cells:
        cell.source = cell.source.replace("def count_saved(", f"def count_sav{CYRILLIC_E}d(")
        cell.source = cell.source.replace("def square_grads(", "def square_grad(")
    doc = judged_sealed(nb, tmp_path / "typed.ipynb", "autograd-exercises",
                        zips["autograd-exercises"], seed=5)
    assert doc.questions["q2_saved"].points == 0 and doc.questions["q1_accumulation"].points == 0
    assert doc.questions["q3_multipath"].points == doc.questions["q3_multipath"].possible
    md = feedback.render_markdown(feedback.build(doc))
    assert f"count_saved is not defined: the cell defining count_sav{CYRILLIC_E}d, " in md
    assert (f" defines count_sav{CYRILLIC_E}d, which looks like count_saved but is another "
            f"name to Python: character 10 is '{CYRILLIC_E}' (U+0435 CYRILLIC SMALL LETTER "
            "IE), not 'e'.") in md
    assert "square_grads is not defined: the cell defining square_grad, " in md
    assert " defines square_grad. The tests look each name up" in md
    assert "rename it square_grads and run that cell again" in md
