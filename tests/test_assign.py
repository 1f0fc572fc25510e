"""Does ``make assign`` reproduce the committed files, and does a broken solution stop it?"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from autograder.authoring.assign import AssignError, assign, differences
from autograder.authoring.layout import ASSIGNMENTS, Layout
from notebooks import ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_committed_templates_match_a_fresh_assign(assignment, assigned):
    """What ``make check-assign`` checks, on the suite's one fresh otter assign (conftest's
    ``assigned``), not a second one."""
    fresh = assigned[assignment]
    diffs = differences(assignment, Layout.at(ROOT), fresh=(fresh.templates, fresh.solution))
    assert not diffs, f"run `make assign` and commit: {diffs}"


def test_student_template_holds_no_hidden_test_or_solution(tmp_path):
    for assignment in ASSIGNMENTS:
        folder = ROOT / "student_templates" / assignment
        text = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
        assert "autograder.harness" not in text and "hidden=True" not in text
        assert "BEGIN SOLUTION" not in text and "otter-assign" not in text


@pytest.mark.extended
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


@pytest.mark.extended
@pytest.mark.slow
def test_two_graders_on_a_fresh_checkout_build_the_zip_once(tmp_path):
    """Two graders (or two test workers) that start together with no zip must not run otter
    assign into the same folder at once (one of them crashed in CI before the lock)."""
    code = ("import sys; from pathlib import Path; "
            "from autograder.authoring.layout import Layout; "
            "from autograder.running.batch.folder import ensure_zip; "
            "print(ensure_zip('autograd-exercises', Layout.at(sys.argv[1], sys.argv[2])))")
    build = tmp_path / "build"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ROOT), str(build)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sum("building the autograder zip" in out for out in outputs) == 1, outputs
    zips = list(build.glob("autograd-exercises/*.zip"))
    assert [z.name for z in zips] == ["autograd-exercises-autograder.zip"]
