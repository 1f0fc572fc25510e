"""Red team rt-8's findings on the porting assignment, each named or scored as it should be."""

from __future__ import annotations

import numpy as np
import torch

from autograder.checks.porting import device


def _off_by_one():
    if torch.cuda.is_available():
        return torch.device(f"cuda:{torch.cuda.device_count()}")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def test_is_a_device_index_past_the_first_named_and_shown():
    """``cuda:{device_count()}``: the right kind under every availability, a device that does
    not exist. The message said the four answers were cuda, cuda, mps, cpu: right-looking."""
    result = device.check_pick_device(_off_by_one, np.random.default_rng(0))
    assert not result.passed and result.misconception == "device-index", result.message
    assert "cuda on, mps on: cuda:1" in result.message
    assert "device indices count from 0" in result.message


def test_is_cuda_zero_still_right():
    def zero():
        return torch.device("cuda:0" if torch.cuda.is_available() else
                            "mps" if torch.backends.mps.is_available() else "cpu")

    assert device.check_pick_device(zero, np.random.default_rng(0)).passed
