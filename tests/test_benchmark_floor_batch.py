"""``benchmarks/floor_batch.py``, the floor at N that ``throughput.py`` sets beside stock
``otter grade`` and each mode: it grades real notebooks in forks of one warmed process, and
stops the one that never finishes at the time limit (every mode does), so its time is a
batch's cost before isolation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import notebooks

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.extended]


def test_the_floor_grades_a_batch_and_stops_the_notebook_that_never_finishes(tmp_path):
    folder = tmp_path / "batch" / "autograd-exercises"
    folder.mkdir(parents=True)
    solution = notebooks.solution("autograd-exercises")
    nbformat.write(solution, folder / "correct.ipynb")
    question = sorted(notebooks.answer_cells(solution))[0]
    nbformat.write(notebooks.with_answer(solution, question, "while True:\n    pass\n"),
                   folder / "hangs.ipynb")
    (tmp_path / "batch" / "autograd-porting").mkdir()
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "floor_batch.py"),
                           str(tmp_path / "batch"), "--jobs", "2", "--timeout", "4"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["notebooks"] == 2 and found["killed"] == 1
    # the correct one graded beside the one stopped at 4 s: the batch takes about the limit
    assert 4 <= found["seconds"] < 60
