"""Hostile files never stop, exhaust, poison or fool a grading run (the host side).

Not hostile notebook code (``test_adversarial.py``): hostile *files*. A FIFO or a link to
``/dev/zero`` named ``x.ipynb``, JSON nested 100 000 deep, 5000 cells that each raise a long
error, file names that are spreadsheet formulas, matplotlib mathtext or ANSI escapes, an
exception message that closes a Markdown fence. Nothing here is committed: every file is made
in ``tmp_path`` at run time (FIFOs and links cannot be committed).

The fast tests call vetting, the document budget, the CSV, Markdown, plot and console helpers
directly (hypothesis fuzzes vetting). The slow one grades one batch of every kind of file
beside the perfect solution in one real ``autograder grade`` run, with the sealed runner and
with ``docker-fork`` (the default where an engine is), while sampling the memory of the
grader's whole process tree. The files are vetted on the host before any runner sees them;
what the per-notebook ``docker`` runner reads back from a flooding notebook is proven by
test_adversarial.py's ``huge-output``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.running import results, submissions
from autograder.running.names import printable, raw
from autograder.running.names import text as shown
from autograder.running.outputs import cells as csv_cells
from autograder.running.outputs import final_grades
from autograder.running.resultdoc import KIND, SCHEMA_VERSION, Graded, Notebook, Question, ResultDoc
from autograder.running.submissions import find, vet
from notebooks import ROOT
from points import EXERCISES

ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
ZIP = ROOT / "build" / ASSIGNMENT / f"{ASSIGNMENT}-autograder.zip"
CLI = [sys.executable, "-m", "autograder"]
NOTEBOOK = {"cells": [], "metadata": {"otter": {"assignment_name": ASSIGNMENT}},
            "nbformat": 4, "nbformat_minor": 5}
FORMULA = re.compile(r"^[=+\-@\t\r]")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# The batch: every hostile kind of file, made at run time
# ---------------------------------------------------------------------------------------------

FENCE_MESSAGE = ("look:\n```\n<img src=x onerror=alert(1)><script>alert(2)</script>"
                 "[click](http://evil.example)\n```")
ANSI_NAME = "\x1b[31mansi\x1b[2J.ipynb"
MANY_ERRORS = 5000

# file -> a phrase its row's grading_status must hold ("" for a row graded as Completed)
EXPECTED = {
    "perfect.ipynb": "",
    "deep-nesting.ipynb": "nested too deeply",
    "fifo.ipynb": "is a FIFO",
    "dev-zero.ipynb": "is a symbolic link",
    "shadow.ipynb": "is a symbolic link",
    "zip.ipynb": "is a symbolic link",
    "dangling.ipynb": "is a symbolic link",
    "loop.ipynb": "is a symbolic link",
    "folder.ipynb": "is a folder",
    "many-errors.ipynb": "",
    "=cmd|'-C calc'!A0.ipynb": "",
    "+SUM(1,2).ipynb": "",
    "@SUM(A1).ipynb": "",
    "-2+3.ipynb": "not a notebook: invalid JSON",
    "grade$\\foo$.ipynb": "",
    "fence.ipynb": "",
    ANSI_NAME: "",
    "surrogates.ipynb": "",
    "many-cells.ipynb": f"has {submissions.MAX_CODE_CELLS + 1} code cells",
}
FULL_MARKS = ("perfect.ipynb", "many-errors.ipynb", "=cmd|'-C calc'!A0.ipynb",
              "surrogates.ipynb")
#: lone UTF-16 surrogates in an error, the output and a cell's source (red team rt-s5: the
#: result document could not be written, a grader error for a right notebook and exit 3)
SURROGATES = ["print('out \\ud800 put')", "raise ValueError('bad \\udcff value')  # \udfff"]


def _notebook(cells: list[str], base: dict | None = None) -> str:
    nb = json.loads(json.dumps(base or NOTEBOOK))
    nb["cells"] = nb["cells"] + [{"cell_type": "code", "metadata": {}, "source": c,
                                  "outputs": [], "execution_count": None} for c in cells]
    return json.dumps(nb)


def make_batch(folder: Path, zip_path: Path = ZIP) -> None:
    """Every file of ``EXPECTED`` in ``folder``."""
    solution = json.loads(SOLUTION.read_text())
    for cell in solution["cells"]:  # the ids would repeat in the appended cells' copies
        cell.pop("id", None)
    (folder / "perfect.ipynb").write_text(SOLUTION.read_text())
    (folder / "deep-nesting.ipynb").write_text("[" * 100_000)  # 100 KB, RecursionError
    os.mkfifo(folder / "fifo.ipynb")
    (folder / "dev-zero.ipynb").symlink_to("/dev/zero")
    (folder / "shadow.ipynb").symlink_to("/etc/shadow")
    (folder / "zip.ipynb").symlink_to(zip_path.resolve())
    (folder / "dangling.ipynb").symlink_to(folder / "nowhere")
    (folder / "loop.ipynb").symlink_to("loop.ipynb")
    (folder / "folder.ipynb").mkdir()
    (folder / "link-to-parent").symlink_to("..", target_is_directory=True)  # not walked
    # the solution, then 5000 cells each raising a 3.6 KB error (a 5 MB notebook)
    long = "x" * 900
    (folder / "many-errors.ipynb").write_text(_notebook(
        [f"raise ValueError('{long}' * 4)  # {i}" for i in range(MANY_ERRORS)], solution))
    (folder / "=cmd|'-C calc'!A0.ipynb").write_text(SOLUTION.read_text())
    (folder / "+SUM(1,2).ipynb").write_text(_notebook([]))
    (folder / "@SUM(A1).ipynb").write_text(_notebook([]))
    (folder / "-2+3.ipynb").write_text("=2+3")
    (folder / "grade$\\foo$.ipynb").write_text(_notebook(["x = 1"]))
    (folder / "fence.ipynb").write_text(_notebook([f"raise ValueError({FENCE_MESSAGE!r})"]))
    (folder / ANSI_NAME).write_text(_notebook([]))
    (folder / "surrogates.ipynb").write_text(_notebook(SURROGATES, solution))
    (folder / "many-cells.ipynb").write_text(_notebook(["x = 1"] * (submissions.MAX_CODE_CELLS
                                                                   + 1)))


# ---------------------------------------------------------------------------------------------
# Vetting: each file alone, then fuzzed
# ---------------------------------------------------------------------------------------------

def _vet_alone(path: Path) -> submissions.Submission:
    """``vet`` in a thread with a deadline: a vetting that blocks fails the test, not hangs."""
    found = []
    thread = threading.Thread(target=lambda: found.append(vet(path, path.name, None)),
                              daemon=True)
    thread.start()
    thread.join(10)
    assert found, f"vetting {path.name} did not return within 10 s"
    return found[0]


def test_every_hostile_file_vets_to_one_clear_row(tmp_path):
    fake_zip = tmp_path / "autograder.zip"
    fake_zip.write_bytes(b"PK\x03\x04 stands in for the autograder zip")
    folder = tmp_path / "in"
    folder.mkdir()
    make_batch(folder, fake_zip)
    subs = find(folder)
    # named by their printable text (``names.text``): the ANSI name's escapes are spelled out
    assert [s.name for s in subs] == sorted(map(shown, EXPECTED))
    for sub in subs:
        phrase = EXPECTED[raw(sub.name)]
        if phrase:
            assert sub.problem.startswith(f"{sub.name}: ") and phrase in sub.problem, sub
        else:
            assert sub.problem is None and sub.assignment == ASSIGNMENT, sub
    # a file swapped in after the walk is vetted from what it is now, without blocking
    os.unlink(folder / "perfect.ipynb")
    os.mkfifo(folder / "perfect.ipynb")
    assert "is a FIFO" in _vet_alone(folder / "perfect.ipynb").problem


def test_an_unreadable_folder_is_a_row_not_a_crash(tmp_path):
    (tmp_path / "locked").mkdir()
    (tmp_path / "ok.ipynb").write_text(json.dumps(NOTEBOOK))
    os.chmod(tmp_path / "locked", 0)
    try:
        if os.access(tmp_path / "locked", os.R_OK):  # root reads anyway: make it a loop
            os.chmod(tmp_path / "locked", 0o755)
            (tmp_path / "locked" / "again").symlink_to(tmp_path, target_is_directory=True)
            assert [s.name for s in find(tmp_path)] == ["ok.ipynb"]
        else:
            subs = find(tmp_path)
            assert [s.name for s in subs] == ["locked/", "ok.ipynb"]
            assert "could not be listed" in subs[0].problem
    finally:
        os.chmod(tmp_path / "locked", 0o755)


def test_the_read_never_takes_more_than_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_BYTES", 1000)
    big = tmp_path / "big.ipynb"
    big.write_bytes(b" " * 5000)
    assert len(submissions.read_notebook_bytes(big)) == 1001
    assert "is refused" in vet(big, "big.ipynb", None).problem


# JSON of any shape: what students' tools, or students, could write
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=30)
notebook_like = st.fixed_dictionaries(
    {"cells": st.lists(st.one_of(json_values, st.fixed_dictionaries(
        {"cell_type": st.sampled_from(["code", "markdown", 3]),
         "source": st.one_of(st.text(), st.lists(st.text(), max_size=3), json_values)})),
        max_size=4),
     "nbformat": st.sampled_from([4, 3, "4", None]),
     "metadata": st.one_of(json_values, st.just({"otter": {"assignment_name": ASSIGNMENT}}),
                           st.fixed_dictionaries({"otter": json_values}))})
contents = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    notebook_like.map(lambda v: json.dumps(v).encode()),
    st.tuples(st.sampled_from("[{"), st.integers(1, 200_000)).map(
        lambda t: (t[0] * t[1]).encode() if t[0] == "[" else ('{"a":' * t[1]).encode()),
    st.tuples(notebook_like, st.integers(0, 50)).map(
        lambda t: json.dumps(t[0]).encode()[: t[1]]))  # cut short


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=contents)
def test_vetting_fuzzed_never_raises(tmp_path, data):
    from autograder.running.judge.cells import code_cells

    path = tmp_path / "fuzz.ipynb"
    path.write_bytes(data)
    sub = vet(path, "fuzz.ipynb", None)  # never raises
    assert isinstance(sub, submissions.Submission) and sub.name == "fuzz.ipynb"
    from autograder.authoring.layout import ASSIGNMENTS

    assert sub.problem is not None or sub.assignment in ASSIGNMENTS
    if sub.problem is None:
        code_cells(path)  # what vetting passes, the judge can read
    else:
        assert sub.problem.startswith("fuzz.ipynb: ") and len(sub.problem) < 400


# ---------------------------------------------------------------------------------------------
# Output budgets, CSV, Markdown, figures, console
# ---------------------------------------------------------------------------------------------

def _flood_document(cells: int) -> dict:
    error = {"type": "ValueError", "message": "x" * 3600, "traceback": "y" * 4000}
    return {"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "many.ipynb", "assignment": ASSIGNMENT, "seed": 1,
            "status": "graded", "problems": [f"problem {i}" for i in range(500)],
            "questions": {"q1_accumulation": {"points": 5.0, "possible": 5.0, "tests": [
                {"name": "q1 - 1", "hidden": False, "possible": 5.0, "points": 5.0,
                 "passed": True, "message": "m" * 100_000}]}},
            "notebook": {"cells": [{"index": i, "status": "error", "notes": [], "error": error}
                                   for i in range(cells)]},
            "output": "o" * 1_000_000}


def test_a_flooded_document_stays_under_its_budget_and_says_what_was_cut(tmp_path):
    from autograder.reporting import feedback
    from autograder.reporting.feedback_files import MAX_FEEDBACK_BYTES

    ResultDoc.from_dict(_flood_document(5000), "test").write(tmp_path)
    written = tmp_path / "many.ipynb.json"
    assert written.stat().st_size < results.MAX_DOCUMENT_BYTES
    doc = json.loads(written.read_text())
    cut = " ".join(doc["cut"])
    assert re.search(r"\.\.\. 4\d\d\d more cell errors cut", cut), cut
    assert "450 more problems cut" in cut and "more characters of output cut" in cut
    assert doc["questions"]["q1_accumulation"]["points"] == 5.0  # points are never cut
    message = doc["questions"]["q1_accumulation"]["tests"][0]["message"]
    assert message.endswith("[... 100000 characters, cut]") and len(message) == results.MAX_TEXT
    assert results.capped(doc) == doc  # capping twice (container, then host) changes nothing
    row = ResultDoc.from_dict(doc, "test").row()
    assert len(row.status) < results.MAX_STATUS + 100
    fb = feedback.build(ResultDoc.from_dict(doc, "test"))
    assert len(feedback.render_html(fb)) < MAX_FEEDBACK_BYTES
    assert "more cell errors cut" in feedback.render_markdown(fb)


def test_csv_cells_are_never_formulas_and_read_back_exactly():
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(st.text(), st.floats(allow_nan=False, allow_infinity=False)),
                    max_size=6))
    def roundtrip(cells):
        buf = io.StringIO(newline="")
        csv.writer(buf).writerow(csv_cells.safe_row(cells))
        back = next(csv.reader(io.StringIO(buf.getvalue(), newline="")))
        for cell, text in zip(cells, back):
            if isinstance(cell, float):
                assert float(text) == cell  # numbers stay numbers, negatives included
            else:
                assert not FORMULA.match(text) or _number(text)
                assert csv_cells.from_spreadsheet(text) == cell
        assert len(back) == len(cells)

    roundtrip()
    assert csv_cells.spreadsheet_safe("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0"
    assert csv_cells.spreadsheet_safe("-2.5") == "-2.5"


def test_markdown_feedback_keeps_student_text_inert():
    from markdown_it import MarkdownIt

    from autograder.reporting import feedback

    # a name no document on disk could carry (``names.relative``), as feedback would show it
    doc = ResultDoc.graded(
        "<b>x</b> [a](http://e.example).ipynb", {"q1_accumulation": Question.from_dict(
            {"points": 0.0, "possible": 5.0, "tests": [
                {"name": "q1 - 1", "hidden": False, "possible": 5.0, "points": 0.0,
                 "passed": False, "message": "[r]: http://e.example bad <i>x</i> [r] ![i][r]\n"
                 + FENCE_MESSAGE + "\n`````"}]})}, assignment=ASSIGNMENT, seed=1,
        notebook=Notebook.from_dict({"cells": [{"index": 0, "status": "error", "notes": [],
                                                "error": {"type": "ValueError",
                                                          "message": FENCE_MESSAGE,
                                                          "traceback": "Traceback:\n"
                                                          + FENCE_MESSAGE}}]}))
    md = feedback.render_markdown(feedback.build(doc))
    html = MarkdownIt("commonmark").render(md)  # raw HTML enabled, as on most renderers
    for live in ("<img", "<script", "<a ", "<b>", "<i>"):
        assert live not in html, (live, html)
    assert "&lt;script&gt;" in html  # shown, as text
    page = feedback.render_html(feedback.build(doc))
    assert "<script" not in page and "<img" not in page


def test_figures_draw_names_as_they_are():
    from autograder.reporting import plots

    png = plots.horizontal_bars(["grade$\\foo$.ipynb", "$x^2$", "a\\b"], [1.0, 2.0, 3.0],
                                title="t", xlabel="s")
    assert png[:4] == b"\x89PNG"


def test_a_name_in_a_script_the_font_lacks_is_drawn_without_a_warning_per_glyph():
    import warnings

    from autograder.reporting import plots

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warned once per CJK glyph (rt-s3)
        png = plots.horizontal_bars(["張三.ipynb", "ok"], [1.0, 2.0], title="t", xlabel="s")
    assert png[:4] == b"\x89PNG"


def test_console_lines_hold_no_control_characters():
    text = printable(f"  [a 1/1] {ANSI_NAME}: 0/21\r\x07\x9b", lines=False)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", text)
    assert "\\x1b[31mansi" in text
    assert printable("two\nlines") == "two\nlines"


# ---------------------------------------------------------------------------------------------
# The whole batch, graded in one real run by each runner
# ---------------------------------------------------------------------------------------------

#: Bounds for the slow test, from measurements (docs/hostile-files.md). Peak RSS of the
#: grader's whole process tree (judge, zygote, workers; for the Docker runners the host side
#: only, the containers' memory is the engine's) and the size of everything written.
MAX_TREE_RSS = 2 * 2**30
MAX_OUTPUT_BYTES = 6 * 2**20


class TreeMemory:
    """Peak RSS of a process and all its descendants, sampled at about 10 Hz."""

    def __init__(self, pid: int):
        import psutil

        self.root, self.peak, self.samples = psutil.Process(pid), 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import psutil

        while not self.stop.is_set():
            total = 0
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            for proc in procs:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass
            self.peak, self.samples = max(self.peak, total), self.samples + 1
            self.stop.wait(0.1)

    def close(self) -> int:
        self.stop.set()
        self.thread.join()
        return self.peak


def _folder_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*"))


def grade_hostile_batch(folder: Path, out: Path, runner: str, timeout: float = 900,
                        build: Path | None = None) -> dict:
    """Run ``autograder grade`` on ``folder``; its exit status, output, peak tree RSS, time."""
    start = time.monotonic()
    proc = subprocess.Popen(CLI + [*(["--build", str(build)] if build else []), "grade", "-p", str(folder), "-o", str(out), "--seed", "7",
                                   "--runner", runner, "--jobs", "2", "--timeout", "10",
                                   "--submission-timeout", "300"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    memory = TreeMemory(proc.pid)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
        peak = memory.close()
    return {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "peak_rss": peak,
            "seconds": time.monotonic() - start, "samples": memory.samples,
            "out_bytes": _folder_bytes(out) if out.exists() else 0}


@pytest.mark.slow
@pytest.mark.xdist_group("hostile-files")
@pytest.mark.needs_root  # the sealed judge's sandbox, and a link to /etc/shadow it could read
@pytest.mark.parametrize("runner", [
    "sealed", pytest.param("docker-fork", marks=[pytest.mark.needs_docker, pytest.mark.extended])])
def test_hostile_batch_is_graded_in_one_run(zips, build_dir, tmp_path, runner):
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    make_batch(folder, zips[ASSIGNMENT])
    run = grade_hostile_batch(folder, out, runner, build=build_dir)
    said = run["stdout"][-3000:] + run["stderr"][-3000:]
    print(f"{runner}: rc {run['rc']}, {run['seconds']:.1f} s, peak tree RSS "
          f"{run['peak_rss'] / 2**20:.0f} MiB ({run['samples']} samples), output "
          f"{run['out_bytes'] / 2**20:.1f} MiB")

    # the run ends, documented status 0 (student problems are rows), reports written
    assert run["rc"] == 0, said
    graded = out / ASSIGNMENT
    assert (graded / "report" / "class_report.html").stat().st_size > 0
    assert (graded / "canvas_gradebook.csv").exists() and (graded / "results.jsonl").exists()

    # every CSV we wrote parses and holds no cell a spreadsheet would evaluate
    tables = {}
    for path in graded.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as f:
            tables[path.name] = list(csv.reader(f))
        for row in tables[path.name]:
            for cell in row:
                assert not FORMULA.match(cell) or _number(cell), (path.name, cell)

    # each file exactly one row, saying what happened
    header, *rows = tables["final_grades.csv"]
    names = [csv_cells.from_spreadsheet(r[0]) for r in rows[1:]]
    assert sorted(names) == sorted(map(shown, EXPECTED)), names
    by_name = {raw(csv_cells.from_spreadsheet(r[0])): dict(zip(header, r)) for r in rows[1:]}
    for name, phrase in EXPECTED.items():
        status = csv_cells.from_spreadsheet(by_name[name]["grading_status"])
        if phrase:
            assert phrase in status and status.startswith(shown(name)), (name, status)
        else:
            assert status.startswith("Completed"), (name, status)
    for name in FULL_MARKS:  # the perfect notebook keeps full marks, beside all this
        assert float(by_name[name]["total_points_earned"]) == EXERCISES, (name, by_name[name])

    # the 5000 failing cells: a capped document that says what was cut
    doc = json.loads((graded / "results" / "many-errors.ipynb.json").read_text())
    assert any("more cell errors cut" in c for c in doc["cut"]), doc.get("cut")
    for path in [*(graded / "results").rglob("*"), *(graded / "feedback").rglob("*")]:
        assert path.stat().st_size < results.MAX_DOCUMENT_BYTES + 64 * 1024, path
    assert "more cell errors cut" in (graded / "feedback" / "many-errors.md").read_text()

    # the fence message stays in its fence; the HTML feedback escapes it
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render((graded / "feedback" / "fence.md").read_text())
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "<script" not in (graded / "feedback" / "fence.html").read_text()

    # nothing read through a link: no line of /etc/shadow, no byte of the zip anywhere
    shadow = Path("/etc/shadow").read_text().splitlines()[0]
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".html", ".csv"):
            assert shadow not in path.read_text(errors="replace"), path
    # the console got no raw escape from the file names
    assert "\x1b" not in run["stdout"] + run["stderr"]
    assert "\\x1b[31mansi" in run["stdout"]

    # bounded: memory of the grader's process tree, everything written
    assert run["samples"] > 10
    assert run["peak_rss"] < MAX_TREE_RSS, run["peak_rss"]
    assert run["out_bytes"] < MAX_OUTPUT_BYTES, run["out_bytes"]


def test_a_failing_reports_step_exits_nonzero_in_one_line(tmp_path):
    """The grades CSV is there; a result document the reports cannot read stops them: the
    exit status says so (4) and stderr holds one line naming the problem."""
    graded = tmp_path / "out" / ASSIGNMENT
    (graded / "results").mkdir(parents=True)
    final_grades.write(graded / "final_grades.csv", [Graded("a.ipynb", {}, "x")],
                     {"q1_accumulation": 5.0})
    (graded / "results" / "a.ipynb.json").write_text("{not json")
    proc = subprocess.run(CLI + ["report", "-o", str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: reports: DocumentError: "), lines
    assert "a.ipynb.json: not a result document" in lines[0]


def test_values_json_cannot_hold_are_written_as_their_text():
    """A complex number (or any object) that reached a document's evidence is written as its
    text, and capping it again changes nothing (red-team round rt-1: a complex answer's
    evidence stopped the writing of every document of the run)."""
    doc = {"file": "c.ipynb", "questions": {"q4_vjp": {"tests": [{"evidence": {
        "got": [complex(1, 2), (3j, 4.5)], "other": {1, 2}}}]}}}
    capped = results.capped(doc)
    evidence = capped["questions"]["q4_vjp"]["tests"][0]["evidence"]
    assert evidence["got"] == ["(1+2j)", ["3j", 4.5]]
    assert evidence["other"] == "{1, 2}"
    json.dumps(capped)
    assert results.capped(capped) == capped


def test_an_assignment_name_no_assignment_has_is_said_as_such(tmp_path):
    """A notebook naming a path for its assignment (red-team round rt-1) is told that name is
    none of the assignments, not that it names none; and nothing is graded or placed by it."""
    nb = json.loads((ROOT / "solutions" / "autograd-exercises.ipynb").read_text())
    nb["metadata"]["otter"]["assignment_name"] = "../../../tmp/escape\x1b[2J"
    path = tmp_path / "traversal.ipynb"
    path.write_text(json.dumps(nb))
    problem = vet(path, path.name, None).problem
    assert "its otter assignment_name '../../../tmp/escape\\\\x1b[2J' is none of" in problem, problem
    assert "\x1b" not in problem
    del nb["metadata"]["otter"]["assignment_name"]
    nb["cells"] = [c for c in nb["cells"] if "otter.Notebook(" not in "".join(c["source"])]
    path.write_text(json.dumps(nb))
    assert "no otter assignment_name in the notebook's metadata" in vet(path, path.name,
                                                                       None).problem


@pytest.mark.parametrize("opened, placed", [
    ('grader = otter.Notebook("autograd-porting.ipynb")', "autograd-porting"),
    ("import otter\ngrader = otter . Notebook( nb_path='autograd-exercises.ipynb' )",
     "autograd-exercises"),
    ('otter.Notebook("autograd-exercises.ipynb")\notter.Notebook("autograd-porting.ipynb")',
     None),  # two: neither is chosen
    ('otter.Notebook("../../x.ipynb")', None),
    ("# otter.Notebook('hw.ipynb')", None),
])
def test_a_notebook_that_lost_its_metadata_is_placed_by_its_first_cell(tmp_path, opened,
                                                                       placed):
    """A notebook whose metadata lost its otter entry (a "clear metadata" extension, cells
    copied into a new notebook) was a 0/21 row ("cannot tell the assignment"): the line otter
    assign locks into a student notebook's first cell names its assignment; exactly one known
    name places it, with a note for staff, anything else leaves the row as it was."""
    nb = dict(NOTEBOOK, metadata={}, cells=[
        {"cell_type": "code", "metadata": {}, "source": opened, "outputs": [],
         "execution_count": None}])
    path = tmp_path / "stripped.ipynb"
    path.write_text(json.dumps(nb))
    sub = vet(path, path.name, None)
    assert sub.assignment == placed
    if placed:
        assert sub.problem is None
        assert sub.note == (f"stripped.ipynb: no otter assignment_name in its metadata; graded "
                            f'as {placed}, the notebook its cells open (otter.Notebook("'
                            f'{placed}.ipynb"))')
    else:
        assert "no otter assignment_name" in sub.problem and sub.note is None
    # -a decides where it is given, as before
    assert vet(path, path.name, "autograd-exercises").assignment == "autograd-exercises"
