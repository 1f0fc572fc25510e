"""Is each kept implementation scored on its own question only, with the feedback that names
its mistake, and does the solution pass every check for any seed? Fast path: the notebook's
code runs in-process, the checks and otter's public test files run against its namespace.
``test_otter_run.py`` runs every variant through the sealed judge and a sample through
``otter run``."""

from __future__ import annotations

import pytest

from autograder.authoring.layout import ASSIGNMENTS
from autograder.checks import all_checks
from autograder.harness import run_check
from notebooks import answer_cells, namespace, public_results, solution, variants, with_answer

SEEDS = (0, 1, 2)
VARIANTS = variants()


@pytest.mark.extended
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_passes_every_check_for_20_seeds(assignment):
    """The seed sweep (the hidden inputs drawn from 20 grading seeds), in-process: the
    grading paths run these same checks (test_otter_run.py, test_sealed.py)."""
    env = namespace(solution(assignment))
    for seed in range(20):
        failed = [r.message for key in all_checks()[assignment]
                  if not (r := run_check(env, assignment, key, seed)).passed]
        assert not failed, (seed, failed)
    for question in answer_cells(solution(assignment)):
        assert all(public_results(assignment, question, env)), question


@pytest.mark.extended
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_variant_scored_on_its_own_question(variant):
    assert variant.kind in ("wrong", "correct", "advised"), f"{variant.id}: header needs '# kind:'"
    env = namespace(with_answer(solution(variant.assignment), variant.question, variant.source))
    checks = all_checks()[variant.assignment]
    assert any(c.question == variant.question for c in checks.values()), "question has no checks"
    for seed in SEEDS:
        own = [run_check(env, variant.assignment, key, seed) for key, c in checks.items()
               if c.question == variant.question]
        failing = [r for r in own if not r.passed]
        if variant.kind == "correct":
            assert not failing, f"seed {seed}: {[r.message for r in failing]}"
        elif variant.kind == "advised":  # a mistake the judge only hears of: advice, no points
            assert not failing, f"seed {seed}: {[r.message for r in failing]}"
            assert variant.feedback, f"{variant.id}: header needs '# feedback:'"
            assert any(variant.feedback in r.message and r.misconception for r in own), (
                f"seed {seed}: advice {variant.feedback!r} not in {[r.message for r in own]}")
        else:
            assert failing, f"seed {seed}: a wrong implementation passed every hidden check"
            assert variant.feedback, f"{variant.id}: header needs '# feedback:'"
            assert any(variant.feedback in r.message for r in failing), (
                f"seed {seed}: feedback {variant.feedback!r} not in {[r.message for r in failing]}")
    # then the other questions' checks, at one seed: they call the solution's own functions,
    # which pass at every seed (the sweep above); what the variant can change there is shared
    # state its cells or its calls left (a mode, a rebound name), which no seed hides
    others = [r for key, c in checks.items() if c.question != variant.question
              if not (r := run_check(env, variant.assignment, key, SEEDS[0])).passed]
    assert not others, f"lost points elsewhere: {[r.message for r in others]}"


@pytest.mark.extended
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_variant_public_tests(variant):
    """Does the variant pass the public tests exactly when a student's would?"""
    env = namespace(with_answer(solution(variant.assignment), variant.question, variant.source))
    passed = public_results(variant.assignment, variant.question, env)
    assert variant.public in ("pass", "fail"), f"{variant.id}: header needs '# public:'"
    assert all(passed) == (variant.public == "pass"), f"public test results: {passed}"
