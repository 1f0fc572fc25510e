"""q2 ``count_saved`` read from a table of backward rules instead of measured with hooks (red
teams rt-9, rt-10): right on every stack of Linear, ReLU, Tanh and Sigmoid, the only layers
the hidden networks had. The last network now has other activations (GELU, SiLU, Softplus,
LeakyReLU, ELU), each saving what its own backward needs; the wire carries them."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import notebooks
from autograder.checks import find
from autograder.checks.seeding import generator
from autograder.worker import wire

ASSIGNMENT = "autograd-exercises"

#: a table of the four layers' backward rules; any other layer is taken to save nothing
RULE_TABLE = '''
import torch
import torch.nn as nn


def count_saved(net, inputs, track):
    if not track:
        return 0, 0
    calls, nbytes, x, grad = 0, 0, inputs, inputs.requires_grad
    for layer in net:
        size = x.element_size()
        if isinstance(layer, nn.Linear):
            out = x.shape[0] * layer.out_features
            if grad:  # the input is saved for the weight's gradient, the weight for the input's
                calls, nbytes = calls + 1, nbytes + layer.weight.numel() * size
            calls, nbytes = calls + 1, nbytes + x.numel() * size
            grad = True
            x = torch.empty(x.shape[0], layer.out_features, dtype=x.dtype)
        elif isinstance(layer, (nn.ReLU, nn.Tanh, nn.Sigmoid)) and grad:
            calls, nbytes = calls + 1, nbytes + x.numel() * size
    return calls, nbytes
'''
CHECKS = ("q2_saved/count_saved_tracked", "q2_saved/count_saved_untracked")


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("seed", range(6))
def test_the_solution_keeps_its_points_on_every_network(check, seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    result = find(ASSIGNMENT, check)({"count_saved": env["count_saved"]}, generator(seed))
    assert result.passed, result.message


@pytest.mark.parametrize("seed", range(6))
def test_a_count_from_a_table_of_rules_loses_the_tracked_points(seed):
    fn = notebooks.defined(RULE_TABLE, "count_saved")
    result = find(ASSIGNMENT, CHECKS[0])({"count_saved": fn}, generator(seed))
    assert not result.passed, result.message
    assert any(name in result.message for name in ("GELU", "SiLU", "Softplus", "LeakyReLU",
                                                   "ELU")), result.message


@pytest.mark.parametrize("layer", [nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(),
                                   nn.Softplus(beta=2.0, threshold=5.0), nn.LeakyReLU(0.2),
                                   nn.ELU(alpha=0.5)], ids=repr)
def test_the_other_activations_cross_the_wire_as_they_are(layer):
    net = nn.Sequential(nn.Linear(3, 4), layer, nn.Linear(4, 2)).double()
    back = wire.decode_module(wire.encode_module(net))
    assert repr(back) == repr(net)
    x = torch.randn(5, 3, dtype=torch.float64)
    assert torch.equal(back(x), net(x))


@pytest.mark.parametrize("args", [{"approximate": "exact"}, {"approximate": 3}])
def test_a_gelu_of_another_approximation_is_refused(args):
    encoded = wire.encode_module(nn.Sequential(nn.Linear(2, 2), nn.GELU()))
    encoded["arch"][1][1] = args
    with pytest.raises(wire.WireError):
        wire.decode_module(encoded)


@pytest.mark.slow
def test_the_sealed_judge_asks_the_other_activations_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "count_saved", RULE_TABLE)
    doc = notebooks.judged_sealed(nb, tmp_path / "table.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert any(check == "count_saved_tracked" for check, _ in
               notebooks.failed_checks(doc, "q2_saved"))
    assert not notebooks.lost_elsewhere(doc, "q2_saved")
    right = notebooks.judged_sealed(notebooks.solution(ASSIGNMENT), tmp_path / "right.ipynb",
                                    ASSIGNMENT, zips[ASSIGNMENT])
    assert right.questions["q2_saved"].points == right.questions["q2_saved"].possible
