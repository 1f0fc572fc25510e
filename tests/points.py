"""The points tests expect, read where they are decided, never typed into a test: a question's
points from its master (what ``make assign`` builds the zip from), a sample submission's score
from its golden feedback (``tests/files/golden/``, rewritten by ``--update-goldens``). A new
check changes them here by itself; the goldens' diff is where a person reads the change."""

from __future__ import annotations

import re
from functools import lru_cache

import nbformat

from notebooks import ROOT

GOLDEN = ROOT / "tests" / "files" / "golden"
_SCORE = re.compile(r"^\*\*Score: ([\d.]+) / ([\d.]+)\*\*$", re.M)


@lru_cache(maxsize=None)
def _questions(assignment: str) -> tuple[tuple[str, float, bool], ...]:
    from autograder.authoring.points import questions

    master = ROOT / "assignments" / assignment / f"{assignment}.ipynb"
    return tuple((q["name"], float(q["points"]), bool(q.get("manual")))
                 for q in questions(nbformat.read(master, as_version=4)))


def question_points(assignment: str) -> dict[str, float]:
    """Each auto-graded question of ``assignment`` -> its points (its master's ``points:``)."""
    return {name: points for name, points, manual in _questions(assignment) if not manual}


def possible(assignment: str) -> float:
    """The auto-graded points of ``assignment``: what a perfect notebook earns by grading."""
    return sum(question_points(assignment).values())


def written_points(assignment: str) -> dict[str, float]:
    """Each written (``manual``) question of ``assignment`` -> its points."""
    return {name: points for name, points, manual in _questions(assignment) if manual}


def sample_score(assignment: str, sample: str) -> float:
    """What the sample submission ``submissions/<assignment>/<sample>.ipynb`` earns, as its
    golden feedback pins it (its score is the same for any seed: its mistakes fail every draw)."""
    text = (GOLDEN / assignment / f"{sample}.md").read_text(encoding="utf-8")
    earned, out_of = _SCORE.search(text).groups()
    assert float(out_of) == possible(assignment), f"{sample}'s golden is of other points"
    return float(earned)


#: The exercises' full marks, and alan-turing's (the sample with mistakes most tests grade).
EXERCISES = possible("autograd-exercises")
ALAN_TURING = sample_score("autograd-exercises", "alan-turing")
