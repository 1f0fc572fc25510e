"""q4 ``predict`` that is not in eval mode for its forward although it looks it (red team rt-10,
rt-9): dropout turned off by hand, ``model.training = False`` set on the outer module only.
The test model holds a batch-norm layer whose running statistics are far from any batch's,
so each of these answers wrong, and is named ``eval-missing`` with what was left in
training mode. The wire carries the batch-norm layer and each layer's own mode, so the
sealed judge sees what an in-process run sees."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import notebooks
from autograder.checks.porting.device_predict import check_predict
from autograder.checks.seeding import generator
from autograder.worker import wire

ASSIGNMENT = "autograd-porting"

HEAD = '''
import torch


def predict(model, batch, device):
    model.to(device)
'''
RIGHT = HEAD + '''    model.eval()
    with torch.no_grad():
        return model(batch.to(device))
'''
RESTORED = HEAD + '''    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            return model(batch.to(device))
    finally:
        model.train(was)
'''
DROPOUT_ONLY = HEAD + '''    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.eval()
    with torch.no_grad():
        return model(batch.to(device))
'''
OUTER_FLAG = HEAD + '''    model.training = False
    with torch.no_grad():
        return model(batch.to(device))
'''
OUTER_FLAG_AND_DROPOUT = HEAD + '''    model.training = False
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.eval()
    with torch.no_grad():
        return model(batch.to(device))
'''
EVAL_AFTER = HEAD + '''    with torch.no_grad():
        out = model(batch.to(device))
    model.eval()
    return out
'''

WRONG = {
    "dropout-only": (DROPOUT_ONLY, "The model is still in training mode, so batch "
                                   "normalisation used the batch's own statistics"),
    "outer-flag": (OUTER_FLAG, "its layers 1 (BatchNorm1d), 3 (Dropout) are still in "
                               "training mode, so dropout zeroed some units and batch"),
    "outer-flag-and-dropout": (OUTER_FLAG_AND_DROPOUT, "its layers 1 (BatchNorm1d) are still "
                                                       "in training mode, so batch"),
    "eval-after": (EVAL_AFTER, "only the batch-norm layer's running statistics changed"),
}


@pytest.mark.parametrize("source", [RIGHT, RESTORED], ids=["eval", "eval-then-restored"])
@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_eval_mode_keeps_the_points(source, moved, seed):
    result = check_predict(notebooks.defined(source, "predict"), generator(seed), moved=moved)
    assert result.passed, result.message


@pytest.mark.parametrize("case", sorted(WRONG))
@pytest.mark.parametrize("seed", range(3))
def test_a_forward_not_in_eval_mode_is_named(case, seed):
    source, told = WRONG[case]
    result = check_predict(notebooks.defined(source, "predict"), generator(seed), moved=False)
    assert not result.passed and result.misconception == "eval-missing", result.message
    assert told in result.message, result.message


@pytest.mark.parametrize("case", sorted(WRONG))
def test_on_meta_the_batch_of_one_row_tells_batch_norm(case):
    """On ``meta`` (no values) the batch of one row shows it: a training-mode batch norm
    raises there, and the message says what that error means."""
    result = check_predict(notebooks.defined(WRONG[case][0], "predict"), generator(0),
                           moved=True)
    if torch.cuda.is_available():
        pytest.skip("the move is to CUDA here, where the values show it")
    assert not result.passed and result.misconception == "eval-missing", result.message
    assert "refusal of a batch-norm layer in training mode on a batch of one row" \
        in result.message, result.message


@pytest.mark.parametrize("kwargs", [{}, {"bias": False}, {"affine": False},
                                    {"track_running_stats": False}, {"momentum": None}],
                         ids=["default", "no-bias", "no-affine", "no-running", "cumulative"])
def test_batch_norm_and_each_layers_mode_cross_the_wire(kwargs):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, **kwargs), nn.ReLU(),
                          nn.Dropout(0.3), nn.Linear(4, 2))
    norm = model[1]
    if norm.running_mean is not None:
        with torch.no_grad():
            norm.running_mean.uniform_(-1, 1)
            norm.running_var.uniform_(0.5, 2)
            norm.num_batches_tracked.fill_(7)
    if norm.weight is not None:
        norm.weight.requires_grad_(False)
    model.train()
    model[3].eval()
    model.training = False
    back = wire.decode_module(wire.encode_module(model))
    assert repr(back) == repr(model)
    ours, theirs = model.state_dict(keep_vars=True), back.state_dict(keep_vars=True)
    assert list(ours) == list(theirs)
    for name, tensor in ours.items():
        assert torch.equal(tensor, theirs[name]) and tensor.dtype == theirs[name].dtype, name
        assert tensor.requires_grad == theirs[name].requires_grad, name
    assert [m.training for m in back.modules()] == [m.training for m in model.modules()]
    batch = torch.randn(5, 3)
    with torch.no_grad():
        assert torch.equal(model.eval()(batch), back.eval()(batch))


def test_a_module_whose_modes_do_not_fit_its_layers_is_left_as_its_flag_says():
    encoded = wire.encode_module(nn.Sequential(nn.Linear(2, 2), nn.Dropout()).eval())
    encoded["modes"] = [True]  # one mode for two layers: ignored
    assert not any(m.training for m in wire.decode_module(encoded).modules())


@pytest.mark.slow
@pytest.mark.parametrize("case", ["dropout-only", "outer-flag"])
def test_the_sealed_judge_sees_the_layers_modes(case, zips, tmp_path):
    source, told = WRONG[case]
    nb = notebooks.solution_with(ASSIGNMENT, "predict", source)
    doc = notebooks.judged_sealed(nb, tmp_path / f"{case}.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q4_device")
    assert ("predict_values", "eval-missing") in failed, failed
    assert not notebooks.lost_elsewhere(doc, "q4_device")
    messages = [c.message for t in doc.questions["q4_device"].tests for c in t.checks or ()
                if c.check == "predict_values"]
    assert any(told in m for m in messages), messages


def test_an_optimizer_over_the_state_dict_crosses_the_wire():
    """An SGD over ``model.state_dict().values()`` (round v's student_01) holds the batch-norm
    layer's step count, an int64 tensor: the judge reads it, and the check says the optimizer
    holds tensors that are not the model's parameters, rather than 'unreadable answer'."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.state_dict().values(), lr=0.1)
    back = wire.decode_optimizer(wire.encode_optimizer(opt, 0), 0)
    sent = [p for group in opt.param_groups for p in group["params"]]
    got = [p for group in back.param_groups for p in group["params"]]
    assert [t.dtype for t in got] == [t.dtype for t in sent]
    assert all(torch.equal(a, b) for a, b in zip(got, sent))
    assert [t.requires_grad for t in got] == [t.is_floating_point() for t in sent]
