"""Reporting from result documents, without grading anything (fast)."""

import json

from autograder.reporting import class_report, exports, feedback
from autograder.reporting.build import write_reports
from autograder.running.files import write_atomic
from autograder.running.selection import merge_question

HIDDEN_FAIL = {
    "name": "q1_accumulation - 3", "hidden": True, "passed": False, "points": 0.0,
    "possible": 1.25, "message": "square_grads(-1.27, 7) returned [4.0]; expected [-2.5]. "
    "These are the lesson's gradients [grading seed 3]\nTraceback (your code only):\n  x",
    "checks": [{"check": "square_grads_uncleared", "misconception": "ignores-p0",
                "fault": "student", "passed": False,
                "evidence": {"inputs": {"p0": -1.27, "secret_generator": "rng.normal"}}}]}
GRADER_FAIL = {"name": "q1_accumulation - 4", "hidden": True, "passed": False, "points": 0.0,
               "possible": 1.25, "message": "the reference could not be computed",
               "checks": [{"check": "square_grads_cleared", "fault": "grader",
                           "misconception": None}]}
PUBLIC_PASS = {"name": "q1_accumulation - 1", "hidden": False, "passed": True, "points": 1.0,
               "possible": 1.0, "message": "passed"}


def doc(**extra):
    return {"schema_version": 1, "file": "a/alan-turing.ipynb",
            "assignment": "autograd-exercises", "seed": 3, "status": "graded", "problems": [],
            "questions": {"q1_accumulation": {"points": 1.0, "possible": 3.5, "tests": [
                PUBLIC_PASS, HIDDEN_FAIL, GRADER_FAIL]}}, **extra}


def test_does_feedback_lead_with_the_mistake_and_say_what_was_checked():
    md = feedback.render_markdown(feedback.build(doc()))
    first = md.index("square_grads(-1.27, 7) returned")
    assert first < md.index("What was checked: square_grads(p0, repeats, clear=False)")
    assert first < md.index("Passed")  # failures come before what already works
    assert "Traceback (your code only):" in md


def test_does_feedback_hide_the_hidden_inputs_generator_and_evidence():
    for text in (feedback.render_markdown(feedback.build(doc())),
                 feedback.render_html(feedback.build(doc()))):
        assert "secret_generator" not in text and "rng.normal" not in text
        assert "ignores-p0" not in text  # identifiers are for staff; the message explains


def test_is_a_grader_fault_marked_as_not_the_students():
    md = feedback.render_markdown(feedback.build(doc()))
    assert "**Grader error, not your fault:** the reference could not be computed" in md
    md = feedback.render_markdown(feedback.build(doc(status="grader-error", error="boom")))
    assert "This is the grader's fault, not yours" in md


def test_is_the_html_self_contained_and_escaped():
    d = doc()
    d["questions"]["q1_accumulation"]["tests"][1] = {**HIDDEN_FAIL, "message": "<script>x"}
    html = feedback.render_html(feedback.build(d))
    assert "<script>x" not in html and "&lt;script&gt;x" in html
    assert "http://" not in html and "https://" not in html and "<link" not in html


def test_does_the_canvas_csv_use_the_roster_then_the_stem(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalan-turing.ipynb,s123\n")
    ids = exports.read_roster(roster)
    assert exports.student_id("a/alan-turing.ipynb", ids) == "s123"
    assert exports.student_id("a/ada-lovelace.ipynb", ids) == "ada-lovelace"


def test_does_merging_a_question_keep_the_others():
    old = doc()
    old["questions"]["q2_saved"] = {"points": 4.0, "possible": 4.0, "tests": []}
    new = {"status": "graded", "seed": 3, "questions": {"q1_accumulation": {
        "points": 3.5, "possible": 3.5, "tests": []}}}
    merged = merge_question(old, new, "q1_accumulation")
    assert merged["questions"]["q2_saved"] == old["questions"]["q2_saved"]
    assert merged["questions"]["q1_accumulation"]["points"] == 3.5


def test_does_an_atomic_write_leave_no_temporary_file(tmp_path):
    write_atomic(tmp_path / "x" / "r.json", "{}\n")
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["r.json"]


def test_are_all_reports_written_from_a_results_folder(tmp_path):
    folder = tmp_path / "autograd-exercises"
    write_atomic(folder / "results" / "a" / "alan-turing.ipynb.json", json.dumps(doc()))
    write_atomic(folder / "final_grades.csv",
                 "file,q1_accumulation,total_points_earned,percent_correct,grading_status\n"
                 "points-per-question,3.5,3.5,1,--\na/alan-turing.ipynb,1,1,0.2857,Completed\n")
    write_atomic(folder / "timings.json", '{"a/alan-turing.ipynb": 2.5}')
    write_reports(tmp_path)
    assert (folder / "feedback" / "a" / "alan-turing.md").exists()
    assert (folder / "feedback" / "a" / "alan-turing.html").exists()
    for png in ("score_distribution", "pass_rate", "misconceptions", "grading_time"):
        assert (folder / "report" / f"{png}.png").read_bytes()[:4] == b"\x89PNG"
    html = (folder / "report" / "class_report.html").read_text()
    assert "data:image/png;base64," in html and "q1_accumulation: ignores-p0" in html
    assert len((folder / "results.jsonl").read_text().splitlines()) == 1
    assert (folder / "canvas_gradebook.csv").read_text().splitlines()[2] == \
        "alan-turing,,alan-turing,,,1"
    assert class_report.misconceptions([doc(), doc()]) == [("q1_accumulation: ignores-p0", 2)]
