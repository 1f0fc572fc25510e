"""q4 ``predict_no_graph`` on a GPU: its batches arrive on the CPU, where ``batch.to(device)``
copies, so an in-place detach through ``.to`` changes nothing of the caller's batch there.
``recording.on_device`` asks once more with the batch already on the device. Here the device is
``meta`` (no GPU is lent to the suite; ``gpu/check.py`` runs the CUDA path): is the in-place
call through ``.to`` named ``in-place-on-to-result``, and do the out-of-place answers pass?
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import recording
from autograder.checks.probes import side_effects
from autograder.checks.result import PASS


def _predict(prepare):
    def predict(model, batch, device):
        model = model.to(device)
        model.eval()
        with torch.no_grad():
            return model(prepare(batch, device))
    return predict


CASES = {
    "to-then-detach_": (_predict(lambda batch, dev: batch.to(dev).detach_()),
                        "in-place-on-to-result"),
    "to-then-requires_grad_": (_predict(lambda batch, dev: batch.to(dev).requires_grad_(False)),
                               "in-place-on-to-result"),
    "to": (_predict(lambda batch, dev: batch.to(dev)), None),
    "to-then-detach": (_predict(lambda batch, dev: batch.to(dev).detach()), None),
}


@pytest.mark.parametrize("how", sorted(CASES))
def test_a_batch_already_on_the_device_is_left_as_it_came(how):
    predict, name = CASES[how]
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    _, batch = recording.draw_marked_model(rng)
    before = side_effects.snapshot(batch.requires_grad_())
    verdict = recording.on_device(PASS, predict, recording.marked_again(state), before,
                                  torch.device("meta"))
    assert verdict.ok == (name is None) and verdict.misconception == name, verdict.message
    if name:
        assert "Called with a batch on the cpu and device=meta" in verdict.message
        assert "Tensor.to returns the very same tensor, not a copy" in verdict.message


def test_on_the_cpu_nothing_more_is_asked():
    calls = []
    verdict = recording.on_device(PASS, lambda *args: calls.append(args), None, {},
                                  torch.device("cpu"))
    assert verdict is PASS and not calls
