"""Does the bridge from otter's hidden tests to the checks behave with missing names and seeds?"""

from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.harness import run_check


def test_missing_name_is_a_result_not_a_crash():
    result = run_check({}, "autograd-exercises", "q1_accumulation/square_grads_cleared", 42)
    assert not result.passed and result.misconception == "not-defined"
    assert result.message.startswith("square_grads is not defined")
    assert result.seed == 42 and "[grading seed 42]" in result.message


def test_same_seed_same_result():
    def wrong(p0, repeats, clear):
        return [1.0] * repeats
    first, second = (run_check({"square_grads": wrong}, "autograd-exercises",
                               "q1_accumulation/square_grads_uncleared", 7) for _ in range(2))
    assert first == second and not first.passed


def test_is_autograder_seed_read_one_way_everywhere():
    """Does every entry point read ``AUTOGRADER_SEED`` by the one rule (spaces around an integer
    allowed; empty is unset; anything else one line naming the variable)?"""
    from autograder.seed_env import seed_from

    assert [seed_from(env) for env in ({"AUTOGRADER_SEED": "17"}, {"AUTOGRADER_SEED": " 0 "},
                                       {"AUTOGRADER_SEED": ""}, {})] == [17, 0, None, None]
    with pytest.raises(ValueError, match="AUTOGRADER_SEED must be an integer, got 'x1'"):
        seed_from({"AUTOGRADER_SEED": "x1"})


def test_seed_comes_from_the_environment():
    code = "from autograder.harness import grading_seed; print(grading_seed())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"AUTOGRADER_SEED": "1234", "PATH": ""}, check=True)
    assert out.stdout.strip() == "1234"
