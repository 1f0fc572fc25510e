"""Red-team round rt-s3 (a hurried TA, blind): the output folder's run record is what keeps a
stopped, lost or mixed run from being exported as if it were whole.

- A regrade stopped by a signal (a closed terminal, SIGTERM) left each document it graded
  beside the older rows: ``report`` exported the old grade to Canvas beside the new feedback
  page, exit 0. ``grading.json`` says ``finished: false`` until a run ends, and ``report``
  refuses such a folder.
- ``--resume`` kept documents drawn with the stopped run's old seed, and after
  ``grading.json`` was deleted it drew a fresh seed and kept every document: a document of
  another seed is graded again, and an unknown seed is refused unless ``--seed`` gives it.
- Another folder graded into a class's output replaced its documents of the same names: it
  is refused unless ``--replace`` says it is a new download of that class.
- ``--shard`` into a whole run's output rewrote its CSV with one shard: refused.
- ``report --feedback score`` was forgotten by the next run: it is recorded.
- The zygote's start counted against the first submission's time limit: its worker is made
  before its time starts.
"""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from notebooks import ROOT
from test_partial_runs import folder_with

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
#: a blind round's notebook that loses points on q3 only (gradients rounded to 4 decimals)
ROUNDED = ROOT / "tests" / "files" / "blind" / "round-zzp" / ASSIGNMENT / "zzp-ex-02.ipynb"


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def grade(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return cli("grade", "-p", str(folder), "-o", str(out), "--runner", "sealed", "--jobs", "1",
               *extra)


def slow_copy(tmp_path: Path, seconds: int) -> Path:
    """The solution with a first cell that sleeps ``seconds``."""
    notebook = json.loads(SOLUTION.read_text())
    code = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")
    notebook["cells"].insert(code, {"cell_type": "code", "metadata": {}, "outputs": [],
                                    "execution_count": None,
                                    "source": f"import time\ntime.sleep({seconds})"})
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / ASSIGNMENT / "final_grades.csv", newline="") as f:
        return {r["file"]: r for r in csv.DictReader(f)}


def seeds(out: Path) -> dict[str, int]:
    return {p.name: json.loads(p.read_text())["seed"]
            for p in (out / ASSIGNMENT / "results").rglob("*.json")}


def test_a_regrade_stopped_by_a_signal_is_not_exported_and_resume_finishes_it(tmp_path):
    folder = folder_with(tmp_path, "in", aa=SOLUTION, zz=SOLUTION)
    out = tmp_path / "out"
    first = grade(folder, out, "--seed", "1")
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads((out / "grading.json").read_text())["finished"] is True
    old = seeds(out)
    shutil.copy(ROUNDED, folder / "aa.ipynb")  # aa resubmits a wrong answer
    shutil.copy(slow_copy(tmp_path, 60), folder / "zz.ipynb")  # zz's regrade is under way...
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "-p", str(folder),
                             "-o", str(out), "--runner", "sealed", "--jobs", "1", "--seed", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 300
        while seeds(out).get("aa.ipynb.json") == old["aa.ipynb.json"]:
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)  # ...when the terminal closes
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert json.loads((out / "grading.json").read_text())["finished"] is False
    assert float(rows(out)["aa.ipynb"]["percent_correct"]) == 1.0  # the old row, still there
    report = cli("report", "-o", str(out))
    assert report.returncode == 4, report.stdout + report.stderr
    assert "stopped before it finished" in report.stdout, report.stdout
    assert not (out / ASSIGNMENT / "canvas_gradebook.csv").exists()
    # --resume grades zz (never reached) and nothing of the old seed is kept
    shutil.copy(SOLUTION, folder / "zz.ipynb")
    resumed = grade(folder, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "with seed 2" in resumed.stdout
    assert seeds(out)["zz.ipynb.json"] != old["zz.ipynb.json"]
    assert float(rows(out)["aa.ipynb"]["percent_correct"]) < 1.0
    assert json.loads((out / "grading.json").read_text())["finished"] is True
    with open(out / ASSIGNMENT / "canvas_gradebook.csv", newline="") as f:
        canvas = {r["SIS User ID"]: r for r in csv.DictReader(f)}
    assert canvas, "the finished run is exported"


def test_resume_regrades_documents_of_another_seed_and_refuses_an_unknown_seed(tmp_path):
    folder = folder_with(tmp_path, "in", aa=SOLUTION, bb=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "1", "--no-reports").returncode == 0
    old = seeds(out)
    (out / "grading.json").write_text("{not json")
    refused = grade(folder, out, "--resume", "--no-reports")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "seed of the run" in refused.stderr and "--seed" in refused.stderr
    assert seeds(out) == old
    # given another seed, every kept document is of the old one: graded again, and said
    again = grade(folder, out, "--resume", "--seed", "7", "--no-reports")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "grading 2 submission(s)" in again.stdout, again.stdout
    assert again.stdout.count("with another seed") == 2, again.stdout
    assert all(seeds(out)[name] != old[name] for name in old)
    # the same seed again: nothing to grade
    kept = grade(folder, out, "--resume", "--no-reports")
    assert "grading 0 of 2" in kept.stdout, kept.stdout


def test_another_folder_into_a_class_output_is_refused_unless_it_replaces_the_run(tmp_path):
    section1 = folder_with(tmp_path, "s1", alice=SOLUTION, bob=SOLUTION)
    section2 = folder_with(tmp_path, "s2", alice=ROUNDED)
    out = tmp_path / "out"
    assert grade(section1, out, "--seed", "1", "--no-reports").returncode == 0
    before = (out / ASSIGNMENT / "results" / "alice.ipynb.json").read_bytes()
    refused = grade(section2, out, "--no-reports")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--replace" in refused.stderr and str(section1.resolve()) in refused.stderr
    assert (out / ASSIGNMENT / "results" / "alice.ipynb.json").read_bytes() == before
    replaced = grade(section2, out, "--replace", "--no-reports")
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    assert "replaces the run of" in replaced.stdout
    assert set(rows(out)) == {"points-per-question", "alice.ipynb"}


def test_a_shard_into_a_whole_runs_output_is_refused(tmp_path):
    folder = folder_with(tmp_path, "in", aa=SOLUTION, bb=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "3", "--no-reports").returncode == 0
    csv_before = (out / ASSIGNMENT / "final_grades.csv").read_bytes()
    refused = grade(folder, out, "--shard", "1/2", "--seed", "3", "--resume")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "holds a run of the whole folder" in refused.stderr
    assert (out / ASSIGNMENT / "final_grades.csv").read_bytes() == csv_before
    shard = tmp_path / "shard1"
    assert grade(folder, shard, "--shard", "1/2", "--seed", "3").returncode == 0
    whole = grade(folder, shard, "--resume", "--no-reports")
    assert whole.returncode == 2 and "holds shard 1/2" in whole.stderr, whole.stderr
    # the merged output is a whole run too: no shard goes into it, a --resume does
    assert grade(folder, tmp_path / "shard2", "--shard", "2/2", "--seed", "3").returncode == 0
    merged = tmp_path / "merged"
    assert cli("merge", str(shard), str(tmp_path / "shard2"), "-o", str(merged),
               "--no-reports").returncode == 0
    refused = grade(folder, merged, "--shard", "2/2", "--seed", "3", "--resume")
    assert refused.returncode == 2 and "holds a run of the whole folder" in refused.stderr
    resumed = grade(folder, merged, "--resume", "--no-reports")
    assert resumed.returncode == 0 and "grading 0 of 2" in resumed.stdout, resumed.stdout


def test_the_feedback_detail_report_was_given_is_kept_by_the_next_run(tmp_path):
    folder = folder_with(tmp_path, "in", aa=ROUNDED)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "4").returncode == 0
    page = out / ASSIGNMENT / "feedback" / "aa.md"
    assert "expected" in page.read_text()
    assert cli("report", "-o", str(out), "--feedback", "score").returncode == 0
    assert "expected" not in page.read_text()
    assert json.loads((out / "grading.json").read_text())["feedback"] == "score"
    shutil.copy(SOLUTION, folder / "late.ipynb")  # a late student, then the usual resume
    assert grade(folder, out, "--resume").returncode == 0
    assert "expected" not in page.read_text()


def test_the_first_submissions_worker_is_made_before_its_time_starts():
    from autograder.running.judge.core import grading_limits
    from autograder.running.judge.spares import Spares
    from autograder.running.limits import Limits

    spares = Spares(grading_limits(Limits(call_timeout=30, submission_timeout=300)))
    try:
        with spares.take() as slot:
            assert slot.worker is not None and slot.worker.proc.poll() is None
    finally:
        spares.close()


def test_two_roster_rows_of_one_student_are_refused_and_a_path_row_still_wins_a_name_row():
    """Rows ``alice,1001`` and ``alice.ipynb,1003`` exported alice as 1003 and listed 1001 as
    "did not submit"; one student written twice is refused now. A path row over a name row
    stays the way to tell two folders' ``hw.ipynb`` apart, whether or not the name row's
    student submitted."""
    from autograder.running.outputs.roster import match

    with pytest.raises(ValueError, match="both name alice.ipynb"):
        match(["alice.ipynb", "bob.ipynb"], {"alice": "1001", "alice.ipynb": "1003", "bob": "7"})
    with pytest.raises(ValueError, match="both name sec1/alice.ipynb"):
        match(["sec1/alice.ipynb"], {"alice.ipynb": "1", "alice": "2"})
    assert match(["sec1/hw.ipynb", "sec2/hw.ipynb"], {"sec1/hw.ipynb": "1", "hw.ipynb": "2"}) \
        == ({"sec1/hw.ipynb": "sec1/hw.ipynb", "hw.ipynb": "sec2/hw.ipynb"}, [])
    assert match(["sec1/hw.ipynb"], {"sec1/hw.ipynb": "1", "hw.ipynb": "2"}) \
        == ({"sec1/hw.ipynb": "sec1/hw.ipynb"}, ["hw.ipynb"])


def test_written_scores_of_a_renamed_resubmission_are_said_not_applied(tmp_path):
    """A student resubmits the same notebook under another name: the scores given by hand
    under the old name cannot follow it (two students may write the same answer), and the run
    says so instead of counting them silently among those not graded yet."""
    folder = folder_with(tmp_path, "in", carol=ROOT / "submissions" / ASSIGNMENT /
                         "ada-lovelace.ipynb")
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "6").returncode == 0
    scores = tmp_path / "scores.csv"
    scores.write_text("file,question,points,comment\ncarol.ipynb,q1_written,1,good\n")
    merged = cli("report", "-o", str(out), "--written", str(scores))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "given for files this run does not hold" not in merged.stdout
    (folder / "carol.ipynb").rename(folder / "carol-v2.ipynb")
    resumed = grade(folder, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert ("1 score(s) given for files this run does not hold (carol.ipynb q1_written): not "
            "applied") in resumed.stdout, resumed.stdout


def test_a_file_staff_left_among_the_feedback_pages_is_moved_aside_not_deleted(tmp_path):
    folder = folder_with(tmp_path, "in", bob=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "8").returncode == 0
    note = out / ASSIGNMENT / "feedback" / "bob-notes.md"
    note.write_text("talk to bob about q3\n")
    assert cli("report", "-o", str(out)).returncode == 0
    assert not note.exists() and (out / ASSIGNMENT / "feedback" / "bob.md").is_file()
    kept, = (out / ASSIGNMENT / "stale").rglob("bob-notes.md")
    assert kept.read_text() == "talk to bob about q3\n" and kept.parent.name == "feedback"


def test_a_resume_with_nothing_to_resume_and_a_regrade_that_drops_the_roster_say_so(tmp_path):
    folder = folder_with(tmp_path, "in", aa=SOLUTION)
    out = tmp_path / "out"
    first = grade(folder, out, "--resume", "--no-reports")  # the wrong -o, or a first run
    assert first.returncode == 0, first.stderr[-2000:]
    assert "nothing to resume in" in first.stdout, first.stdout
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\naa,1001\n")
    other = tmp_path / "out2"
    assert grade(folder, other, "--roster", str(roster), "--no-reports").returncode == 0
    again = grade(folder, other, "--no-reports")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "was graded with a roster (1 row(s)); this run has none" in again.stdout


def test_a_file_deleted_during_the_run_is_a_row_saying_so_not_a_grader_error(tmp_path):
    folder = folder_with(tmp_path, "in", zz=SOLUTION)
    shutil.copy(slow_copy(tmp_path, 8), folder / "aa.ipynb")  # graded first, for 8 s
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "-p", str(folder),
                             "-o", str(out), "--runner", "sealed", "--jobs", "1", "--seed", "9",
                             "--no-reports"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not (out / "grading.json").exists():  # written just before the first is graded
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        (folder / "zz.ipynb").unlink()  # staff tidy the folder while aa is graded
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, stdout + stderr
    row = rows(out)["zz.ipynb"]
    assert "moved or deleted during the run" in json.dumps(row) or \
        "moved or deleted during the run" in (out / ASSIGNMENT / "results" /
                                              "zz.ipynb.json").read_text()


PORTING_SOLUTION = ROOT / "solutions" / "autograd-porting.ipynb"


def test_a_partial_run_after_an_a_run_keeps_its_assignment_and_lists_the_others(tmp_path):
    # rt-s3: `--only hw` after a `-a` run took up the folder's other assignment and wrote a
    # grades CSV for it that listed none of its notebooks, and dropped them from unplaced.csv
    folder = folder_with(tmp_path, "in", hw=SOLUTION, po=PORTING_SOLUTION)
    (folder / "late.IPYNB").write_bytes(SOLUTION.read_bytes())
    out = tmp_path / "out"
    first = grade(folder, out, "-a", ASSIGNMENT, "--no-reports")
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads((out / "grading.json").read_text())["assignment"] == ASSIGNMENT
    again = grade(folder, out, "--only", "hw", "--no-reports")
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"using -a {ASSIGNMENT}, recorded in" in again.stdout
    assert not (out / "autograd-porting").exists()
    with open(out / "unplaced.csv", newline="") as f:
        unplaced = {r["file"]: r["reason"] for r in csv.DictReader(f)}
    assert "'autograd-porting', not 'autograd-exercises'" in unplaced["po.ipynb"]
    assert "rename it to end in .ipynb, in lower case" in unplaced["late.IPYNB"]
    assert rows(out)["hw.ipynb"]["total_points_earned"] == "21"
    # another -a in a partial run grades that assignment too; the record then names none
    other = grade(folder, out, "--only", "po", "-a", "autograd-porting", "--no-reports")
    assert other.returncode == 0, other.stderr[-2000:]
    assert json.loads((out / "grading.json").read_text())["assignment"] is None
    assert (out / "autograd-porting" / "final_grades.csv").is_file()


def test_a_row_whose_result_document_was_deleted_is_said_at_report(tmp_path):
    # rt-s3: a deleted document took its student's feedback page with it, in silence
    folder = folder_with(tmp_path, "in", a=SOLUTION, b=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--no-reports").returncode == 0
    (out / ASSIGNMENT / "results" / "b.ipynb.json").unlink()
    report = cli("report", "-o", str(out))
    assert report.returncode == 4, report.stdout + report.stderr
    assert "1 row(s) of final_grades.csv have no result document in results/ (b.ipynb)" \
        in report.stdout, report.stdout
    assert (out / ASSIGNMENT / "feedback" / "a.html").is_file()
    assert rows(out)["b.ipynb"]["total_points_earned"] == "21"  # the row keeps its grade
    again = grade(folder, out, "--only", "b")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (out / ASSIGNMENT / "feedback" / "b.html").is_file()


def test_a_row_edited_by_hand_is_said_at_report(tmp_path):
    # rt-s3: a hand-edited row was exported as edited, in silence, and the next run undid it
    folder = folder_with(tmp_path, "in", a=SOLUTION, b=SOLUTION)
    out = tmp_path / "out"
    assert grade(folder, out, "--no-reports").returncode == 0
    csv_path = out / ASSIGNMENT / "final_grades.csv"
    text = csv_path.read_text()
    csv_path.write_text(text.replace("a.ipynb,5,", "a.ipynb,3,").replace(
        "b.ipynb,5,4,4,4,4,21,", "b.ipynb,5,4,4,4,4,25,"))
    report = cli("report", "-o", str(out))
    assert report.returncode == 0, report.stdout + report.stderr
    assert ("2 row(s) of final_grades.csv differ from their result documents (edited by "
            "hand?): a.ipynb (q1_accumulation 3, its document 5, total 21, its points 19); "
            "b.ipynb (total 25, its points 21)") in report.stdout, report.stdout
    clean = cli("report", "-o", str(grade_again(folder, out)))
    assert "differ from their result documents" not in clean.stdout, clean.stdout


def grade_again(folder: Path, out: Path) -> Path:
    proc = grade(folder, out, "--only", "a", "--no-reports")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out
