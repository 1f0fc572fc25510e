"""``check_my_op`` written as something other than a plain ``def`` (blind round zzzg: a
callable instance, ``check_my_op = _GradChecker()``): the checks that put a broken op in
place of ``my_op`` for the call (``swap_globals``) found no ``__globals__`` on it and charged
the student with the grader's ``TypeError``, "has no globals to swap". The names it reads
are now those of the function behind it (``arrangements.globals_of``): a callable instance's
``__call__``, a bound method's function, a ``functools.partial``'s ``func``. What has no
module names at all is told how to define it instead."""

from __future__ import annotations

import functools

import pytest

import notebooks
from autograder.checks import find
from autograder.checks.seeding import generator
from autograder.worker.arrangements import globals_of, swapped_globals

ASSIGNMENT = "autograd-porting"

CHECKER = '''
class _GradChecker:
    """gradcheck with the contract's settings, as an object."""

    def __init__(self, eps=1e-6, atol=1e-8):
        self.eps, self.atol = eps, atol

    def __call__(self, x):
        x64 = x.detach().to(torch.float64).clone().requires_grad_(True)
        return torch.autograd.gradcheck(my_op, (x64,), eps=self.eps, atol=self.atol,
                                        raise_exception=False)

    def check(self, x):
        return self(x)
'''

#: the styles: a callable instance, a bound method, a partial of a def
STYLES = {
    "instance": CHECKER + "\ncheck_my_op = _GradChecker()\n",
    "method": CHECKER + "\ncheck_my_op = _GradChecker().check\n",
    "partial": '''
import functools


def _check(x, eps, atol):
    x64 = x.detach().to(torch.float64).clone().requires_grad_(True)
    return torch.autograd.gradcheck(my_op, (x64,), eps=eps, atol=atol, raise_exception=False)


check_my_op = functools.partial(_check, eps=1e-6, atol=1e-8)
''',
}

CHECKS = ("q3_gradcheck/check_my_op", "q3_gradcheck/check_my_op_at_x")


def _space() -> dict:
    return {"torch": __import__("torch")}


def test_are_the_names_behind_each_callable_found():
    space = _space()
    exec(CHECKER + "\ndef plain(x):\n    return x\n", space)
    checker = space["_GradChecker"]()
    for fn in (checker, checker.check, functools.partial(space["plain"]), space["plain"],
               functools.wraps(space["plain"])(lambda x: x)):
        assert globals_of(fn) is space, fn  # the wrapper's own: the function it wraps


def test_is_a_callable_without_module_names_told_how_to_define_it():
    assert globals_of(len) is None and globals_of(str) is None
    with pytest.raises(TypeError, match="reads no module's names, so the grader cannot put its "
                       "test op in place of my_op for the call: define it with def"):
        with swapped_globals(len, {"my_op": None}):
            pass


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("seed", range(2))
def test_does_a_checker_of_each_style_keep_its_points(style, seed):
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "check_my_op", STYLES[style]))
    for key in CHECKS:
        result = find(ASSIGNMENT, key)({"check_my_op": env["check_my_op"]}, generator(seed))
        assert result.passed, (style, key, result.message)


@pytest.mark.slow
def test_does_the_sealed_judge_give_a_callable_instance_its_points(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "check_my_op", STYLES["instance"])
    doc = notebooks.judged_sealed(nb, tmp_path / "instance.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    q3 = doc.questions["q3_gradcheck"]
    assert q3.points == q3.possible, notebooks.failed_checks(doc, "q3_gradcheck")
    assert not notebooks.lost_elsewhere(doc, "q3_gradcheck")
