"""Stock ``otter run`` and the sealed judge against the zip that ``otter assign`` built.

What is proven where (each fact once, at the cheapest level that proves it):

- every variant, and the solutions for 20 seeds, through the checks in-process:
  ``test_variants.py`` (the fast path, no kernel);
- every variant through the sealed judge (its values cross the JSON wall): here, in *rounds*:
  round i of an assignment is the solution with the i-th variant of each question swapped in
  (a question with fewer variants keeps the solution's answer), so each question is scored by
  its own variant's kind and a variant that cost another question shows as that question's
  loss. 23 judge runs instead of 76;
- ``otter run`` gives the sealed judge's points, with the variants' feedback in its output, on
  a sample: one round per assignment, plus the solution (full marks) and the untouched
  template (zero) for one seed each. 6 kernels instead of 105.
"""

from __future__ import annotations

from itertools import zip_longest

import nbformat
import pytest

from autograder.authoring.layout import ASSIGNMENTS
from autograder.running.judge import uids
from autograder.running.judge.core import judge
from autograder.running.judge.tests_zip import load_tests
from autograder.running.limits import Limits
from notebooks import (
    ROOT,
    Variant,
    otter_run,
    question_output,
    question_scores,
    solution,
    variants,
    with_answer,
)

pytestmark = [pytest.mark.slow, pytest.mark.extended]
SEED = 11
OTTER_RUN_ROUNDS = 1  # rounds per assignment also graded by otter run


def rounds(assignment: str) -> list[list[Variant]]:
    """Round i: the i-th variant of each question of ``assignment`` (sorted by name)."""
    by_question: dict[str, list[Variant]] = {}
    for v in variants():
        if v.assignment == assignment:
            by_question.setdefault(v.question, []).append(v)
    return [[v for v in row if v is not None] for row in zip_longest(*by_question.values())]


ROUNDS = [(a, i, r) for a in ASSIGNMENTS for i, r in enumerate(rounds(a))]


def round_notebook(assignment: str, chosen: list[Variant], path):
    nb = solution(assignment)
    for v in chosen:
        nb = with_answer(nb, v.question, v.source)
    nbformat.write(nb, path)
    return path


def sealed(path, assignment: str, zip_path, seed: int = SEED) -> dict:
    """The judge's document as it is written (JSON)."""
    with uids.lease() as uid:
        return judge(path, path.name, assignment, load_tests(zip_path), seed=seed, uid=uid,
                     limits=Limits(call_timeout=30, submission_timeout=300)).to_dict()


def sealed_scores(doc: dict) -> dict[str, tuple[float, float]]:
    return {q: (v["points"], v["possible"]) for q, v in doc["questions"].items()}


def assert_round(chosen: list[Variant], scores: dict, messages: dict[str, str],
                 advice_shown: bool = True) -> None:
    """Each question scored as its variant's kind says (full marks where no variant was
    swapped in), and each mistake's pinned feedback in that question's messages (an advised
    variant's advice too, where passing tests' messages are shown: not in otter's output)."""
    by_question = {v.question: v for v in chosen}
    for question, (score, possible) in scores.items():
        v = by_question.get(question)
        if v is None or v.kind in ("correct", "advised"):
            assert score == possible, (v.id if v else question, messages[question][:2000])
        else:
            assert score < possible, f"{v.id} kept full marks"
        if v is not None and (v.kind == "wrong" or (v.kind == "advised" and advice_shown)):
            assert v.feedback in messages[question], (v.id, v.feedback, messages[question][:2000])


def round_params(rounds: list) -> list:
    """The rounds as parameters; those otter run also grades (the sample) in one xdist group,
    so that both tests read one judging of them (``judged``)."""
    return [pytest.param(a, i, r, id=f"{a}/round{i}",
                         marks=[pytest.mark.xdist_group("otter-run-sample")]
                         if i < OTTER_RUN_ROUNDS else [])
            for a, i, r in rounds]


@pytest.fixture(scope="module")
def judged(zips, tmp_path_factory):
    """``judged(assignment, i, chosen)``: the sealed judge's document of that round, judged
    once per test process: the sampled rounds are read by two tests (each variant's verdict;
    otter run's points beside the judge's), the same notebook with the same seed."""
    folder = tmp_path_factory.mktemp("rounds")
    docs: dict[tuple[str, int], dict] = {}

    def doc(assignment: str, i: int, chosen: list[Variant]) -> dict:
        if (assignment, i) not in docs:
            (folder / f"round{i}").mkdir(exist_ok=True)
            path = round_notebook(assignment, chosen,
                                  folder / f"round{i}" / f"{assignment}.ipynb")
            docs[assignment, i] = sealed(path, assignment, zips[assignment])
        return docs[assignment, i]

    return doc


@pytest.mark.needs_root
@pytest.mark.parametrize("assignment, i, chosen", round_params(ROUNDS))
def test_every_variant_through_the_sealed_judge(assignment, i, chosen, judged):
    doc = judged(assignment, i, chosen)
    assert doc["status"] == "graded", doc.get("error") or doc.get("problems")
    messages = {q: "\n".join(t["message"] for t in v["tests"])
                for q, v in doc["questions"].items()}
    assert_round(chosen, sealed_scores(doc), messages)


SAMPLE = [(a, i, r) for a, i, r in ROUNDS if i < OTTER_RUN_ROUNDS]


@pytest.mark.needs_root
@pytest.mark.parametrize("assignment, i, chosen", round_params(SAMPLE))
def test_otter_run_gives_the_sealed_judges_points(assignment, i, chosen, judged, zips,
                                                  tmp_path):
    """Same notebook, same seed: otter run (the student's code and the tests in one kernel)
    and the sealed judge give the same points per question; the feedback is in otter's
    output too (both run the masters' tests, which call the same checks)."""
    path = round_notebook(assignment, chosen, tmp_path / f"{assignment}.ipynb")
    results = otter_run(path, zips[assignment], tmp_path / "out", seed=SEED)
    scores = question_scores(results)
    assert scores == sealed_scores(judged(assignment, i, chosen))
    assert_round(chosen, scores, {q: question_output(results, q) for q in scores},
                 advice_shown=False)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_full_marks_and_template_zero_through_otter_run(assignment, zips, tmp_path):
    results = otter_run(ROOT / "solutions" / f"{assignment}.ipynb", zips[assignment],
                        tmp_path / "solution", seed=5)
    scores = question_scores(results)
    assert scores, "otter reported no questions"
    lost = {q: s for q, s in scores.items() if s[0] != s[1]}
    assert not lost, {q: question_output(results, q) for q in lost}
    template = ROOT / "student_templates" / assignment / f"{assignment}.ipynb"
    scores = question_scores(otter_run(template, zips[assignment], tmp_path / "template", seed=3))
    assert scores and all(score == 0 for score, _ in scores.values()), scores
