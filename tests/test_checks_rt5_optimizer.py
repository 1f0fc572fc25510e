"""q4 ``make_optimizer`` that returns a subclass of SGD named ``SGD`` whose ``step`` adds
momentum, weight decay and three times the lr (red team rt-5): ``isinstance`` passed it here,
and the worker sent its class's bare name, so the judge rebuilt it as torch's SGD; it kept 6/6.
torch's class itself is asked for now, and the wire names any other class by its module."""

from __future__ import annotations

import pytest
import torch

import notebooks
from autograder.checks.porting.device import check_make_optimizer
from autograder.checks.seeding import generator
from autograder.worker.wire.encoding import encode_optimizer

ASSIGNMENT = "autograd-porting"

SUBCLASS = '''
import torch


class SGD(torch.optim.SGD):
    """Looks like torch's; steps with momentum, weight decay and a larger lr."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p -= 3 * group["lr"] * (p.grad + 0.01 * p)


def make_optimizer(model, device, lr):
    model.to(device)
    return SGD(model.parameters(), lr=lr)
'''


def _fn(source: str):
    env: dict = {"__name__": "__main__"}
    exec(source, env)
    return env["make_optimizer"]


@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_subclass_named_sgd_is_not_sgd(seed, moved):
    result = check_make_optimizer(_fn(SUBCLASS), generator(seed), moved=moved)
    assert not result.passed and result.misconception == "not-sgd", result.message
    assert "subclass of SGD" in result.message, result.message


def test_the_wire_names_a_subclass_by_its_module():
    model = torch.nn.Linear(2, 1)
    sub = _fn(SUBCLASS)(model, torch.device("cpu"), 0.1)
    assert encode_optimizer(sub, 0)["type"] == "__main__.SGD"
    assert encode_optimizer(torch.optim.SGD(model.parameters(), lr=0.1), 0)["type"] == "SGD"


@pytest.mark.slow
def test_the_sealed_judge_takes_the_points_too(zips, tmp_path):
    nb = notebooks.with_answer(notebooks.solution(ASSIGNMENT), "q4_device", SUBCLASS)
    doc = notebooks.judged_sealed(nb, tmp_path / "subclass.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q4_device")
    assert ("make_optimizer", "not-sgd") in failed, failed
    assert ("make_optimizer_after_move", "not-sgd") in failed, failed
    assert not notebooks.lost_elsewhere(doc, "q4_device")
