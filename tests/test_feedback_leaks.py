"""``--feedback mistake`` shows nothing of a hidden test's inputs that the student's code chose
to print, raise or return (docs/class-feedback.md, docs/security.md).

A real notebook (the autograd-exercises solution, its q3_multipath answer replaced) whose
functions spell their inputs out in words (digits in letters escape a redaction of numbers):
``multipath_grads`` prints them and raises ``ValueError`` with them; ``split_path_grads``
returns them as a string and as the name of a class made on the spot. Graded by the sealed
runner through the CLI: at ``full`` the messages quote the spelled inputs (so this test can
see a leak); at ``mistake`` the feedback keeps the named mistake and the grader's words only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest

from notebooks import ROOT, solution, with_answer

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

SPELLING = '''
import torch

_WORDS = dict(zip("0123456789-.e+", "zero one two three four five six seven eight nine "
                  "minus point exponent plus".split()))


def _spell(value):
    return " ".join(_WORDS.get(c, c) for c in repr(float(value)))


def multipath_grads(x0, y0):
    print("inputs:", _spell(x0), "and", _spell(y0))
    raise ValueError(f"x0 is {_spell(x0)} and y0 is {_spell(y0)}")


def split_path_grads(x0, y0):
    named = type("_".join(_spell(x0).split()), (), {})
    return (f"y0 is {_spell(y0)}", named())
'''
DIGIT = r"(?:zero|one|two|three|four|five|six|seven|eight|nine)"
#: a spelled number (words joined by spaces, or by "_" in a class name)
SPELLED = re.compile(rf"(?:minus[ _])?{DIGIT}(?:[ _](?:{DIGIT}|point|exponent|minus|plus))+")


def spelled(text: str) -> set[str]:
    """The spelled numbers in ``text``, as words joined by spaces."""
    return {m.group(0).replace("_", " ") for m in SPELLED.finditer(text)}


def _grade(folder, out, build_dir, detail):
    return subprocess.run([sys.executable, "-m", "autograder", "--build", str(build_dir),
                           "grade", "-p", str(folder), "-o", str(out), "--seed", "7",
                           "--runner", "sealed", "--feedback", detail, "--jobs", "1"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)


def test_mistake_feedback_holds_nothing_the_student_code_spelled(build_dir, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    nb = with_answer(solution("autograd-exercises"), "q3_multipath", SPELLING)
    nbformat.write(nb, folder / "speller.ipynb")
    out = tmp_path / "out"
    proc = _grade(folder, out, build_dir, "mistake")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((out / "autograd-exercises" / "results" / "speller.ipynb.json").read_text())
    hidden = [t for t in doc["questions"]["q3_multipath"]["tests"] if t["hidden"]]
    assert hidden and not any(t["passed"] for t in hidden)
    # the document (what staff see, and `full` feedback) quotes what the code said: a leak
    # this test would see. The public test's inputs (3.0, 4.0) are the student's own.
    secret = spelled(" ".join(t["message"] for t in hidden))
    secret -= spelled(" ".join(t["message"] for t in doc["questions"]["q3_multipath"]["tests"]
                               if not t["hidden"]))
    assert len(secret) >= 2, secret
    assert secret <= spelled(doc["output"])  # printed too (staff see the output; students not)

    files = sorted((out / "autograd-exercises").rglob("speller*.md")) + sorted(
        (out / "autograd-exercises").rglob("speller*.html"))
    assert len(files) == 2, files
    for path in files:
        text = path.read_text()
        assert not secret & spelled(text), secret & spelled(text)
        assert "raised ValueError" in text  # the mistake is still named, in our words
    full = subprocess.run([sys.executable, "-m", "autograder", "report", "-o", str(out),
                           "--feedback", "full"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert full.returncode == 0, full.stdout[-2000:] + full.stderr[-2000:]
    assert secret <= spelled(files[0].read_text())  # at `full` the quotes are there
