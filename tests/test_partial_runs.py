"""What a hurried TA does to an output folder, through the real CLI (red-team round rt-2):
a resubmission under the same name is graded again by ``--resume`` and in full by
``--question``, never kept or mixed with the old version; a partial run refuses another
submissions folder or another seed than the run it merges into; and two runs never write one
output folder at once."""

from __future__ import annotations

import csv
import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from notebooks import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
#: a blind round's notebook that loses points on q3 only (gradients rounded to 4 decimals)
ROUNDED = ROOT / "tests" / "files" / "blind" / "round-zzp" / ASSIGNMENT / "zzp-ex-02.ipynb"


def grade(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", "-p", str(folder),
                           "-o", str(out), "--runner", "sealed", "--no-reports", *extra],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / ASSIGNMENT / "final_grades.csv", newline="") as f:
        return {r["file"]: r for r in csv.DictReader(f)}


def folder_with(tmp_path: Path, name: str, **notebooks: Path) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for stem, source in notebooks.items():
        shutil.copy(source, folder / f"{stem}.ipynb")
    return folder


def test_resume_grades_a_resubmission_under_the_same_name_again(tmp_path):
    folder = folder_with(tmp_path, "in", hw=ROUNDED, other=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "5").returncode == 0
    assert float(rows(out)["hw.ipynb"]["q3_multipath"]) < 4
    shutil.copy(SOLUTION, folder / "hw.ipynb")  # the student resubmits, same name
    proc = grade(folder, out, "--resume")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "hw.ipynb has changed since" in proc.stdout and "graded again in full" in proc.stdout
    assert "grading 1 of 2" in proc.stdout  # the unchanged one is kept
    assert float(rows(out)["hw.ipynb"]["q3_multipath"]) == 4
    assert float(rows(out)["hw.ipynb"]["percent_correct"]) == 1.0


def test_resume_grades_a_rejected_file_again_once_it_is_a_notebook(tmp_path):
    folder = folder_with(tmp_path, "in", other=SOLUTION)
    (folder / "eve.ipynb").write_text("{ not json")
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "5").returncode == 0
    assert "not a notebook" in rows(out)["eve.ipynb"]["grading_status"]
    shutil.copy(SOLUTION, folder / "eve.ipynb")
    assert grade(folder, out, "--resume").returncode == 0
    assert rows(out)["eve.ipynb"]["grading_status"] == "Completed"
    assert float(rows(out)["eve.ipynb"]["percent_correct"]) == 1.0


def test_one_question_of_a_changed_notebook_is_never_merged_into_the_old_grade(tmp_path):
    folder = folder_with(tmp_path, "in", stu=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "5").returncode == 0
    shutil.copy(ROUNDED, folder / "stu.ipynb")  # a new version: q3 wrong now
    proc = grade(folder, out, "--question", "q4_vjp")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graded again in full" in proc.stdout
    row = rows(out)["stu.ipynb"]
    assert float(row["q3_multipath"]) < 4  # the new version's, not the old one's 4
    # unchanged: --question merges that question alone, as it always did
    proc = grade(folder, out, "--question", "q4_vjp")
    assert proc.returncode == 0 and "has changed since" not in proc.stdout


def test_a_partial_run_refuses_another_folder_or_another_seed(tmp_path):
    one = folder_with(tmp_path, "section-a", hw=ROUNDED)
    two = folder_with(tmp_path, "section-b", hw=SOLUTION)
    out = tmp_path / "out"
    assert grade(one, out, "--seed", "5").returncode == 0
    before = (out / ASSIGNMENT / "final_grades.csv").read_bytes()
    proc = grade(two, out, "--resume")
    assert proc.returncode == 2
    assert f"the run in {out} graded {one.resolve()}" in proc.stderr, proc.stderr
    proc = grade(one, out, "--resume", "--seed", "6")
    assert proc.returncode == 2
    assert "was graded with seed 5" in proc.stderr, proc.stderr
    assert (out / ASSIGNMENT / "final_grades.csv").read_bytes() == before
    assert grade(one, out, "--resume", "--seed", "5").returncode == 0  # the same: fine


def test_a_second_run_into_a_folder_being_written_is_refused(tmp_path):
    folder = folder_with(tmp_path, "in", hw=SOLUTION)
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a run in progress holds it
        proc = grade(folder, out, "--seed", "5")
        assert proc.returncode == 2
        assert "another grading run is writing there now" in proc.stderr, proc.stderr
        assert not (out / ASSIGNMENT).exists()
    finally:
        os.close(fd)
    proc = grade(folder, out, "--seed", "5")  # released (the holder ended): graded
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # nothing of the lock


def test_one_notebook_into_a_class_s_output_is_refused(tmp_path):
    """``-p class/stu.ipynb -o OUT`` where OUT holds the class's run would have moved every
    other grade aside as stale; it is refused, saying how to regrade that one there."""
    folder = folder_with(tmp_path, "class", stu=ROUNDED, other=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "5").returncode == 0
    before = (out / ASSIGNMENT / "final_grades.csv").read_bytes()
    proc = grade(folder / "stu.ipynb", out)
    assert proc.returncode == 2
    assert "--only stu.ipynb" in proc.stderr and "one notebook" in proc.stderr, proc.stderr
    assert (out / ASSIGNMENT / "final_grades.csv").read_bytes() == before
    assert grade(folder / "stu.ipynb", tmp_path / "alone").returncode == 0  # a fresh -o: fine


def test_the_same_file_under_two_names_is_said(tmp_path):
    """``hw.ipynb`` and ``hw (1).ipynb`` with the same bytes (a resubmission beside the first,
    or one notebook handed in by two students): each is graded, and one line says so."""
    folder = folder_with(tmp_path, "in", hw=SOLUTION, other=ROUNDED)
    shutil.copy(SOLUTION, folder / "hw (1).ipynb")
    proc = grade(folder, tmp_path / "out", "--seed", "5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("note: 2 autograd-exercises submissions are the same file, byte for byte "
            "(hw (1).ipynb, hw.ipynb)") in proc.stdout, proc.stdout
    assert set(rows(tmp_path / "out")) >= {"hw.ipynb", "hw (1).ipynb", "other.ipynb"}
