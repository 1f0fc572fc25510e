"""Reporting from result documents, without grading anything (fast)."""

import csv
import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.checks import descriptions
from autograder.reporting import class_report, exports, feedback
from autograder.reporting.build import write_reports
from autograder.running.files import write_atomic
from autograder.running.outputs.roster import read_roster
from autograder.running.resultdoc import KIND, SCHEMA_VERSION, Question, ResultDoc

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
    return {"schema_version": SCHEMA_VERSION, "kind": KIND, "file": "a/alan-turing.ipynb",
            "assignment": "autograd-exercises", "seed": 3, "status": "graded", "problems": [],
            "questions": {"q1_accumulation": {"points": 1.0, "possible": 3.5, "tests": [
                PUBLIC_PASS, HIDDEN_FAIL, GRADER_FAIL]}}, **extra}


def typed(raw: dict) -> ResultDoc:
    return ResultDoc.from_dict(raw, "the test's document")


def test_does_feedback_lead_with_the_mistake_and_say_what_was_checked():
    md = feedback.render_markdown(feedback.build(typed(doc())))
    first = md.index("square_grads(-1.27, 7) returned")
    assert first < md.index("What was checked: square_grads(p0, repeats, clear=False)")
    assert first < md.index("Passed")  # failures come before what already works
    assert "Traceback (your code only):" in md


def test_does_feedback_hide_the_hidden_inputs_generator_and_evidence():
    for text in (feedback.render_markdown(feedback.build(typed(doc()))),
                 feedback.render_html(feedback.build(typed(doc())))):
        assert "secret_generator" not in text and "rng.normal" not in text
        assert "ignores-p0" not in text  # identifiers are for staff; the message explains


def test_is_a_grader_fault_marked_as_not_the_students():
    md = feedback.render_markdown(feedback.build(typed(doc())))
    assert "**Grader error, not your fault:** the reference could not be computed" in md
    md = feedback.render_markdown(feedback.build(typed(doc(status="grader-error", error="boom"))))
    assert "This is the grader's fault, not yours" in md


def test_is_the_html_self_contained_and_escaped():
    d = doc()
    d["questions"]["q1_accumulation"]["tests"][1] = {**HIDDEN_FAIL, "message": "<script>x"}
    html = feedback.render_html(feedback.build(typed(d)))
    assert "<script>x" not in html and "&lt;script&gt;x" in html
    assert "http://" not in html and "https://" not in html and "<link" not in html


def test_does_the_canvas_csv_use_the_roster_then_the_path(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\nalan-turing.ipynb,s123\n")
    ids = read_roster(roster)
    assert exports.student_id("a/alan-turing.ipynb", ids) == "s123"
    # not the stem: a/hw.ipynb and b/hw.ipynb would share one id
    assert exports.student_id("a/ada-lovelace.ipynb", ids) == "a/ada-lovelace"


def grades_of(*files):
    from autograder.running.outputs.final_grades import Grades

    header = ["file", "q1", "total_points_earned", "percent_correct", "grading_status"]
    return Grades(header, {"q1": 1.0}, [dict(zip(header, [f, "1", "1", "1", "Completed"]))
                                        for f in files])


def test_does_the_canvas_export_say_what_ids_it_used_and_who_is_missing():
    grades = grades_of("a/hw.ipynb", "b/hw.ipynb")
    ids, said = exports.canvas_ids(grades, None)
    assert ids == {"a/hw.ipynb": "a/hw", "b/hw.ipynb": "b/hw"}
    assert "no roster" in said[0] and "2 submission(s)" in said[0]
    ids, said = exports.canvas_ids(grades, {"a/hw.ipynb": "s1"})
    assert ids == {"a/hw.ipynb": "s1", "b/hw.ipynb": "b/hw"}
    assert "1 of 2" in said[0] and "not in the roster" in said[1] and "b/hw.ipynb" in said[1]


def test_does_the_canvas_export_refuse_colliding_ids(tmp_path):
    folder = tmp_path / "autograd-exercises"
    (folder / "canvas_gradebook.csv").parent.mkdir(parents=True)
    (folder / "canvas_gradebook.csv").write_text("stale\n")
    grades = grades_of("a/hw.ipynb", "b/hw.ipynb", "c.ipynb")
    with pytest.raises(exports.CanvasError, match="share the SIS User ID 's1'.*a/hw.ipynb, "
                       "b/hw.ipynb"):
        exports.write_canvas(folder, grades, {"a/hw.ipynb": "s1", "b/hw.ipynb": "s1"})
    assert not (folder / "canvas_gradebook.csv").exists()  # never a stale gradebook
    # a roster id equal to another student's fallback path collides too
    with pytest.raises(exports.CanvasError):
        exports.canvas_ids(grades, {"a/hw.ipynb": "c"})


def test_does_the_canvas_export_refuse_ids_that_differ_only_in_spaces_around_them():
    """``hw.ipynb`` and ``hw .ipynb`` (red-team round rt-1): a gradebook trims the id, so both
    rows would land on one student, the second's points over the first's."""
    with pytest.raises(exports.CanvasError, match="share the SIS User ID"):
        exports.canvas_ids(grades_of("rt/hw.ipynb", "rt/hw .ipynb"), None)
    with pytest.raises(exports.CanvasError, match="share the SIS User ID"):
        exports.canvas_ids(grades_of("a.ipynb", "b.ipynb"), {"a.ipynb": "s1", "b.ipynb": " s1"})


def test_does_the_canvas_export_leave_a_grader_error_without_a_grade():
    """A grader error's 0 is no grade: its cell is empty (an import leaves that student's
    grade alone) and the export says which rows to regrade."""
    grades = grades_of("ok.ipynb", "broken.ipynb")
    grades.rows[1]["total_points_earned"] = "0"
    grades.rows[1]["grading_status"] = "grader-error: hidden test q1: the grader failed"
    ids, said = exports.canvas_ids(grades, None)
    body = exports.canvas_csv(grades, "autograd-exercises", ids)
    rows = {r[0]: r[-1] for r in csv.reader(io.StringIO(body))}
    assert rows["ok"] == "1" and rows["broken"] == ""
    assert any("1 grader error(s) left without a grade" in s and "broken.ipynb" in s
               for s in said), said


def test_does_mistake_detail_keep_the_named_mistake_and_drop_every_number():
    fb = feedback.build(typed(doc()), "mistake")
    md, html = feedback.render_markdown(fb), feedback.render_html(fb)
    for text in (md, html):
        assert "These are the lesson" in text
        for number in ("-1.27", "4.0", "-2.5", "[grading seed 3]", "Traceback"):
            assert number not in text
    assert "square_grads(…, …) returned […]; expected […]" in md


def test_does_score_detail_show_hidden_points_only():
    md = feedback.render_markdown(feedback.build(typed(doc()), "score"))
    assert "square_grads" not in md and "Failed (this course shows the points" in md
    assert "Hidden test q1_accumulation - 3: 0 / 1.25" in md


def test_does_feedback_lead_with_what_to_fix_first():
    md = feedback.render_markdown(feedback.build(typed(doc())))
    assert md.index("## Fix first") < md.index("## q1_accumulation")
    assert "- **q1_accumulation**: square_grads(-1.27, 7) returned" in md


def test_does_a_rejected_file_never_say_none():
    md = feedback.render_markdown(feedback.build(ResultDoc.rejected("x.ipynb",
                                                                    "x.ipynb: not JSON")))
    assert "None" not in md and "Assignment not known" in md


def test_does_not_defined_say_which_cell_took_the_definition_away():
    d = doc()
    d["notebook"] = {"cells": [{"index": 4, "status": "stopped", "reason": "it ran past its "
                                "time limit", "defines": ["count_saved", "lesson_net"],
                                "name": "the cell defining count_saved, lesson_net"}]}
    d["questions"]["q1_accumulation"]["tests"][1] = {
        **HIDDEN_FAIL, "message": "count_saved is not defined: write it in the cell for "
        "q2_saved and run that cell before grading. [grading seed 3]",
        "checks": [{"check": "count_saved_tracked", "misconception": "not-defined",
                    "fault": "student", "passed": False}]}
    md = feedback.render_markdown(feedback.build(typed(d)))
    assert "count_saved was never defined: the cell defining count_saved, lesson_net " \
        "stopped the notebook's process (it ran past its time limit)" in md
    assert "The cell defining count_saved, lesson_net stopped" in md
    assert "Cell 5" not in md


def test_does_merging_a_question_keep_the_others():
    old = doc(seed_note="kept")  # a key this grader does not know survives the merge
    old["questions"]["q2_saved"] = {"points": 4.0, "possible": 4.0, "tests": []}
    new = ResultDoc.graded("a/alan-turing.ipynb", {"q1_accumulation": Question(3.5, 3.5)},
                           assignment="autograd-exercises", seed=3)
    merged = ResultDoc.from_dict(old, "old").with_question(new, "q1_accumulation").to_dict()
    assert merged["questions"]["q2_saved"] == old["questions"]["q2_saved"]
    assert merged["questions"]["q1_accumulation"]["points"] == 3.5
    assert merged["seed_note"] == "kept" and merged["status"] == "graded"


def test_does_an_atomic_write_leave_no_temporary_file(tmp_path):
    write_atomic(tmp_path / "x" / "r.json", "{}\n")
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["r.json"]


def graded_folder(out: Path) -> Path:
    """``out/autograd-exercises`` as a grading run leaves it: one result document, its row in
    ``final_grades.csv``, its time."""
    folder = out / "autograd-exercises"
    write_atomic(folder / "results" / "a" / "alan-turing.ipynb.json", json.dumps(doc()))
    write_atomic(folder / "final_grades.csv",
                 "file,q1_accumulation,total_points_earned,percent_correct,grading_status\n"
                 "points-per-question,3.5,3.5,1,--\na/alan-turing.ipynb,1,1,0.2857,Completed\n")
    write_atomic(folder / "timings.json", '{"a/alan-turing.ipynb": 2.5}')
    return folder


def test_are_all_reports_written_from_a_results_folder(tmp_path):
    folder = graded_folder(tmp_path)
    write_reports(tmp_path)
    assert (folder / "feedback" / "a" / "alan-turing.md").exists()
    assert (folder / "feedback" / "a" / "alan-turing.html").exists()
    for png in ("score_distribution", "pass_rate", "misconceptions", "grading_time"):
        assert (folder / "report" / f"{png}.png").read_bytes()[:4] == b"\x89PNG"
    html = (folder / "report" / "class_report.html").read_text()
    assert "data:image/png;base64," in html and "q1_accumulation: ignores-p0" in html
    assert len((folder / "results.jsonl").read_text().splitlines()) == 1
    assert (folder / "canvas_gradebook.csv").read_text().splitlines()[2] == \
        "a/alan-turing,,a/alan-turing,,,1"
    slim = class_report.slim(typed(doc()))
    assert class_report.misconceptions([slim, slim]) == [("q1_accumulation: ignores-p0", 2)]


def test_does_autograder_report_run_without_torch(tmp_path):
    """``autograder report`` says what each hidden check proved (``checks.descriptions``) and
    never imports torch: a report run pays no ``import torch``."""
    folder = graded_folder(tmp_path)
    code = ("import sys; from autograder.cli import main; "
            f"rc = main(['report', '-o', {str(tmp_path)!r}]); print(rc, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.stdout.split()[-2:] == ["0", "False"], proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "What was checked: square_grads(p0, repeats, clear=False) on fresh leaf values" in \
        (folder / "feedback" / "a" / "alan-turing.md").read_text()


def test_does_every_check_have_its_sentence_and_every_sentence_a_check():
    """The sentences the reports read (``checks.descriptions``) and the checks the judge runs
    name the same checks: neither can gain one the other lacks."""
    from autograder.checks import all_checks
    from autograder.checks.registry import index

    registered = all_checks()
    assert {a: set(table) for a, table in descriptions.PROVES.items()} == \
        {a: set(table) for a, table in registered.items()}
    check = registered["autograd-exercises"]["q1_accumulation/reuse_raises"]
    assert check.proves == descriptions.proves("autograd-exercises", check.key)
    assert descriptions.proves("autograd-exercises", "q1_accumulation/no_such_check") is None
    with pytest.raises(ValueError, match="q1_accumulation/no_such_check .* has no sentence"):
        index([replace(check, name="no_such_check")])


def test_are_cells_in_tracebacks_named_by_what_they_define():
    d = doc()
    d["notebook"] = {"cells": [{"index": 25, "status": "error", "name": "the cell defining "
                                "export_numpy", "defines": ["export_numpy"], "error": {
                                    "type": "RuntimeError", "message": "boom", "traceback":
                                    'Traceback (your code only):\n  File "<cell 26>", line 8'}}]}
    d["questions"]["q1_accumulation"]["tests"][1] = {
        **HIDDEN_FAIL, "message": 'f raised\nTraceback (your code only):\n  File "<cell 26>", '
        'line 5, in export_numpy'}
    md = feedback.render_markdown(feedback.build(typed(d)))
    assert "<cell 26>" not in md and "Cell 26" not in md
    assert md.count('File "<the cell defining export_numpy>"') == 2


def test_does_a_golden_allow_only_a_last_digit_of_float32():
    from notebooks import same_up_to_float32
    pinned = "expected [0.910921, -0.207757] (largest error 0.683634, rtol=1e-05) [seed 19606]"
    assert same_up_to_float32(pinned.replace("-0.207757", "-0.207758"), pinned)
    for other in (pinned.replace("-0.207757", "-0.207767"), pinned.replace("19606", "19607"),
                  pinned.replace("rtol=1e-05", "rtol=1e-04"), pinned.replace("expected", "got"),
                  pinned.replace(", -0.207757", ""), pinned.replace("0.683634", "0.683664")):
        assert not same_up_to_float32(other, pinned), other
    # a value through a training-mode batch norm, two units of its sixth digit apart on an
    # Intel CPU under forced AVX2 kernels: within the kernels' relative spread
    assert same_up_to_float32("[0.681841, -0.0300091]", "[0.681841, -0.0300093]")
    assert not same_up_to_float32("[0.681841, -0.0300191]", "[0.681841, -0.0300093]")
    # fewer digits printed, a wider unit: a loss to 4 digits, a largest error to 2
    losses = "losses [0.6931, 0.0328, 0.0448] (largest error 0.25)"
    assert same_up_to_float32(losses.replace("0.0448", "0.0449"), losses)
    assert same_up_to_float32(losses.replace("0.25", "0.26"), losses)
    assert same_up_to_float32("0.1 and 1e-05", "0.0999999 and 9.99999e-06")  # a carry
    for other in (losses.replace("0.0448", "0.0450"), losses.replace("0.25", "0.27"),
                  losses.replace("0.0328", "0.328")):
        assert not same_up_to_float32(other, losses), other


SPELLED_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                 "point", "minus"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(SPELLED_WORDS), min_size=1, max_size=12), st.integers(0, 120),
       st.sampled_from(["raised", "returned a string", "returned a class"]))
def test_mistake_redaction_takes_out_what_the_code_said(words, cut, how):
    """Whatever the student's code said (inputs spelled in words: an exception's message, a
    string, a class name), wherever the document's size budget cut the message, nothing of it
    is left at ``mistake``; the grader's words before it are."""
    from autograder.reporting.redaction import redact

    said = {"raised": " ".join(words), "returned a string": repr(" ".join(words)),
            "returned a class": "_".join(words)}[how]
    text = {"raised": f"raised ValueError: {said}", "returned a string": f"returned {said}",
            "returned a class": f"returned a {said}"}[how]
    message = f"multipath_grads(1.5, 2.0) {text}; expected (5.0, 1.5) [grading seed 5]"
    message = message[:max(len("multipath_grads(1.5, 2.0) "), len(message) - cut)]
    out = redact(message, [said])
    assert out.startswith("multipath_grads(…, …) ")
    assert not set(out.replace("_", " ").replace("'", " ").split()) & set(SPELLED_WORDS), out


def test_does_feedback_show_hiding_characters_as_escapes():
    """What a submission raised, with an ANSI escape, a right-to-left override and a carriage
    return (red team rt-4), is quoted in the feedback files: ``cat`` on the Markdown must not
    run it in a terminal, and neither page may reorder or hide text with it."""
    d = doc()
    d["questions"]["q1_accumulation"]["tests"][1] = {
        **HIDDEN_FAIL, "message": "raised \x1b[32mAll hidden tests passed\x1b[0m \u202etxt.exe"
        "\rfake\nTraceback (your code only):\n  \x1b[2J"}
    for text in (feedback.render_markdown(feedback.build(typed(d))),
                 feedback.render_html(feedback.build(typed(d)))):
        assert not any(ch in text for ch in "\x1b\u202e\r"), repr(text)
        assert "\\x1b[32mAll hidden tests passed" in text and "\\u202e" in text, text
