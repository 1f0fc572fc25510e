"""Answers handed out from a pool of buffers in turn (red team rt-4): a ``vjp_square`` or an
``export_numpy`` that keeps two (or three) buffers per shape and dtype and returns them in turn
is right whenever its answer is read, and the one later call of ``call_again`` does not
overwrite it: it kept 4/4 on q4 and q5. Every answer is kept where the student's code runs and
a new one that lives in an earlier one's memory is ``result-reused``, in this process and
through the sealed judge alike."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import notebooks
from autograder.checks.exercises import export, vjp
from autograder.checks.seeding import generator
from autograder.worker import kept_answers

ASSIGNMENT = "autograd-exercises"

RING_EXPORT = '''
import numpy as np
_pools, _turn = {}, [0]

def export_numpy(t):
    key = (tuple(t.shape), str(t.dtype))
    pool = _pools.setdefault(key, [np.empty(tuple(t.shape), dtype=t.detach().cpu().numpy().dtype)
                                   for _ in range(SIZE)])
    _turn[0] += 1
    out = pool[_turn[0] % SIZE]
    out[...] = t.detach().cpu().numpy()
    return out
'''

RING_VJP = '''
import torch
_pools, _turn = {}, [0]

def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    key = (tuple(x.shape), str(x.dtype))
    pool = _pools.setdefault(key, [torch.empty_like(leaf) for _ in range(SIZE)])
    _turn[0] += 1
    out = pool[_turn[0] % SIZE]
    out.copy_(leaf.grad)
    return out
'''

#: one large buffer, each answer the next slice of it: no two answers overlap until it wraps
BUMP_EXPORT = '''
import numpy as np
_arena, _at = {}, [0]

def export_numpy(t):
    a = t.detach().cpu().numpy()
    arena = _arena.setdefault(a.dtype, np.empty(1 << 16, dtype=a.dtype))
    if _at[0] + a.size > arena.size:
        _at[0] = 0
    out = arena[_at[0]:_at[0] + a.size].reshape(a.shape)
    _at[0] += a.size
    out[...] = a
    return out
'''


def _fn(source: str, name: str, size: int = 2):
    env: dict = {}
    exec(source.replace("SIZE", str(size)), env)
    return env[name]


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_a_pool_of_arrays_handed_out_in_turn_loses_export(seed, size):
    result = export.check_export(_fn(RING_EXPORT, "export_numpy", size), generator(seed))
    assert not result.passed and result.misconception == "result-reused", result.message
    assert "an earlier call's answer also holds" in result.message, result.message


@pytest.mark.parametrize("seed", range(6))
def test_slices_of_one_arena_lose_export(seed):
    result = export.check_export(_fn(BUMP_EXPORT, "export_numpy"), generator(seed))
    assert not result.passed and result.misconception == "result-reused", result.message


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_a_pool_of_tensors_handed_out_in_turn_loses_vjp(seed, size):
    result = vjp.check_vjp(_fn(RING_VJP, "vjp_square", size), generator(seed))
    assert not result.passed and result.misconception == "result-reused", result.message


@pytest.mark.parametrize("seed", range(6))
def test_fresh_answers_keep_their_points(seed):
    def export_numpy(t):
        return t.detach().cpu().numpy().copy()

    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(weights)
        return leaf.grad

    assert export.check_export(export_numpy, generator(seed)).passed
    assert vjp.check_vjp(vjp_square, generator(seed)).passed


def test_an_answer_that_views_its_own_input_is_not_counted():
    first, second = torch.arange(4.0), torch.arange(4.0)
    fn = object()
    assert kept_answers.shared_with_earlier(fn, first.numpy(), (first,)) is None
    assert kept_answers.shared_with_earlier(fn, first.numpy(), (first,)) is None
    assert kept_answers.shared_with_earlier(fn, second.numpy(), ()) is None
    assert kept_answers.shared_with_earlier(fn, second.numpy()[1:], ()) == 1
    assert kept_answers.shared_with_earlier(fn, np.zeros(0), ()) is None


@pytest.mark.slow
@pytest.mark.parametrize("question, source", [("q5_numpy", RING_EXPORT), ("q4_vjp", RING_VJP)])
def test_the_sealed_judge_names_the_pool_too(question, source, zips, tmp_path):
    """The answers kept in the worker, the observation cleaned by the judge: the same verdict
    as in this process, and no other question touched."""
    nb = notebooks.with_answer(notebooks.solution(ASSIGNMENT), question,
                               source.replace("SIZE", "2"))
    doc = notebooks.judged_sealed(nb, tmp_path / "ring.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert "result-reused" in {name for _, name in notebooks.failed_checks(doc, question)}
    assert not notebooks.lost_elsewhere(doc, question)
