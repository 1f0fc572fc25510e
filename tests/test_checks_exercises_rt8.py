"""Red team rt-8 on the exercises: a "noise floor" at float32's eps times the total, below the
6.5 orders of magnitude the tiny-path points reached, kept q3's 4 points. The last two points
now put one path 27 to 30 orders below the other (``multipath_points.FAR_BELOW_ORDERS``), where
a floor of any size a notebook would pick zeroes it (rt-9: 1e-10 of the total), and two
more 35 to 37.5 orders apart (``DEEPEST_ORDERS``: rt-10 set its floor at 1e-32)."""

from __future__ import annotations

import pytest

import notebooks
from autograder.checks import find
from autograder.checks.seeding import generator

ASSIGNMENT = "autograd-exercises"

NOISE_FLOOR = '''
import torch

_FLOOR = float(torch.finfo(torch.float32).eps)


def _floor(g, other):
    return 0.0 if abs(g) <= _FLOOR * (abs(g) + abs(other)) else g


def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    gx, gy = x.grad.item(), y.grad.item()
    return (_floor(gx, gy), _floor(gy, gx))


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (a * y.detach() + b ** 2).backward()
    ga, gb = a.grad.item(), b.grad.item()
    return (_floor(ga, gb), _floor(gb, ga))
'''
FLOOR_1E10 = NOISE_FLOOR.replace("float(torch.finfo(torch.float32).eps)", "1e-10")
#: just past the 30 orders the docs publish (red team rt-10)
FLOOR_1E32 = NOISE_FLOOR.replace("float(torch.finfo(torch.float32).eps)", "1e-32")
CHECKS = {"multipath_grads": "q3_multipath/multipath_grads",
          "split_path_grads": "q3_multipath/split_path_grads"}


@pytest.mark.parametrize("source", [NOISE_FLOOR, FLOOR_1E10, FLOOR_1E32])
@pytest.mark.parametrize("name", sorted(CHECKS))
@pytest.mark.parametrize("seed", range(5))
def test_is_a_noise_floor_named(name, seed, source):
    fn = notebooks.defined(source, name)
    result = find(ASSIGNMENT, CHECKS[name])({name: fn}, generator(seed))
    assert not result.passed and result.misconception == "tiny-path-zeroed", result.message


@pytest.mark.parametrize("name", sorted(CHECKS))
@pytest.mark.parametrize("seed", range(5))
def test_does_the_solution_keep_its_points_far_below_eps(name, seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    assert find(ASSIGNMENT, CHECKS[name])({name: env[name]}, generator(seed)).passed


NAN_TO_NUM = '''
import numpy as np


def export_numpy(t):
    out = t.detach().cpu().numpy().copy()
    if out.dtype.kind == "f":
        np.nan_to_num(out, copy=False)
    return out
'''


@pytest.mark.parametrize("seed", range(4))
def test_is_an_export_that_replaces_nan_and_inf_named(seed):
    """rt-9: np.nan_to_num on the copy, right on every finite tensor."""
    result = find(ASSIGNMENT, "q5_numpy/export_numpy_values")(
        {"export_numpy": notebooks.defined(NAN_TO_NUM, "export_numpy")}, generator(seed))
    assert not result.passed and result.misconception == "non-finite-changed", result.message


@pytest.mark.parametrize("seed", range(4))
def test_does_the_solutions_export_copy_nan_and_inf(seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    assert find(ASSIGNMENT, "q5_numpy/export_numpy_values")(
        {"export_numpy": env["export_numpy"]}, generator(seed)).passed


@pytest.mark.slow
def test_does_the_sealed_judge_name_nan_made_finite_in_a_strict_json_document(zips, tmp_path):
    import json

    nb = notebooks.solution_with(ASSIGNMENT, "export_numpy", NAN_TO_NUM)
    doc = notebooks.judged_sealed(nb, tmp_path / "nan.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert notebooks.failed_checks(doc, "q5_numpy") == {("export_numpy_values",
                                                         "non-finite-changed")}
    assert not notebooks.lost_elsewhere(doc, "q5_numpy")
    json.dumps(doc.to_dict(), allow_nan=False)  # its evidence holds no NaN number
