"""Answers JSON cannot hold, or at the edges of floating point, through the real CLI and the
sealed judge, in one batch with the solution (red-team round rt-1).

Before: a ``vjp_square`` returning a complex tensor stopped the whole run (its evidence held
Python complex numbers and writing its result document raised ``TypeError``: no grade for
anyone), and a ``square_grads`` returning inf or NaN made its submission a grader error that
blamed the grading image. Now each loses its points on its own question, told why, and the
solution beside them keeps full marks.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

#: notebook -> (the cell appended to the solution, its question, a phrase its messages hold)
EDGES = {
    "complex-vjp": ("_right = vjp_square\n"
                    "def vjp_square(x, weights):\n"
                    "    return _right(x, weights).to(torch.complex64) + 1000j\n",
                    "q4_vjp", "complex64"),
    "complex-multipath": ("_right = multipath_grads\n"
                          "def multipath_grads(x0, y0):\n"
                          "    gx, gy = _right(x0, y0)\n"
                          "    return complex(gx, 5), complex(gy, 5)\n",
                          "q3_multipath", "multipath_grads("),
    "inf-square-grads": ("def square_grads(p0, repeats, clear):\n"
                         "    return [float('inf')] * repeats\n",
                         "q1_accumulation", "inf"),
    "nan-multipath": ("def multipath_grads(x0, y0):\n"
                      "    return float('nan'), float('nan')\n",
                      "q3_multipath", "nan"),
}


@pytest.fixture(scope="module")
def graded(build_dir, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("edges-in")
    out = tmp_path_factory.mktemp("edges-out")
    for name, (cell, _, _) in EDGES.items():
        nb = nbformat.read(SOLUTION, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(cell))
        nbformat.write(nb, folder / f"{name}.ipynb")
    (folder / "solution.ipynb").write_bytes(SOLUTION.read_bytes())
    proc = subprocess.run([sys.executable, "-m", "autograder", "--build", str(build_dir),
                           "grade", "-p", str(folder), "-o", str(out), "--seed", "7",
                           "--runner", "sealed", "--no-reports", "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    results = out / ASSIGNMENT / "results"
    docs = {p.name.removesuffix(".ipynb.json"): json.loads(p.read_text())
            for p in results.glob("*.json")}
    with open(out / ASSIGNMENT / "final_grades.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    return {"proc": proc, "docs": docs, "rows": rows}


def test_the_batch_completes_with_every_grade(graded):
    proc = graded["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert set(graded["docs"]) == set(EDGES) | {"solution"}
    assert graded["rows"]["solution.ipynb"]["grading_status"] == "Completed"
    assert float(graded["rows"]["solution.ipynb"]["percent_correct"]) == 1.0


@pytest.mark.parametrize("name", sorted(EDGES))
def test_an_edge_answer_loses_points_on_its_question_only(graded, name):
    _, question, phrase = EDGES[name]
    doc = graded["docs"][name]
    assert doc["status"] == "graded", doc.get("error")
    solution = graded["docs"]["solution"]["questions"]
    for q, value in doc["questions"].items():
        if q == question:
            assert value["points"] < value["possible"], name
            said = json.dumps(value["tests"])
            assert phrase in said, said[:2000]
        else:
            assert value["points"] == solution[q]["points"], (name, q)
    assert graded["rows"][f"{name}.ipynb"]["grading_status"] == "Completed"
