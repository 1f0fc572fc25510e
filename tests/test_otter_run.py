"""Through stock ``otter run`` against the zip that ``otter assign`` built: do the solutions score
100% for any grading seed, does the untouched template score 0, and is every kept variant scored
on its own question only, with its feedback in otter's output?"""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring.layout import ASSIGNMENTS, Layout
from autograder.running.batch import ensure_zip
from autograder.running import uids
from autograder.running.judge import judge
from autograder.running.sandbox import Limits
from autograder.running.tests_zip import load_tests
from notebooks import (ROOT, otter_run, question_output, question_scores, solution, variants,
                       with_answer)

pytestmark = pytest.mark.slow
SEEDS = range(20)
VARIANTS = variants()


@pytest.fixture(scope="session")
def zips(tmp_path_factory):
    """Autograder zips built fresh from the masters, in a scratch build folder."""
    layout = Layout.at(ROOT, tmp_path_factory.mktemp("build"))
    return {a: ensure_zip(a, layout) for a in ASSIGNMENTS}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_scores_full_marks(assignment, seed, zips, tmp_path):
    results = otter_run(ROOT / "solutions" / f"{assignment}.ipynb", zips[assignment], tmp_path,
                        seed=seed)
    scores = question_scores(results)
    assert scores, "otter reported no questions"
    lost = {q: s for q, s in scores.items() if s[0] != s[1]}
    assert not lost, {q: question_output(results, q) for q in lost}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_template_scores_zero(assignment, zips, tmp_path):
    template = ROOT / "student_templates" / assignment / f"{assignment}.ipynb"
    scores = question_scores(otter_run(template, zips[assignment], tmp_path, seed=3))
    assert scores and all(score == 0 for score, _ in scores.values()), scores


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_variant_through_otter_run_and_the_sealed_judge(variant, zips, tmp_path):
    """Same seed, same notebook: otter run and the sealed judge give the same points per
    question (one source of truth: both run the masters' tests and the same checks)."""
    nb = with_answer(solution(variant.assignment), variant.question, variant.source)
    path = tmp_path / f"{variant.assignment}.ipynb"
    nbformat.write(nb, path)
    results = otter_run(path, zips[variant.assignment], tmp_path / "out", seed=11)
    scores = question_scores(results)
    with uids.lease() as uid:
        doc = judge(path, path.name, variant.assignment, load_tests(zips[variant.assignment]),
                    seed=11, uid=uid, limits=Limits(call_timeout=30, submission_timeout=180))
    assert {q: (v["points"], v["possible"]) for q, v in doc["questions"].items()} == scores
    others = {q: s for q, s in scores.items() if q != variant.question and s[0] != s[1]}
    assert not others, f"lost points on other questions: {others}"
    score, possible = scores[variant.question]
    if variant.kind == "correct":
        assert score == possible, question_output(results, variant.question)
    elif variant.kind == "advised":  # full points; the sealed judge's message carries advice
        assert score == possible, question_output(results, variant.question)
        sealed_messages = [t["message"] for t in doc["questions"][variant.question]["tests"]]
        assert any(variant.feedback in m for m in sealed_messages), sealed_messages
    else:
        assert score < possible
        assert variant.feedback in question_output(results, variant.question)
        sealed_messages = [t["message"] for t in doc["questions"][variant.question]["tests"]]
        assert any(variant.feedback in m for m in sealed_messages), sealed_messages
