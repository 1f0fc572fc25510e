"""What a hurried TA hits with a real folder and the real CLI (red-team round rt-2): a zip
unpacked from a Mac, a link to a folder, a pipe closed early, a report of a run that was
killed, another roster at report time, and small typos. Rejected notebooks and the otter runner
wherever the point is the folder, not the grading: nothing runs, each run costs seconds."""

from __future__ import annotations

import csv
import subprocess

import pytest

from test_staff_workflow import CLI, refused, rows, run

EXERCISES = ["-a", "autograd-exercises", "--runner", "otter", "--seed", "1"]
APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        "


def unplaced(out) -> dict[str, str]:
    with open(out / "unplaced.csv", newline="") as f:
        return {r["file"]: r["reason"] for r in csv.DictReader(f)}


@pytest.mark.slow
def test_is_a_mac_zip_and_a_linked_folder_listed_not_graded(tmp_path):
    """``__MACOSX/`` and ``._ann.ipynb`` are no students (each was a 0/21 row and a Canvas
    row); a link to a folder is not followed, and said, not passed over in silence."""
    subs, elsewhere = tmp_path / "subs", tmp_path / "elsewhere"
    (subs / "__MACOSX").mkdir(parents=True)
    (subs / "sec1").mkdir()
    elsewhere.mkdir()
    (subs / "mallory.ipynb").write_text("{")
    (subs / "._mallory.ipynb").write_bytes(APPLE_DOUBLE)
    (subs / "__MACOSX" / "._mallory.ipynb").write_bytes(APPLE_DOUBLE)
    (subs / "__MACOSX" / "ann.ipynb").write_text("{")
    (elsewhere / "bob.ipynb").write_text("{")
    (subs / "linked").symlink_to(elsewhere)
    (subs / "sec1" / "more").symlink_to(elsewhere)
    proc = run(["grade", "-p", "subs", "-o", "out", *EXERCISES], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert set(rows(tmp_path / "out" / "autograd-exercises" / "final_grades.csv")) == {
        "mallory.ipynb"}
    listed = unplaced(tmp_path / "out")
    assert set(listed) == {"._mallory.ipynb", "__MACOSX/", "linked/", "sec1/more/"}
    assert listed["linked/"] == ("a link to a folder: not followed; copy it in or grade it "
                                 "with -p")
    assert "AppleDouble" in listed["._mallory.ipynb"]
    assert "macOS's zip metadata" in listed["__MACOSX/"]
    assert "not graded (4 file(s) of the folder" in proc.stdout
    canvas = (tmp_path / "out" / "autograd-exercises" / "canvas_gradebook.csv").read_text()
    assert "._mallory" not in canvas and "__MACOSX" not in canvas and "bob" not in canvas


@pytest.mark.slow
def test_does_a_reader_leaving_early_cost_no_file(tmp_path):
    """``grade ... | head -1``: the progress lines stop, the grading and every file do not."""
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "mallory.ipynb").write_text("{")
    proc = subprocess.Popen([*CLI, "grade", "-p", "subs", "-o", "out", *EXERCISES],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()  # before its first line: every write meets a closed pipe
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 0, err[-3000:]
    assert "Traceback" not in err and "Broken pipe" not in err, err[-3000:]
    out = tmp_path / "out" / "autograd-exercises"
    assert set(rows(out / "final_grades.csv")) == {"mallory.ipynb"}
    assert (out / "canvas_gradebook.csv").is_file()
    assert (out / "report" / "class_report.html").is_file()


def _rejected(tmp_path, *names: str):
    (tmp_path / "subs").mkdir()
    for name in names:
        (tmp_path / "subs" / name).write_text("{")


@pytest.mark.slow
def test_is_another_roster_refused_by_report_as_by_grade(tmp_path):
    """The grades were drawn for the recorded roster's ids: ``report --roster other.csv``
    would export them under other ids; refused in one line, the gradebook left as it was."""
    _rejected(tmp_path, "ada.ipynb", "alan.ipynb")
    (tmp_path / "roster.csv").write_text("file,student_id\nada,S1\nalan,S2\n")
    (tmp_path / "other.csv").write_text("file,student_id\nada,S2\nalan,S1\n")
    proc = run(["grade", "-p", "subs", "-o", "out", *EXERCISES, "--roster", "roster.csv"],
               tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    canvas = tmp_path / "out" / "autograd-exercises" / "canvas_gradebook.csv"
    before = canvas.read_text()
    refused(run(["report", "-o", "out", "--roster", "other.csv"], tmp_path),
            "--roster other.csv: the run in out was graded with another roster (2 row(s))")
    assert canvas.read_text() == before
    proc = run(["report", "-o", "out", "--roster", "roster.csv"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert canvas.read_text() == before


def test_is_a_shard_of_none_said_as_such(tmp_path):
    _rejected(tmp_path, "ada.ipynb")
    refused(run(["grade", "-p", "subs", "--shard", "1/0", "--seed", "1"], tmp_path),
            "--shard 1/0: N (the number of shards) must be at least 1")


@pytest.mark.slow
@pytest.mark.needs_root
def test_is_a_written_question_said_to_be_graded_by_hand(tmp_path):
    _rejected(tmp_path, "ada.ipynb")
    refused(run(["grade", "-p", "subs", "-o", "out", "-a", "autograd-exercises",
                 "--runner", "sealed", "--question", "q1_written"], tmp_path),
            "--question q1_written: a written question of autograd-exercises, graded by hand",
            "--written")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("only", ["./subs/ada.ipynb", "subs/ada.ipynb", "ABSOLUTE"])
def test_is_a_path_to_a_file_of_the_folder_accepted_by_only(tmp_path, only):
    _rejected(tmp_path, "ada.ipynb", "alan.ipynb")
    only = str(tmp_path / "subs" / "ada.ipynb") if only == "ABSOLUTE" else only
    proc = run(["grade", "-p", "subs", "-o", "out", *EXERCISES, "--only", only,
                "--no-reports"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "grading 1 of 2 submission(s)" in proc.stdout
    assert set(rows(tmp_path / "out" / "autograd-exercises" / "final_grades.csv")) == {
        "ada.ipynb"}


@pytest.mark.slow
def test_is_a_run_that_did_not_finish_said_by_report_not_skipped(tmp_path):
    """What a run stopped by SIGTERM or a kill leaves: documents written as they were graded,
    and no ``final_grades.csv`` (its first run) or an older one with fewer rows. ``report``
    says so per assignment, exit status 4, and removes the older class-wide reports."""
    _rejected(tmp_path, "ada.ipynb", "alan.ipynb")
    proc = run(["grade", "-p", "subs", "-o", "out", *EXERCISES], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    a = tmp_path / "out" / "autograd-exercises"
    grades = (a / "final_grades.csv").read_text()
    summaries = [a / "report" / "class_report.html", a / "canvas_gradebook.csv",
                 a / "results.jsonl"]
    for older, words in [
            ("".join(line for line in grades.splitlines(True) if "alan" not in line),
             "1 of 2 result document(s) have no row in final_grades.csv"),
            (None, "2 result document(s) and no final_grades.csv")]:
        if older is None:
            (a / "final_grades.csv").unlink()
        else:
            (a / "final_grades.csv").write_text(older)
        assert all(p.is_file() for p in summaries)
        proc = run(["report", "-o", "out"], tmp_path)
        assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
        said = [line for line in proc.stdout.splitlines() if "did not finish" in line]
        assert len(said) == 1 and said[0].startswith("autograd-exercises: not reported"), \
            proc.stdout
        assert words in said[0] and "--resume" in said[0]
        assert "did not finish" in proc.stderr and "Traceback" not in proc.stderr
        assert not any(p.exists() for p in summaries)
        proc = run(["grade", "-p", "subs", "-o", "out", *EXERCISES, "--resume"], tmp_path)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert all(p.is_file() for p in summaries)


@pytest.mark.slow
def test_is_a_folder_of_another_assignment_refused_by_a(tmp_path):
    """``-a autograd-porting`` on a folder of exercises notebooks graded nothing and exited 0
    (every file "for 'autograd-exercises', not ..."): a script saw success. Refused now, in
    one line, before anything is written."""
    (tmp_path / "subs").mkdir()
    for name in ("ada.ipynb", "alan.ipynb"):
        (tmp_path / "subs" / name).write_text(
            '{"cells": [], "metadata": {"otter": {"assignment_name": "autograd-exercises"}}, '
            '"nbformat": 4, "nbformat_minor": 5}')
    refused(run(["grade", "-p", "subs", "-o", "out", "-a", "autograd-porting", "--runner",
                 "otter", "--seed", "1"], tmp_path),
            "-a autograd-porting: no notebook in subs is for autograd-porting (2 for "
            "'autograd-exercises'); grade the folder without -a, or with -a autograd-exercises")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.needs_root
def test_is_a_solution_that_lost_its_metadata_graded_in_full(tmp_path):
    """The solution with its otter metadata stripped, beside the untouched one and a porting
    notebook, no -a: graded as the assignment its first cell opens, full marks, and the run
    says how it was placed (it was a 0/21 row, exported as 0)."""
    import json

    from notebooks import ROOT

    subs = tmp_path / "subs"
    subs.mkdir()
    nb = json.loads((ROOT / "solutions" / "autograd-exercises.ipynb").read_text())
    (subs / "kept.ipynb").write_text(json.dumps(nb))
    del nb["metadata"]["otter"]
    (subs / "stripped.ipynb").write_text(json.dumps(nb))
    (subs / "other.ipynb").write_text((ROOT / "student_templates" / "autograd-porting"
                                       / "autograd-porting.ipynb").read_text())
    proc = run(["grade", "-p", "subs", "-o", "out", "--runner", "sealed", "--seed", "1",
                "--no-reports", "--jobs", "1"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert ("note: stripped.ipynb: no otter assignment_name in its metadata; graded as "
            'autograd-exercises, the notebook its cells open (otter.Notebook("'
            'autograd-exercises.ipynb"))') in proc.stdout
    graded = rows(tmp_path / "out" / "autograd-exercises" / "final_grades.csv")
    assert set(graded) == {"kept.ipynb", "stripped.ipynb"}
    assert graded["stripped.ipynb"]["total_points_earned"] == \
        graded["kept.ipynb"]["total_points_earned"] == "21"
    assert set(rows(tmp_path / "out" / "autograd-porting" / "final_grades.csv")) == {
        "other.ipynb"}
