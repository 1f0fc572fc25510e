"""What a PrairieLearn or Gradescope student reads: the results.json each entry point builds from
a result document (``entry/prairielearn.py``, ``entry/run_autograder.py``), made here from
documents such as the judge writes, without a container (red-team round rt-3: hostile
notebooks graded through the PrairieLearn entry; the same holds for Gradescope's)."""

from __future__ import annotations

import json
import re
import zipfile

import pytest

from autograder.running.resultdoc import CellReport, Notebook, Question, ResultDoc
from autograder.running.resultdoc import TestOutcome as Outcome

ASSIGNMENT = "autograd-exercises"


def graded(message: str = "passed", output: str = "", problems: tuple[str, ...] = (),
           cells: tuple[CellReport, ...] = ()) -> ResultDoc:
    """A graded document of one question: its public test passed, a hidden one failed with
    ``message``; the notebook printed ``output`` and its cells ran as ``cells`` say."""
    tests = (Outcome("q1_accumulation - 1", False, True, 1.0, 1.0, "passed"),
             Outcome("q1_accumulation - 2", True, False, 0.0, 1.0, message))
    return ResultDoc.graded("hw.ipynb", {"q1_accumulation": Question(1.0, 2.0, tests)},
                            assignment=ASSIGNMENT, seed=3, problems=problems,
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
