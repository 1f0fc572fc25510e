"""A ``predict`` that loses the model's weights answers with whatever the memory held. Fresh
memory from ``to_empty`` is often all zeros, and so is a threshold of the grader's output
(``softmax(output) > 0.5`` with three classes or more), so the answer's values alone once named
``output-transformed`` on some runs (1 in about 50 of the to_empty predict's test). The lost
weights are observed on the caller's model and come first; a real transform keeps its name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.porting import device_predict

SEEDS = (0, 1, 2, 7)


def zeroed(model, batch, device_):
    """The weights filled with zeros (``zero_()`` on each parameter): every output is zero."""
    model.to(device_).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        return model(batch.to(device_))


def emptied_to_zeros(model, batch, device_):
    """``to_empty`` on memory that came back zeroed, as fresh pages do: the same values."""
    model.to_empty(device=device_).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.zeros_like(p))
        return model(batch.to(device_))


def zeros_then_relu(model, batch, device_):
    model.to(device_).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        return torch.relu(model(batch.to(device_)))


def thresholded(model, batch, device_):
    """A right model, its output thresholded: a transform, the weights untouched."""
    model.to(device_).eval()
    with torch.no_grad():
        return (torch.softmax(model(batch.to(device_)), -1) > 0.5).float()


@pytest.mark.parametrize("predict", [zeroed, emptied_to_zeros, zeros_then_relu],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", SEEDS)
def test_lost_weights_are_named_before_a_transform_read_from_zeros(predict, seed):
    result = device_predict.check_predict(predict, np.random.default_rng(seed), moved=False)
    assert not result.passed and result.misconception == "weights-lost", result.message
    assert "final transform" not in result.message, result.message
    assert "not the ones it came with" in result.message, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_a_transform_with_the_weights_kept_keeps_its_name(seed):
    result = device_predict.check_predict(thresholded, np.random.default_rng(seed), moved=False)
    assert not result.passed and result.misconception == "output-transformed", result.message
