"""Can a student check their work the two ways the notebook tells them to: ``otter check`` on
the command line and ``grader.check(...)`` inside the notebook, with only the public tests?"""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.authoring.layout import ASSIGNMENTS
from notebooks import ROOT

pytestmark = pytest.mark.slow


def otter_check(notebook, tests, workdir):
    """``otter check`` on a copy of ``notebook`` in ``workdir`` (otter writes a log beside it)."""
    copy = workdir / notebook.name
    shutil.copyfile(notebook, copy)
    proc = subprocess.run([sys.executable, "-m", "otter", "check", str(copy), "-t", str(tests)],
                          capture_output=True, text=True, timeout=300, cwd=workdir)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_otter_check_passes_the_solution_and_explains_the_template(assignment, tmp_path):
    tests = ROOT / "student_templates" / assignment / "tests"
    code, out = otter_check(ROOT / "solutions" / f"{assignment}.ipynb", tests, tmp_path)
    assert code == 0 and "All tests passed!" in out, out
    (tmp_path / "t").mkdir()
    code, out = otter_check(ROOT / "student_templates" / assignment / f"{assignment}.ipynb", tests,
                            tmp_path / "t")
    assert code == 0 and "❌ Test case failed" in out and "Traceback" not in out, out


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grader_check_cells_in_a_kernel(assignment, tmp_path):
    """Does Restart & Run All on the completed notebook show every grader.check as passed?"""
    folder = tmp_path / assignment
    shutil.copytree(ROOT / "student_templates" / assignment, folder)
    nb = nbformat.read(ROOT / "solutions" / f"{assignment}.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    checks = [c for c in nb.cells if c.cell_type == "code" and "grader.check(" in c.source]
    assert checks
    for cell in checks:
        text = "".join(str(o.get("data", {}).get("text/plain", "")) + o.get("text", "")
                       for o in cell.outputs)
        assert "passed" in text and "failed" not in text, (cell.source, text)
