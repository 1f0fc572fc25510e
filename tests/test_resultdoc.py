"""One typed result document (``ResultDoc``) for everything under ``results/``, and one registry
of runners: what is refused, what survives a partial rerun, and that a grader error stays one
(its count, exit status 3 and feedback) until it is graded again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checks.seeding import submission_seed
from autograder.running.resultdoc import (
    GRADED,
    GRADER_ERROR,
    KIND,
    REJECTED,
    SCHEMA_VERSION,
    TIMED_OUT,
    TIMED_OUT_ROW,
    WORKER_RESTARTS,
    CheckRecord,
    DocumentError,
    Question,
    ResultDoc,
    Status,
)
from notebooks import ROOT
from points import EXERCISES

CLI = [sys.executable, "-m", "autograder", "--root", str(ROOT)]
ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
needs_root = pytest.mark.needs_root


def graded_doc(name: str, points: float = 1.0, **extra) -> ResultDoc:
    """A graded document for ``name`` as a run with seed 3 (``grade``'s) draws it: a document
    of another seed is graded again by ``--resume`` (``selection.pick``)."""
    return ResultDoc.graded(name, {"q1_accumulation": Question(points, 3.5)},
                            assignment=ASSIGNMENT, seed=submission_seed(3, f"path:{name}"),
                            **extra)


# -- the document ---------------------------------------------------------------------------
def test_unknown_keys_round_trip_and_the_three_kinds_say_what_they_are(tmp_path):
    doc = graded_doc("a/x.ipynb", seed_per_student=7, diagnosis=["d1"])
    path = doc.write(tmp_path)
    assert path == tmp_path / "a" / "x.ipynb.json"
    back = ResultDoc.read(path)
    assert back == doc and back.extra == {"seed_per_student": 7, "diagnosis": ["d1"]}
    on_disk = json.loads(path.read_text())
    assert on_disk["schema_version"] == SCHEMA_VERSION and on_disk["kind"] == KIND
    assert doc.row().status == "Completed" and doc.row().scores == {
        "q1_accumulation": (1.0, 3.5)}
    error = ResultDoc.grader_error("b.ipynb", "the zygote died", assignment=ASSIGNMENT)
    assert ResultDoc.read(error.write(tmp_path)).is_grader_error
    assert error.row().status == "grader-error: the zygote died"
    rejected = ResultDoc.rejected("c.ipynb", "c.ipynb: not JSON")
    assert ResultDoc.read(rejected.write(tmp_path)).row().status == "c.ipynb: not JSON"


@pytest.mark.parametrize("content, said", [
    # stock otter's results.json: never guessed to be otter output
    ({"tests": [{"name": "q1", "score": 1, "max_score": 1}]}, "kind missing, schema_version missing"),
    # a grader error written by an older grader (version 1 had no kind)
    ({"schema_version": 1, "file": "x.ipynb", "status": "grader-error", "questions": {}},
     "schema_version 1"),
    ({"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "x.ipynb", "status": "done"},
     "unknown status 'done'"),
    ({"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "x.ipynb", "status": "graded",
      "questions": {"q1": {"points": "all"}}}, "question 'q1' has no numeric points"),
    ([1, 2], "a JSON list, not an object"),
    ({"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "x.ipynb", "status": "graded",
      "questions": {"q1": {"points": 0, "possible": 1, "tests": [
          {"name": "t", "checks": [{"check": "c", "passed": "yes"}]}]}}},
     "question 'q1': test 0: check 0: 'passed' is not a bool"),
    ({"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "x.ipynb", "status": "graded",
      "notebook": {"cells": [{"index": "first"}]}}, "cell 0: 'index' is not an integer"),
], ids=["otter", "version-1", "status", "points", "list", "check", "cell"])
def test_an_old_or_foreign_document_is_a_one_line_error_naming_the_file(tmp_path, content,
                                                                          said):
    path = tmp_path / "x.ipynb.json"
    path.write_text(json.dumps(content))
    with pytest.raises(DocumentError) as caught:
        ResultDoc.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message and "\n" not in message


def test_merging_one_question_keeps_the_rest_and_a_worse_status():
    old = graded_doc("x.ipynb", note="kept")
    old = ResultDoc.from_dict({**old.to_dict(), "questions": {
        **old.to_dict()["questions"], "q2_saved": {"points": 4.0, "possible": 4.0,
                                                   "tests": []}}}, "old")
    new = ResultDoc.grader_error("x.ipynb", "lost", seed=3)
    merged = old.with_question(new, "q1_accumulation")
    assert merged.questions == old.questions and merged.extra == {"note": "kept"}
    assert merged.is_grader_error and merged.error == "lost"


#: A document with every part the judge writes, and a key no part knows at every level (what a
#: newer grader adds): it reads as typed parts and writes back as the same JSON.
RICH = {
    "schema_version": SCHEMA_VERSION, "kind": KIND, "file": "a/x.ipynb", "status":
    "graded-with-worker-restarts", "assignment": ASSIGNMENT, "seed": 3, "newer": {"a": 1},
    "problems": ["the notebook's process was replaced 1 time(s)"], "output": "hi\n",
    "cut": ["... 2 more problems cut"], "written": {"q1_written": {"answer": "because"}},
    "questions": {"q1_accumulation": {"points": 1, "possible": 3.5, "newer": True, "tests": [
        {"name": "q1_accumulation - 1", "hidden": False, "passed": True, "points": 1,
         "possible": 1.0, "message": "passed", "newer": 2},
        {"name": "q1_accumulation - 2", "hidden": True, "passed": False, "points": 0.0,
         "possible": 2.5, "message": "raised ValueError: 'one'", "student_text": ["'one'"],
         "student_text_cut": True, "checks": [
             {"question": "q1_accumulation", "check": "square_grads_cleared", "passed": False,
              "points": 0.0, "max_points": 2.5, "message": "raised", "seed": 3,
              "misconception": "raised", "evidence": {"inputs": {"p0": 1.5}, "got": None},
              "fault": "student", "traceback": "Traceback", "newer": []}]}]}},
    "notebook": {"newer": "n", "cells": [
        {"index": 0, "status": "ok", "notes": [], "defines": ["f"], "first_line": "def f():",
         "name": "the cell defining f"},
        {"index": 1, "status": "error", "notes": ["skipped %magic"], "defines": [],
         "first_line": "1/0", "name": "the cell starting `1/0`", "newer": 0, "error": {
             "type": "ZeroDivisionError", "message": "division by zero",
             "traceback": "Traceback", "newer": "e"}},
        {"index": 2, "status": "stopped", "reason": "it ran past its time limit",
         "defines": [], "first_line": "while True: pass", "name": "code cell 3"}]}}


def test_every_part_reads_typed_and_writes_back_the_same_json(tmp_path):
    doc = ResultDoc.from_dict(json.loads(json.dumps(RICH)), "rich")
    assert doc.to_dict() == RICH
    question = doc.questions["q1_accumulation"]
    assert isinstance(question, Question) and question.extra == {"newer": True}
    passed, failed = question.tests
    assert passed.checks is None and not passed.grader_fault
    assert failed.student_text == ("'one'",) and failed.checks[0].by_student
    assert failed.checks[0].evidence["inputs"] == {"p0": 1.5}
    cells = doc.notebook.cells
    assert [c.stopped for c in cells] == [False, False, True]
    assert cells[1].error.type == "ZeroDivisionError" and cells[1].error.extra == {"newer": "e"}
    assert doc.extra == {"newer": {"a": 1}, "written": {"q1_written": {"answer": "because"}}}
    path = doc.write(tmp_path)
    assert ResultDoc.read(path).to_json() == path.read_text(encoding="utf-8") == doc.to_json()


def test_a_check_result_crosses_into_the_document_unchanged():
    """What ``checks`` writes (``CheckResult.to_dict``) is what the document keeps, and the
    fault words the document asks about are the checks' own."""
    from autograder.checks.result import GRADER, STUDENT, CheckResult, Evidence

    for fault in (GRADER, STUDENT):
        result = CheckResult("q1", "c", False, 0.0, 1.0, "wrong", 3, "m",
                             Evidence(inputs={"x": 1.0}, got=[2.0]), fault, None)
        record = CheckRecord.from_dict(result.to_dict())
        assert record.to_dict() == result.to_dict()
        assert (record.by_grader, record.by_student) == (fault == GRADER, fault == STUDENT)


@pytest.mark.parametrize("word, graded, clean, timed_out, grader_error, rejected, row", [
    (GRADED, True, True, False, False, False, "Completed"),
    (WORKER_RESTARTS, True, False, False, False, False, "Completed with problems: P."),
    (TIMED_OUT, True, False, True, False, False, f"{TIMED_OUT_ROW}: P."),
    (GRADER_ERROR, False, False, False, True, False, "grader-error: e"),
    (REJECTED, False, False, False, False, True, "e"),
])
def test_one_status_vocabulary_says_what_a_document_is(word, graded, clean, timed_out,
                                                       grader_error, rejected, row):
    status = Status(word)
    assert (status.is_graded, status.is_clean, status.is_timed_out, status.is_grader_error,
            status.is_rejected) == (graded, clean, timed_out, grader_error, rejected)
    doc = ResultDoc("x.ipynb", word, problems=("p",) if graded else (),
                    error=None if graded else "e")
    assert doc.row().status == row and doc.row().outcome == word
    assert json.loads(doc.to_json())["status"] == word


def test_an_unknown_status_word_is_refused():
    with pytest.raises(ValueError, match="unknown status 'done'"):
        Status("done")
    with pytest.raises(ValueError, match="starts with 'graded'"):
        ResultDoc.graded("x.ipynb", {}, assignment=None, seed=None, status=REJECTED)


# -- the registry ---------------------------------------------------------------------------
def test_every_runner_the_command_line_accepts_is_in_the_registry():
    from autograder.cli import build_parser
    from autograder.running.runners import registry

    grade = build_parser()._subparsers._group_actions[0].choices["grade"]
    runner = next(a for a in grade._actions if a.dest == "runner")
    offered = {name for name, kind in registry.RUNNERS.items() if kind.command_line}
    assert set(runner.choices) == {registry.AUTO, *offered}
    assert "pod" not in offered  # only the image's pod_entry runs it, inside its container
    assert runner.default == registry.AUTO
    for name, kind in registry.RUNNERS.items():
        assert kind.name == name and (name in runner.help) == kind.command_line
        # --question is refused up front exactly for the runners that grade whole notebooks
        assert (registry.option_problem(name, "q1") is None) == kind.partial


def test_the_otter_runner_reads_its_points_without_torch(zips):
    """The otter runner's process reads the zip's points and never imports torch (``otter
    run`` grades in processes of its own): a run of it pays no ``import torch``."""
    code = ("import sys; from autograder.running.limits import Limits; "
            "from autograder.running.runners.base import Setup; "
            "from autograder.running.runners.otter import OtterRunner; "
            f"runner = OtterRunner(Setup({str(zips[ASSIGNMENT])!r}, {ASSIGNMENT!r}, 1, Limits())); "
            "print(f'{sum(runner.points().values()):g}', 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.stdout.split() == [f"{EXERCISES:g}", "False"], proc.stderr[-3000:]


# -- through the command line ---------------------------------------------------------------
def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "grade", "-p", str(submissions), "-o", str(out), "--seed",
                           "3", "--json", *extra], capture_output=True, text=True, timeout=900)


def folder_of(tmp_path: Path, *names: str, bad: str | None = None) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for name in names:
        shutil.copy(SOLUTION, folder / f"{name}.ipynb")
    if bad:
        (folder / f"{bad}.ipynb").write_text("not a notebook")
    return folder


def test_a_foreign_document_stops_a_partial_run_before_any_work(tmp_path):
    folder = folder_of(tmp_path, "ada")
    results = tmp_path / "out" / ASSIGNMENT / "results"
    results.mkdir(parents=True)
    foreign = results / "ada.ipynb.json"
    foreign.write_text(json.dumps({"tests": [{"name": "q1_accumulation", "score": 3.5,
                                              "max_score": 3.5}]}))
    proc = grade(folder, tmp_path / "out", "--resume", "--runner", "sealed")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: {foreign}: not a result document of this grader (kind missing, "
        f"schema_version missing; expected {KIND} version {SCHEMA_VERSION}): regrade it "
        f"without --resume, or move it away"]
    assert not (tmp_path / "out" / ASSIGNMENT / "final_grades.csv").exists()


@pytest.mark.slow
@needs_root
def test_a_partial_rerun_keeps_a_grader_error_its_count_exit_status_and_feedback(tmp_path):
    """--only grades one (rejected) file; the grader error on disk of another stays one."""
    folder = folder_of(tmp_path, "ada", "alan", bad="broken")
    results = tmp_path / "out" / ASSIGNMENT / "results"
    ResultDoc.grader_error("ada.ipynb", "the worker zygote did not start",
                           assignment=ASSIGNMENT, seed=3).write(results)
    graded_doc("alan.ipynb").write(results)
    proc = grade(folder, tmp_path / "out", "--only", "broken", "--runner", "sealed")
    assert proc.returncode == 3, proc.stderr
    summary = json.loads(proc.stdout)["assignments"][ASSIGNMENT]
    assert summary["graded_now"] == 1 and summary["grader_errors"] == ["ada.ipynb"]
    assert summary["student_problems"] == ["broken.ipynb"]
    feedback = tmp_path / "out" / ASSIGNMENT / "feedback" / "ada.md"
    assert "the worker zygote did not start" in feedback.read_text()
    assert ResultDoc.read(results / "ada.ipynb.json").is_grader_error  # untouched


@pytest.mark.slow
@needs_root
def test_resume_grades_a_grader_error_again_and_keeps_the_graded(tmp_path):
    folder = folder_of(tmp_path, "ada", "alan")
    results = tmp_path / "out" / ASSIGNMENT / "results"
    ResultDoc.grader_error("ada.ipynb", "container: the judge printed no result",
                           assignment=ASSIGNMENT, seed=3).write(results)
    kept = graded_doc("alan.ipynb").write(results)
    before = kept.read_bytes()
    proc = grade(folder, tmp_path / "out", "--resume", "--runner", "sealed", "--no-reports")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["assignments"][ASSIGNMENT]
    assert summary["graded_now"] == 1 and summary["grader_errors"] == []
    ada = ResultDoc.read(results / "ada.ipynb.json")
    assert ada.status == "graded" and ada.row().status == "Completed"
    assert sum(p for p, _ in ada.row().scores.values()) == EXERCISES
    assert kept.read_bytes() == before


@pytest.mark.extended
@pytest.mark.slow
def test_the_otter_runner_writes_documents_feedback_and_honours_the_time_limit(tmp_path):
    folder = folder_of(tmp_path, "ada")
    proc = grade(folder, tmp_path / "out", "--runner", "otter")
    assert proc.returncode == 0, proc.stderr
    doc = ResultDoc.read(tmp_path / "out" / ASSIGNMENT / "results" / "ada.ipynb.json")
    assert sum(p for p, _ in doc.row().scores.values()) == EXERCISES, doc
    assert (tmp_path / "out" / ASSIGNMENT / "feedback" / "ada.md").exists()
    # one kernel runs the whole notebook: the submission timeout bounds that run
    proc = grade(folder, tmp_path / "slow", "--runner", "otter", "--submission-timeout", "1",
                 "--no-reports")
    assert proc.returncode == 0, proc.stderr
    doc = ResultDoc.read(tmp_path / "slow" / ASSIGNMENT / "results" / "ada.ipynb.json")
    assert doc.row().scores and all(p == 0 for p, _ in doc.row().scores.values())
    assert "took longer than 1 s" in doc.row().status


def test_a_half_written_document_says_how_to_go_on(tmp_path):
    """A truncated document (a copy cut short, red-team round rt-2) names the file and the way
    on: move it away, and ``--resume`` grades that submission again."""
    path = tmp_path / "stu.ipynb.json"
    path.write_text('{"schema_version": 2, "kind": "autograder-res')
    with pytest.raises(DocumentError) as caught:
        ResultDoc.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a result document (unreadable: JSONDecodeError")
    assert "move it away, then --resume grades that submission again" in message
