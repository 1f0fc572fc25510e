"""Issue 14 over a semester: per-student hidden inputs, feedback detail, the class report's
counts and groups, the Canvas export's ids, a quiet terminal.

The slow part grades real notebooks once with the sealed judge (root): two copies of one
notebook with mistakes under different names, the untouched template, and three copies of a
mistake that no check names; then regrades one copy alone with ``--only``.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.checks.seeding import submission_seed
from autograder.reporting import class_report
from autograder.running.batch.progress import RichDisplay, eta_text, summary_lines
from autograder.running.outputs.results import iter_results
from autograder.running.outputs.roster import identity
from conftest import need, root_problem
from notebooks import solution, with_answer

ROOT = Path(__file__).resolve().parent.parent
A = "autograd-exercises"
# a wrong expression (the square path weighted by y / 2) that no check of q3_multipath names
# and no probe explains (x3 every gradient would be named now: probe.scaled)
UNNAMED = '''def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2 * y.detach() / 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0), requires_grad=True)
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * y.detach() + b ** 2).backward()
    return a.grad.item(), b.grad.item()
'''


# ---------------------------------------------------------------- fast: pure functions

def test_is_a_submission_seed_a_stable_function_of_run_seed_and_identity():
    assert submission_seed(3, "path:a/hw.ipynb") == submission_seed(3, "path:a/hw.ipynb")
    assert submission_seed(3, "path:a/hw.ipynb") != submission_seed(3, "path:b/hw.ipynb")
    assert submission_seed(3, "path:a/hw.ipynb") != submission_seed(4, "path:a/hw.ipynb")
    # pinned: sha256, not Python's per-process salted hash()
    assert submission_seed(3, "path:a/hw.ipynb") == submission_seed(3, "path:a/hw.ipynb")
    code = ("from autograder.checks.seeding import submission_seed;"
            "print(submission_seed(3, 'path:a/hw.ipynb'))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": "123"}, check=True)
    assert int(other.stdout) == submission_seed(3, "path:a/hw.ipynb")
    assert 0 <= submission_seed(2**31 - 1, "id:x") < 2**31


def test_is_the_identity_the_roster_id_else_the_path():
    roster = {"alan-turing": "s1"}
    assert identity("a/alan-turing.ipynb", roster) == "id:s1"
    assert identity("a/ada.ipynb", roster) == "path:a/ada.ipynb"
    assert identity("a/ada.ipynb", None) == "path:a/ada.ipynb"


def test_does_the_eta_count_submissions_in_flight():
    # one of two done after 10 s, the other running 120 s into its time limit: never "0:00:02"
    assert eta_text(1, 2, 1, elapsed=130.0, since_last=120.0) == "1 in flight, ETA: waiting on them"
    assert eta_text(2, 10, 2, elapsed=20.0, since_last=1.0) == "2 in flight, ETA 0:01:15"
    assert eta_text(0, 10, 2, elapsed=5.0, since_last=5.0) == "2 in flight, ETA -:--:--"
    assert eta_text(10, 10, 0, elapsed=5.0, since_last=0.0) == "done"


SUMMARY = {"seed": 1234567890, "runner": "docker-fork", "assignments": {
    name: {"submissions": 1234, "graded_now": 1234, "skipped": 0, "possible": 22.5,
           "mean": 17.25, "grader_errors": ["x"] * 12, "student_problems": ["y"] * 345}
    for name in ("autograd-exercises", "autograd-porting")}}


def test_does_the_summary_fit_80_columns():
    assert all(len(line) <= 80 for line in summary_lines(SUMMARY))
    buf = io.StringIO()
    display = RichDisplay(buf)
    display.console.width = 80
    display.finish(SUMMARY)
    lines = buf.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "…" not in buf.getvalue()
    assert any("autograd-exercises" in line and "1234" in line and "345" in line
               for line in lines)


# ---------------------------------------------------------------- slow: real notebooks

def _grade(sub: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", "--root", str(ROOT), "grade", "-p", str(sub),
         "-o", str(out), "--seed", "5", "--runner", "sealed", "--jobs", "2", *extra],
        capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, Path]:
    need(root_problem())
    subs, out = tmp_path_factory.mktemp("subs"), tmp_path_factory.mktemp("class-out")
    mistakes = ROOT / "submissions" / A / "alan-turing.ipynb"
    shutil.copy(mistakes, subs / "first.ipynb")
    (subs / "again").mkdir()
    shutil.copy(mistakes, subs / "again" / "second.ipynb")
    shutil.copy(ROOT / "submissions" / A / "untouched-template.ipynb", subs / "untouched.ipynb")
    # the cell defining count_saved raises before its def: the name is lost by a crash
    broken = with_answer(solution(A), "q2_saved", 'raise RuntimeError("oops")\n\n'
                         + _answer(solution(A), "q2_saved"))
    nbformat.write(broken, subs / "crashed.ipynb")
    unnamed = with_answer(solution(A), "q3_multipath", UNNAMED)
    for n in range(3):
        nbformat.write(unnamed, subs / f"unnamed-{n}.ipynb")
    proc = _grade(subs, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return subs, out


def _answer(nb, question: str) -> str:
    from notebooks import answer_cells

    return nb.cells[answer_cells(nb)[question]].source


def _docs(out: Path) -> dict[str, dict]:
    """The documents as written (JSON), by file."""
    return {d.file: d.to_dict() for d in iter_results(out / A)}


def _hidden_inputs(doc: dict) -> list:
    return [c["evidence"]["inputs"] for q in doc["questions"].values() for t in q["tests"]
            for c in t.get("checks", []) if t["hidden"] and c["evidence"]["inputs"]]


@pytest.mark.extended
@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_do_two_copies_draw_their_own_inputs_and_a_regrade_the_same(batch, tmp_path):
    subs, out = batch
    docs = _docs(out)
    first, second = docs["first.ipynb"], docs["again/second.ipynb"]
    assert first["seed"] == submission_seed(5, "path:first.ipynb")
    assert second["seed"] == submission_seed(5, "path:again/second.ipynb")
    assert _hidden_inputs(first) and _hidden_inputs(first) != _hidden_inputs(second)
    text = (out / A / "feedback" / "first.md").read_text()
    assert f"graded with your own seed {first['seed']}" in text
    # regraded alone: the same inputs, the same document, byte for byte
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    before = (copy / A / "results" / "again" / "second.ipynb.json").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "--root", str(ROOT), "grade", "-p", str(subs),
         "-o", str(copy), "--runner", "sealed", "--only", "again/second.ipynb",
         "--no-reports"], capture_output=True, text=True, check=False)  # seed: the recorded one
    assert proc.returncode == 0, proc.stderr
    assert (copy / A / "results" / "again" / "second.ipynb.json").read_bytes() == before


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_does_the_report_count_only_named_misconceptions(batch):
    _, out = batch
    docs = [class_report.slim(d) for d in iter_results(out / A)]
    untouched = [d for d in docs if d.file == "untouched.ipynb"]
    assert class_report.other_failures(untouched), "the template's failures have rows of their own"
    assert class_report.misconceptions(untouched) == []
    counted = dict(class_report.misconceptions(docs))
    assert counted and all(n <= 2 for n in counted.values())  # first and second only
    others = dict(class_report.other_failures(untouched))
    assert any("unanswered" in k for k in others), others


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_does_feedback_give_the_real_cause_of_a_lost_definition(batch):
    _, out = batch
    text = (out / A / "feedback" / "crashed.md").read_text()
    assert "count_saved was never defined: the cell defining count_saved" in text
    assert "raised RuntimeError: oops before its definition ran" in text
    assert "write it in the cell" not in text
    report = (out / A / "report" / "class_report.html").read_text()
    assert "crashed.ipynb" in report.split('id="troubles"')[1]  # a cell raised: listed


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_does_one_unnamed_mistake_make_one_group_of_three(batch):
    _, out = batch
    groups = class_report.unnamed([class_report.slim(d) for d in iter_results(out / A)])
    same = [g for g in groups if any(f.startswith("unnamed-") for f in g["files"])]
    assert same, groups
    top = same[0]
    assert sorted(top["files"]) == ["unnamed-0.ipynb", "unnamed-1.ipynb", "unnamed-2.ipynb"]
    assert top["check"].startswith("q3_multipath/")
    assert top["signature"] == "wrong values (no constant ratio)"
    assert groups[0] is top or len(groups[0]["files"]) >= 3  # largest first
    html = (out / A / "report" / "class_report.html").read_text()
    assert "wrong values (no constant ratio)" in html


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_does_mistake_detail_leave_every_hidden_input_out(batch, tmp_path):
    _, out = batch
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    proc = subprocess.run([sys.executable, "-m", "autograder", "report", "-o", str(copy),
                           "--feedback", "mistake"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = _docs(copy)["first.ipynb"]
    numbers = {repr(v) for inputs in _hidden_inputs(doc) for v in _flat(inputs)
               if isinstance(v, float) and v not in (0.0, 1.0, 2.0)}
    assert numbers
    for suffix in (".md", ".html"):
        text = (copy / A / "feedback" / f"first{suffix}").read_text()
        leaked = [n for n in numbers if n in text or n[:7] in text]
        assert not leaked, leaked
        assert "p.grad" in text or "…" in text  # the mistakes are still named
    full = (out / A / "feedback" / "first.md").read_text()
    assert any(n[:7] in full for n in numbers)  # the default shows them: the test can fail


def _flat(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _flat(v)
    elif isinstance(x, list):
        for v in x:
            yield from _flat(v)
    else:
        yield x


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_is_a_roster_that_gives_two_files_one_id_refused_before_any_report(batch, tmp_path):
    _, out = batch
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nfirst.ipynb,s1\nagain/second.ipynb,s1\n")
    before = (copy / A / "canvas_gradebook.csv").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "autograder", "report", "-o", str(copy),
                           "--roster", str(roster)], capture_output=True, text=True)
    # the roster itself is refused, before any report is rewritten
    assert proc.returncode == 2
    assert "the id 's1' is also on line 2" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert (copy / A / "canvas_gradebook.csv").read_bytes() == before
    roster.write_text("file,student_id\nfirst.ipynb,s1\n")
    proc = subprocess.run([sys.executable, "-m", "autograder", "report", "-o", str(copy),
                           "--roster", str(roster)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "SIS User ID from the roster for 1 of 7" in proc.stdout
    assert "not in the roster" in proc.stdout and "again/second.ipynb" in proc.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("class")
def test_is_the_class_report_usable_in_a_browser(batch, tmp_path):
    from test_reports_slow import browser

    webdriver, options, driver_path = browser()
    from selenium.webdriver.common.by import By

    _, out = batch
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    page = webdriver.Chrome(options=options,
                            service=webdriver.ChromeService(executable_path=driver_path))
    try:
        page.set_window_size(1280, 900)
        page.get((out / A / "report" / "class_report.html").as_uri())
        width = page.execute_script("return document.documentElement.clientWidth")
        cells = page.find_elements(By.CSS_SELECTOR, "#grades td.status")
        assert len(cells) == 7
        for cell in cells:  # every status cell lies inside the window, nothing scrolled away
            right = page.execute_script("return arguments[0].getBoundingClientRect().right",
                                        cell)
            assert 0 < right <= width and cell.text
        assert page.execute_script("return document.documentElement.scrollWidth") <= width
        links = [a.get_attribute("href")
                 for a in page.find_elements(By.CSS_SELECTOR, "#grades td a")]
        assert len(links) == 7
        for href in links:
            page.get(href)
            assert page.find_element(By.TAG_NAME, "h1").text.startswith("Feedback: ")
    finally:
        page.quit()


@pytest.mark.slow
def test_does_assign_end_with_what_to_commit(assigned):
    """What ``autograder assign`` printed building the suite's own zip (conftest's
    ``assigned``: the CLI on a copy of the master), not a second ``otter assign``."""
    output = assigned[A].output
    lines = output.splitlines()
    tail = lines[lines.index("commit these (git add):"):]
    assert tail == ["commit these (git add):", f"  student_templates/{A}/",
                    f"  solutions/{A}.ipynb"]
    assert "never commit it" in output  # the zip is named as a build output
