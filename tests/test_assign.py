"""Does ``make assign`` reproduce the committed files, and does a broken solution stop it?"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from autograder.authoring.assign import AssignError, assign, differences
from autograder.authoring.layout import ASSIGNMENTS, Layout
from notebooks import ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_committed_templates_match_a_fresh_assign(assignment, tmp_path):
    diffs = differences(assignment, Layout.at(ROOT, tmp_path / "build"))
    assert not diffs, f"run `make assign` and commit: {diffs}"


def test_student_template_holds_no_hidden_test_or_solution(tmp_path):
    for assignment in ASSIGNMENTS:
        folder = ROOT / "student_templates" / assignment
        text = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
        assert "autograder.harness" not in text and "hidden=True" not in text
        assert "BEGIN SOLUTION" not in text and "otter-assign" not in text


def test_a_solution_failing_its_tests_stops_the_build(tmp_path):
    """Is the build stopped when the master's solution fails one of its own tests?"""
    assignment = "autograd-exercises"
    root = tmp_path / "project"
    master = root / "assignments" / assignment / f"{assignment}.ipynb"
    master.parent.mkdir(parents=True)
    nb = nbformat.read(ROOT / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
    for cell in nb.cells:  # break the solution: forget to clear the gradient
        cell.source = cell.source.replace("p.grad = None", "pass")
    nbformat.write(nb, master)
    with pytest.raises(AssignError, match="q1_accumulation"):
        assign(assignment, Layout.at(root), templates=tmp_path / "t", solution=tmp_path / "s.ipynb")
