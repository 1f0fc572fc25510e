"""What a PrairieLearn or Gradescope student reads: the results.json each entry point builds from
a result document (``entry/prairielearn.py``, ``entry/run_autograder.py``), made here from
documents such as the judge writes, without a container (red-team round rt-3: hostile
notebooks graded through the PrairieLearn entry; the same holds for Gradescope's)."""

from __future__ import annotations

import json
import re
import zipfile

import pytest

from autograder.running.resultdoc import (
    GRADED,
    WORKER_RESTARTS,
    CellError,
    CellReport,
    Notebook,
    Question,
    ResultDoc,
)
from autograder.running.resultdoc import TestOutcome as Outcome
from notebooks import ROOT

ASSIGNMENT = "autograd-exercises"


def graded(message: str = "passed", output: str = "", problems: tuple[str, ...] = (),
           cells: tuple[CellReport, ...] = ()) -> ResultDoc:
    """A graded document of one question: its public test passed, a hidden one failed with
    ``message``; the notebook printed ``output`` and its cells ran as ``cells`` say."""
    tests = (Outcome("q1_accumulation - 1", False, True, 1.0, 1.0, "passed"),
             Outcome("q1_accumulation - 2", True, False, 0.0, 1.0, message))
    return ResultDoc.graded("hw.ipynb", {"q1_accumulation": Question(1.0, 2.0, tests)},
                            assignment=ASSIGNMENT, seed=3, problems=problems,
                            status=WORKER_RESTARTS if problems else GRADED,
                            notebook=Notebook(cells), output=output)


def prairielearn(tmp_path, doc: ResultDoc) -> dict:
    """PrairieLearn's results.json for ``doc``, as the entry point writes it."""
    from autograder.running.entry.prairielearn import results_json, write

    write(tmp_path, results_json(doc))
    return json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def source(zips, tmp_path_factory):
    """``/autograder/source`` as Gradescope unpacks the zip: otter's tests and config."""
    folder = tmp_path_factory.mktemp("source")
    with zipfile.ZipFile(zips[ASSIGNMENT]) as zf:
        zf.extractall(folder)
    return folder


def gradescope(source, doc: ResultDoc) -> dict:
    """Gradescope's results.json for ``doc``, as the entry point writes it."""
    from autograder.running.entry.run_autograder import results_json

    config = json.loads((source / "otter_config.json").read_text())
    found, _ = results_json(doc, config, source / "tests", "visible")
    return json.loads(json.dumps(found))


def strings(value) -> str:
    """Every string of a JSON document (keys and values), one after the other."""
    if isinstance(value, dict):
        return "".join(k + strings(v) for k, v in value.items())
    if isinstance(value, list):
        return "".join(map(strings, value))
    return value if isinstance(value, str) else ""


# --- characters that hide or move text ---------------------------------------------------------

#: What a notebook may print or raise to pass for the grader's words (a05, a06): a carriage
#: return that rewrites the line, ANSI escapes, BEL, NUL, a C1 control, a right-to-left
#: override, an isolate, zero-width characters.
FORGED = ("\r21 of 21 points.", "\x1b[2K\x1b[32mpassed\x1b[0m", "\x07\x00\x85",
          "\u202edessap\u202c", "\u2067x\u2069", "pa\u200bss\u2060ed\ufeff")
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def forged_doc(forged: str) -> ResultDoc:
    return graded(message=f"Your code raised ValueError: {forged}\nline two\tcol",
                  output=f"printed {forged}\n\tindented\n")


@pytest.mark.parametrize("forged", FORGED)
def test_prairielearn_shows_the_students_hidden_characters_as_escapes(tmp_path, forged):
    """Is every control, bidirectional and zero-width character of the student's shown as an
    escape in PrairieLearn's results.json, line breaks and tabs kept as they are?"""
    results = prairielearn(tmp_path, forged_doc(forged))
    assert not HIDDEN.search(strings(results)), results
    assert "\n\tindented\n" in results["output"]
    assert "line two\tcol" in results["tests"][1]["message"]


@pytest.mark.parametrize("forged", FORGED)
def test_gradescope_shows_the_students_hidden_characters_as_escapes(source, forged):
    """The same in Gradescope's results.json (otter's rendering of our messages)."""
    results = gradescope(source, forged_doc(forged))
    assert not HIDDEN.search(strings(results)), results
    assert "line two\tcol" in strings(results)


def test_the_result_document_keeps_what_the_notebook_printed(source):
    """Our own document (autograder.json, read by other code) is left as the judge made it."""
    doc = forged_doc(FORGED[0])
    gradescope(source, doc)
    assert doc.output == f"printed {FORGED[0]}\n\tindented\n"


# --- the sentences above the tests ---------------------------------------------------------------

#: a13: a cell raises; the tests then only say that its functions are not defined.
DATA_CELL = CellReport(4, "error", error=CellError(
    "ValueError", "my data file is missing\nsecond line", "Traceback ..."),
    defines=("multipath_grads", "split_path_grads"),
    name="the cell defining multipath_grads, split_path_grads")
RAISED = ("The cell defining multipath_grads, split_path_grads raised ValueError: my data file "
          "is missing.")


def test_prairielearn_names_the_cell_that_raised(tmp_path):
    """Is a student told which cell raised, with what, before the tests that failed for it?"""
    results = prairielearn(tmp_path, graded(cells=(DATA_CELL,)))
    assert results["message"].splitlines() == ["1 of 2 points.", RAISED]


def test_gradescope_names_the_cell_that_raised(source):
    """The same sentence leads Gradescope's top-level output."""
    results = gradescope(source, graded(cells=(DATA_CELL,)))
    assert results["output"].splitlines()[1] == RAISED


def test_a_raised_message_of_the_students_is_cut_and_escaped(tmp_path):
    """A cell's exception message is the student's: its first line only, cut, escaped."""
    cell = CellReport(0, "error", error=CellError("KeyError", "\u202e" + "x" * 500), name=None)
    many = tuple(CellReport(i, "error", error=CellError("E", "m"), name=f"cell {i}")
                 for i in range(1, 6))
    message = prairielearn(tmp_path, graded(cells=(cell, *many)))["message"]
    assert f"Code cell 1 raised KeyError: \\u202e{'x' * 199}..." in message
    assert message.splitlines()[-1] == "3 more cells raised too."


#: problems as documents of earlier runs hold them: lower case, no full stop
OLD_PROBLEMS = ("the cell defining os, sys stopped the notebook's process: it was stopped",
                "the notebook's process was replaced 1 time(s)")
SENTENCES = ["The cell defining os, sys stopped the notebook's process: it was stopped.",
             "The notebook's process was replaced 1 time(s)."]


def test_each_problem_is_a_sentence_on_both_platforms(tmp_path, source):
    """Do the problems read as sentences, not one run-on line, on either platform?"""
    doc = graded(problems=OLD_PROBLEMS)
    assert prairielearn(tmp_path, doc)["message"].splitlines()[1:] == SENTENCES
    assert gradescope(source, doc)["output"].splitlines()[1:] == SENTENCES
    assert doc.row().status == "Completed with problems: " + " ".join(SENTENCES)


def test_the_judge_says_each_problem_as_a_sentence():
    """The judge's own problems: a stopped cell, replacements, the whole submission's limit."""
    from autograder.running.judge.core import Session
    from autograder.running.limits import Limits

    session = Session([(2, "import time\ntime.sleep(1000)")], 61000,
                      Limits(submission_timeout=480), 0.0)
    session.bad, session.restarts, session.cut = {2}, 1, True
    session.report[2] = {"index": 2, "status": "stopped", "reason": "the submission used up "
                         "its time limit (480 s for all its cells and tests together)"}
    said = session.problems()
    assert [p[:1] for p in said] == ["T", "T", "T"] and all(p.endswith(".") for p in said)
    assert said[1] == "The notebook's process was replaced 1 time(s)."
    assert said[2].startswith("The time limit for the whole submission ran out (480 s")


# --- the written questions, graded by hand later ------------------------------------------------

WRITTEN_LINE = ("1 of 2 auto-graded points; q1_written and q2_written (4 points) are graded by "
                "hand, later.")


def test_the_zip_lists_the_written_questions_for_the_platforms(zips, tmp_path):
    """Does PrairieLearn's entry find the written questions and their points in the zip
    (all of them; with ``questions`` in question.json, only those it names)?"""
    from autograder.running.entry.prairielearn import written_questions

    (tmp_path / "tests").mkdir()
    (tmp_path / "serverFilesCourse" / "autograder").mkdir(parents=True)
    (tmp_path / "serverFilesCourse" / "autograder" / f"{ASSIGNMENT}-autograder.zip"
     ).write_bytes(zips[ASSIGNMENT].read_bytes())
    config = tmp_path / "tests" / "question.json"
    config.write_text(json.dumps({"assignment": ASSIGNMENT}))
    assert written_questions(tmp_path) == [("q1_written", 2.0), ("q2_written", 2.0)]
    config.write_text(json.dumps({"assignment": ASSIGNMENT,
                                  "questions": ["q1_accumulation", "q2_written"]}))
    assert written_questions(tmp_path) == [("q2_written", 2.0)]


def test_prairielearn_says_the_written_questions_are_graded_later(tmp_path):
    """Is a full auto-graded score told apart from the whole assignment's (rt-3: "21 of 21
    points." and score 1.0 with q1_written and q2_written unanswered)? The score stays the
    auto-graded fraction (docs/beyond-one-machine.md)."""
    from autograder.running.entry.prairielearn import results_json

    results = results_json(graded(), [("q1_written", 2.0), ("q2_written", 2.0)])
    assert results["message"].splitlines()[0] == WRITTEN_LINE
    assert results["score"] == 0.5


def test_gradescope_says_the_written_questions_are_graded_later(source):
    """The same first line in Gradescope's top-level output, the listing read from the
    unpacked zip."""
    from autograder.running.entry.run_autograder import results_json, written_questions

    written = written_questions(source)
    assert written == [("q1_written", 2.0), ("q2_written", 2.0)]
    config = json.loads((source / "otter_config.json").read_text())
    found, _ = results_json(graded(), config, source / "tests", "visible", written)
    assert found["output"].splitlines()[0] == WRITTEN_LINE


@pytest.mark.parametrize("written, line", [
    ([], "1 of 2 points."),
    ([("q4_written", 1.0)], "1 of 2 auto-graded points; q4_written (1 point) is graded by "
                            "hand, later."),
    ([("a", 1.0), ("b", 1.0), ("c", 0.5)], "1 of 2 auto-graded points; a, b and c (2.5 points) "
                                            "are graded by hand, later."),
])
def test_the_points_line(written, line):
    from autograder.running.entry.summary import points_line

    assert points_line(graded(), written) == line


# --- a notebook of the other assignment ----------------------------------------------------------

PORTING = ROOT / "solutions" / "autograd-porting.ipynb"
WANTS = ("is the autograd-porting notebook, but this {place} wants the autograd-exercises "
         "notebook: {again} your autograd-exercises.ipynb instead.")


def test_prairielearn_says_what_to_submit_for_another_assignments_notebook(tmp_path):
    """A09b: the command line's advice ("grade it without -a, or with -a autograd-porting")
    is none a PrairieLearn student can follow; they are told what to submit instead."""
    from autograder.running.entry.prairielearn import NotGradable, notebook

    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "autograd-exercises.ipynb").write_bytes(PORTING.read_bytes())
    with pytest.raises(NotGradable) as refused:
        notebook(tmp_path, ASSIGNMENT)
    said = str(refused.value)
    assert said == "Your file autograd-exercises.ipynb " + WANTS.format(place="question",
                                                                        again="submit")
    assert "-a" not in said.split()


def test_gradescope_says_what_to_submit_for_another_assignments_notebook(tmp_path, source):
    from autograder.running.entry.run_autograder import SubmissionProblem, submitted_notebook

    (tmp_path / "source").symlink_to(source)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "hw.ipynb").write_bytes(PORTING.read_bytes())
    with pytest.raises(SubmissionProblem) as refused:
        submitted_notebook(tmp_path)
    assert str(refused.value) == "Your file hw.ipynb " + WANTS.format(place="assignment",
                                                                      again="resubmit")
