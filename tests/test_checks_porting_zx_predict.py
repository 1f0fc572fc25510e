"""Blind round zx's q4 class that lost points without its cause: ``predict`` returning its
output through a final transform the contract does not ask for (``output-transformed``):
softmax over any dim, log_softmax, sigmoid, tanh, relu, argmax, probabilities thresholded;
with the near-misses that must keep their verdicts (the output as it is in several styles,
other named mistakes, a transform the drawn data cannot tell from the identity).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks.porting import device_predict, device_transform, recording
from autograder.worker.wire import RECORDING_MARK


def _predict(after, grad=False):
    def predict(model, batch, device):
        model.to(device)
        model.eval()
        batch = batch.to(device)
        if grad:  # records, then detaches: the mistake predict_no_graph measures
            return after(model(batch).detach())
        with torch.no_grad():
            output = model(batch)
        return after(output)
    return predict


TRANSFORMED = {  # blind round zx's porting/student_02 first
    "softmax-dim-minus-1": (_predict(lambda out: torch.softmax(out, dim=-1)), "softmax"),
    "F.softmax-dim-1": (_predict(lambda out: F.softmax(out, dim=1)), "softmax"),
    "method-softmax": (_predict(lambda out: out.softmax(1)), "softmax"),
    "nn.Softmax": (_predict(lambda out: nn.Softmax(dim=-1)(out)), "softmax"),
    "exp-log-softmax": (_predict(lambda out: out.log_softmax(-1).exp()), "softmax"),
    "softmax-dim-0": (_predict(lambda out: torch.softmax(out, dim=0)), "dim=0) (across the batch)"),
    "log-softmax": (_predict(lambda out: F.log_softmax(out, dim=-1)), "log_softmax"),
    "sigmoid": (_predict(torch.sigmoid), "sigmoid"),
    "method-sigmoid": (_predict(lambda out: out.sigmoid()), "sigmoid"),
    "tanh": (_predict(torch.tanh), "tanh"),
    "relu": (_predict(F.relu), "relu"),
    "argmax": (_predict(lambda out: out.argmax(dim=-1)), "argmax"),
    "softmax-then-argmax": (_predict(lambda out: torch.softmax(out, 1).argmax(1)), "argmax"),
    "max-indices": (_predict(lambda out: torch.max(out, 1)[1]), "argmax"),
    "argmax-keepdim": (_predict(lambda out: out.argmax(-1, keepdim=True)), "keepdim"),
    "argmax-float": (_predict(lambda out: out.argmax(-1).float()), "argmax"),
    "one-hot": (_predict(lambda out: F.one_hot(out.argmax(-1), out.shape[-1])), "one_hot(argmax"),
    "sigmoid-thresholded": (_predict(lambda out: (torch.sigmoid(out) > 0.5).float()),
                            "thresholded"),
    "positive-bool": (_predict(lambda out: out > 0), "thresholded"),
    "sigmoid-rounded": (_predict(lambda out: torch.round(torch.sigmoid(out))), "thresholded"),
    "softmax-thresholded": (_predict(lambda out: (torch.softmax(out, -1) > 0.5).long()),
                            "softmax(output, dim=-1) > 0.5"),
}


@pytest.mark.parametrize("how", list(TRANSFORMED))
def test_a_transformed_output_is_named(how):
    fn, words = TRANSFORMED[how]
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert not result.passed, how
    assert result.misconception == "output-transformed", result.message
    assert words in result.message, result.message
    assert "model's output as it is" in result.message, result.message
    assert "Checked without finding the cause" not in result.message, result.message


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("how", ["softmax-dim-minus-1", "sigmoid", "argmax", "relu",
                                 "positive-bool"])
def test_named_at_other_seeds(how, seed):
    fn, words = TRANSFORMED[how]
    result = device_predict.check_predict(fn, np.random.default_rng(seed), moved=False)
    assert result.misconception == "output-transformed", result.message
    assert words in result.message, result.message


def test_the_blind_students_softmax_is_told_in_predict_no_graph_too():
    """The same wrong answer on the test model: named there as well (the check reads the
    answer's values, as it does for every other wrong value)."""
    result = recording.check_predict_no_graph(TRANSFORMED["softmax-dim-minus-1"][0],
                                              np.random.default_rng(0))
    assert not result.passed
    assert result.misconception == "output-transformed", result.message
    assert "softmax(output, dim=-1)" in result.message, result.message


def test_a_softmax_of_a_recorded_forward_is_told_the_transform_only():
    """softmax(out + 1) is softmax(out): the mark cannot show the recording through it, so
    only the transform is told (nothing is said of the graph)."""
    result = recording.check_predict_no_graph(_predict(lambda out: out.softmax(-1), grad=True),
                                              np.random.default_rng(0))
    assert result.misconception == "output-transformed", result.message
    assert "record" not in result.message, result.message


@pytest.mark.parametrize("after", [torch.sigmoid, torch.tanh])
def test_a_transform_of_a_recorded_forward_is_told_both(after):
    result = recording.check_predict_no_graph(_predict(after, grad=True),
                                              np.random.default_rng(0))
    assert not result.passed
    assert result.misconception == "graph-recorded", result.message
    assert after.__name__ in result.message and "recording on" in result.message, \
        result.message
    assert "model's output as it is" in result.message, result.message


# --- a one-output model (drawn last): softmax is all 1.0 there --------------------------------


def test_softmax_of_a_one_output_model_is_named():
    fn = _predict(lambda out: out if out.shape[-1] > 1 else torch.softmax(out, -1))
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert result.misconception == "output-transformed", result.message
    # all 1.0 is also one-hot argmax and softmax thresholded at 0.5: each is told
    assert "any of softmax(output, dim=-1), " in result.message, result.message
    assert "one_hot(argmax" in result.message and "> 0.5" in result.message, result.message


def test_sigmoid_of_a_one_output_model_is_named():
    fn = _predict(lambda out: out if out.shape[-1] > 1 else torch.sigmoid(out))
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert result.misconception == "output-transformed", result.message
    assert "That is sigmoid(output), with" in result.message, result.message


def test_a_squeezed_one_output_model_stays_squeezed():
    fn = _predict(lambda out: out if out.shape[-1] > 1 else out.squeeze(-1))
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert result.misconception == "output-squeezed", result.message


def test_ones_of_a_one_output_model_squeezed_are_not_named():
    """All 1.0 of shape (n,): no transform the grader tries makes that shape of ones."""
    fn = _predict(lambda out: out if out.shape[-1] > 1 else torch.ones(out.shape[0]))
    result = device_predict.check_predict(fn, np.random.default_rng(0), moved=False)
    assert not result.passed
    assert result.misconception != "output-transformed", result.message


# --- near-misses ---------------------------------------------------------------------------------


def _inference(model, batch, device):
    model = model.to(device).eval()
    with torch.inference_mode():
        return model(batch.to(device))


RIGHT = {
    "as-is": _predict(lambda out: out),
    "inference-mode": _inference,
    "clone": _predict(lambda out: out.clone()),
    "forward": _predict(lambda out: out.view(out.shape)),
}


@pytest.mark.parametrize("how", list(RIGHT))
def test_the_output_as_it_is_passes(how):
    for seed in (0, 1):
        for moved in (False, True):
            assert device_predict.check_predict(RIGHT[how], np.random.default_rng(seed),
                                                moved=moved).passed, (how, seed, moved)
        assert recording.check_predict_no_graph(RIGHT[how], np.random.default_rng(seed)).passed


@pytest.mark.parametrize("after", [lambda out: out * 2, lambda out: out + 1,
                                   lambda out: -out, lambda out: out.abs(),
                                   lambda out: torch.exp(out)])
def test_other_wrong_values_are_not_named_transformed(after):
    result = device_predict.check_predict(_predict(after), np.random.default_rng(0),
                                          moved=False)
    assert not result.passed
    assert result.misconception != "output-transformed", result.message


def test_a_missing_eval_keeps_its_name_even_with_a_softmax():
    def predict(model, batch, device):
        model.to(device)
        with torch.no_grad():
            return torch.softmax(model(batch.to(device)), -1)

    result = device_predict.check_predict(predict, np.random.default_rng(0), moved=False)
    assert result.misconception == "eval-missing", result.message


def test_a_softmax_on_meta_is_not_named():
    """meta holds no values: the shape and dtype are the output's, nothing can be named."""
    result = device_predict.check_predict(TRANSFORMED["softmax-dim-minus-1"][0],
                                          np.random.default_rng(0), moved=True)
    if result.passed:  # no GPU here: the move is to meta
        return
    assert result.misconception == "output-transformed", result.message  # on CUDA


# --- the matching itself: a transform the data cannot tell from the identity ---------------------


def _judged(got, expected):
    return device_predict.judge_prediction(got, 0, nn.Linear(1, 1).eval(), expected,
                                           torch.device("cpu"))


def test_relu_of_an_all_positive_output_is_not_claimed():
    """relu(e) is e when every entry is positive: an answer off by a little more than the
    check's tolerance matches relu(e) as closely as e itself, and relu is not told."""
    expected = torch.rand(4, 3) + 0.5
    got = expected * (1 + 5e-5)
    verdict = _judged(got, expected)
    assert not verdict.ok
    assert verdict.misconception != "output-transformed", verdict.message
    assert device_transform.fitting(got, expected) == []


def test_relu_with_negative_entries_is_claimed():
    expected = torch.tensor([[0.5, -0.25, 1.0], [-1.0, 2.0, 0.125]])
    verdict = _judged(torch.relu(expected), expected)
    assert verdict.misconception == "output-transformed", verdict.message
    assert device_transform.fitting(torch.relu(expected), expected) == ["relu(output)"]


def test_transforms_that_agree_on_the_data_are_all_told():
    """An all-negative one-output model: log_softmax, relu and a threshold all give 0."""
    expected = -torch.rand(5, 1) - 0.1
    found = device_transform.fitting(torch.zeros(5, 1), expected)
    assert {f.split("(")[0] for f in found} >= {"log_softmax", "relu"}, found
    verdict = _judged(torch.zeros(5, 1), expected)
    assert verdict.misconception == "output-transformed"
    assert all(f in verdict.message for f in found), verdict.message


def test_the_recording_mark_is_one():
    assert RECORDING_MARK == 1  # softmax's invariance to it is what the test above relies on


def test_a_transform_of_an_output_off_within_the_checks_tolerance_is_named():
    """On a GPU the student's float32 output differs from the grader's CPU reference by up to
    the check's tolerance (rtol=1e-5, atol=1e-6); its softmax by about twice as much."""
    gen = torch.Generator().manual_seed(0)
    expected = torch.randn(6, 5, generator=gen) * 3
    wobble = (torch.rand(6, 5, generator=gen) * 2 - 1)
    on_gpu = expected + wobble * (1e-6 + 1e-5 * expected.abs())
    for after, words in [(lambda o: torch.softmax(o, -1), "softmax(output, dim=-1)"),
                         (torch.sigmoid, "sigmoid"), (lambda o: o.log_softmax(0), "dim=0")]:
        verdict = _judged(after(on_gpu), expected)
        assert verdict.misconception == "output-transformed", verdict.message
        assert words in verdict.message, verdict.message
