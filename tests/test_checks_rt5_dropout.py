"""q4 ``predict`` that sets each Dropout layer's ``p`` to 0 on the caller's model instead of
calling ``eval()`` (red team rt-5): its answers were right and it kept 6/6, though the caller's
model trains without dropout afterwards. A changed ``p`` is ``modified-input`` now, here and
through the sealed judge, which mirrors each Dropout's ``p`` back. Since the test model has
a batch-norm layer too, the answer is also wrong (training mode): the message says both."""

from __future__ import annotations

import pytest

import notebooks
from autograder.checks.porting.device_predict import check_predict
from autograder.checks.seeding import generator

ASSIGNMENT = "autograd-porting"

RATES_ZEROED = '''
import torch


def predict(model, batch, device):
    model.to(device)
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    with torch.no_grad():
        return model(batch.to(device))
'''

RIGHT = '''
import torch


def predict(model, batch, device):
    model.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch.to(device))
'''


@pytest.mark.parametrize("seed", range(4))
def test_dropout_rates_set_by_hand_are_a_modified_input(seed):
    result = check_predict(notebooks.defined(RATES_ZEROED, "predict"), generator(seed), moved=False)
    assert not result.passed and result.misconception == "modified-input", result.message
    assert "has p=0 now" in result.message, result.message


@pytest.mark.parametrize("seed", range(4))
def test_eval_keeps_the_points(seed):
    assert check_predict(notebooks.defined(RIGHT, "predict"), generator(seed), moved=False).passed


@pytest.mark.slow
def test_the_sealed_judge_sees_the_rates_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "predict", RATES_ZEROED)
    doc = notebooks.judged_sealed(nb, tmp_path / "rates.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q4_device")
    assert ("predict_values", "modified-input") in failed, failed
    assert not notebooks.lost_elsewhere(doc, "q4_device")
