"""What a run reports is its own: an earlier run's documents and feedback for a renamed file
are moved aside or removed, never reported; a submission cut short by the whole-submission
time limit says so everywhere (the CSV's status, the summary, the class report, feedback).

Real ``autograder grade`` runs: rejected files for the reruns (the otter runner: nothing runs),
the sealed runner for the cut.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from notebooks import ROOT, grade_rows

ASSIGNMENT = "autograd-exercises"
CLI = [sys.executable, "-m", "autograder"]


def cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def reported(out) -> dict[str, set[str]]:
    """The files each report of ``out`` speaks of."""
    a = out / ASSIGNMENT
    lines = (a / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {"csv": set(grade_rows(out)[ASSIGNMENT]) - {"points-per-question"},
            "jsonl": {json.loads(line)["file"] for line in lines},
            "results": {p.name[: -len(".json")] for p in (a / "results").rglob("*.json")},
            "feedback": {p.stem + ".ipynb" for p in (a / "feedback").rglob("*.md")}}


@pytest.mark.slow
def test_a_renamed_file_leaves_nothing_stale_in_the_reports(tmp_path):
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    for name in ("a.ipynb", "keep.ipynb"):
        (folder / name).write_text("{")  # rejected: a row, a document, feedback; nothing runs
    # the otter runner starts nothing for files that never run (docker-fork, the default,
    # starts its judge container in each run: seconds)
    grade = ["grade", "-a", ASSIGNMENT, "-p", str(folder), "-o", str(out), "--seed", "4",
             "--runner", "otter"]
    cli(*grade)
    (folder / "a.ipynb").rename(folder / "b.ipynb")
    proc = cli(*grade)
    want = {"b.ipynb", "keep.ipynb"}
    assert all(files == want for files in reported(out).values()), reported(out)
    assert "moved to" in proc.stdout and "not reported" in proc.stdout
    moved = list((out / ASSIGNMENT / "stale").rglob("a.ipynb.json"))  # moved, not deleted
    assert len(moved) == 1 and json.loads(moved[0].read_text())["file"] == "a.ipynb"
    assert sorted(p.name for p in folder.iterdir()) == ["b.ipynb", "keep.ipynb"]

    # a partial run keeps the documents of the files it lists, and only those
    (folder / "c.ipynb").write_text("{")
    (folder / "keep.ipynb").unlink()
    cli(*grade, "--only", "c.ipynb")
    want = {"b.ipynb", "c.ipynb"}
    assert all(files == want for files in reported(out).values()), reported(out)
    assert len(list((out / ASSIGNMENT / "stale").rglob("keep.ipynb.json"))) == 1


@pytest.mark.extended
@pytest.mark.slow
@pytest.mark.needs_root
def test_a_slow_notebook_cut_by_the_submission_limit_says_so_everywhere(tmp_path):
    """The solution with a slow last cell, under a 15 s limit for the whole submission: not
    "Completed", and every place says it was the whole submission's limit, not one step's."""
    # the quick solution, graded beside it, needs about 3 s alone: 5x that beside another
    # grading job on 2 cores; the slow one waits out the whole limit, so no more than that
    limit = 15
    nb = json.loads((ROOT / "solutions" / f"{ASSIGNMENT}.ipynb").read_text())
    nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": "import time\ntime.sleep(60)"})
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    (folder / "slow.ipynb").write_text(json.dumps(nb))
    shutil.copyfile(ROOT / "solutions" / f"{ASSIGNMENT}.ipynb", folder / "quick.ipynb")
    proc = cli("grade", "-p", str(folder), "-o", str(out), "--seed", "4", "--runner", "sealed",
               "--jobs", "2", "--timeout", "30", "--submission-timeout", str(limit))
    rows = grade_rows(out)[ASSIGNMENT]
    assert rows["quick.ipynb"]["grading_status"] == "Completed"  # untouched by the other
    status = rows["slow.ipynb"]["grading_status"]
    assert status.startswith("Timed out (the whole submission's time limit)"), status
    assert f"{limit} s for all its cells and tests" in status
    assert "1 timed out (the whole submission's time limit" in proc.stdout
    assert "slow.ipynb" in proc.stdout.split("timed out")[-1]
    a = out / ASSIGNMENT
    doc = json.loads((a / "results" / "slow.ipynb.json").read_text())
    assert doc["status"] == "graded-timed-out"
    page = (a / "feedback" / "slow.md").read_text()
    assert "time limit for the whole submission" in page  # the student reads what happened
    everything = json.dumps(doc) + page
    assert "one cell or one call" not in everything and "one step" not in everything
    report = (a / "report" / "class_report.html").read_text()
    assert 'id="troubles"' in report and "time limit for the whole submission" in report
