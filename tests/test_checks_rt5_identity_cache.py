"""q2 ``accumulated_grad`` that caches its answer by ``w.data_ptr()`` (red team rt-5, p6): no
check called it twice on one ``w`` whose values had changed, so the stale answer never showed,
and the sealed judge decoded a fresh ``w`` for every call, so the cache could not even hit
there. ``same_objects_twice`` now changes ``w`` in place (a training step) before a third
call on the same objects, and the worker keeps the judge's tensors and modules as the same
objects between calls (``worker.kept_arguments``): the stale answer is ``answer-cached``
here and through the sealed judge."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

import notebooks
from autograder.checks.porting.microbatch import check_same_objects
from autograder.checks.seeding import generator
from autograder.running.judge.handles import ArgumentHandles
from autograder.worker import wire
from autograder.worker.main import Worker, _handle

ASSIGNMENT = "autograd-porting"

CACHED_BY_POINTER = '''
import torch
import torch.nn.functional as F

_CACHE = {}


def accumulated_grad(w, X, y, sizes):
    key = (w.data_ptr(), tuple(sizes), tuple(X.shape), X.dtype)
    if key in _CACHE:
        w.grad = _CACHE[key].clone()
        return _CACHE[key].clone()
    w.grad = None
    B, start = sum(sizes), 0
    for b in sizes:
        loss = F.binary_cross_entropy_with_logits(X[start:start + b] @ w, y[start:start + b])
        (loss * (b / B)).backward()
        start += b
    _CACHE[key] = w.grad.detach().clone()
    return w.grad.detach().clone()
'''

CACHED_BY_ID = CACHED_BY_POINTER.replace("w.data_ptr()", "id(w)")

RIGHT = CACHED_BY_POINTER.replace("if key in _CACHE:", "if False:")


@pytest.mark.parametrize("source", [CACHED_BY_POINTER, CACHED_BY_ID])
@pytest.mark.parametrize("seed", range(4))
def test_an_answer_cached_for_the_same_w_is_named(seed, source):
    result = check_same_objects(notebooks.defined(source, "accumulated_grad"), generator(seed))
    assert not result.passed and result.misconception == "answer-cached", result.message
    assert "training step" in result.message and "w.data_ptr()" in result.message


@pytest.mark.parametrize("seed", range(4))
def test_the_gradient_computed_each_call_keeps_the_point(seed):
    assert check_same_objects(notebooks.defined(RIGHT, "accumulated_grad"), generator(seed)).passed


def _call(worker: Worker, handles: ArgumentHandles, target: str, *args) -> dict:
    """One call request as ``RemoteFunction`` sends it, through JSON, into ``worker``."""
    message = {"op": "call", "target": target, "args": [wire.encode(a) for a in args],
               "kwargs": {}, "context": {}, "keep": [handles.of(a) for a in args]}
    return json.loads(json.dumps(_handle(worker, json.loads(json.dumps(message)))))


SEEN = '''
SEEN, HELD = [], []  # HELD keeps each object alive: no id is handed out again


def look(*args):
    HELD.append(args)
    SEEN.append([(id(a), a.data_ptr() if hasattr(a, "data_ptr") else None) for a in args])
    return 0


def hook(t):
    t.register_hook(lambda g: g)
    return 0


def back(t):
    (t * 3).sum().backward()
    return 0
'''


def _worker() -> Worker:
    worker = Worker()
    list(worker.each_cell([[0, SEEN]]))
    return worker


def test_the_worker_gives_the_same_object_for_the_same_judge_object():
    worker, handles = _worker(), ArgumentHandles()
    w, net = torch.randn(4, requires_grad=True), nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    for _ in range(2):
        assert "ok" in _call(worker, handles, "look", w, net)
    with torch.no_grad():
        w.add_(1.0)  # changed in place between calls, as a training step changes it
    assert "ok" in _call(worker, handles, "look", w, net)
    assert "ok" in _call(worker, handles, "look", torch.randn(4), net)  # another tensor
    seen = worker.namespace["SEEN"]
    assert seen[0] == seen[1] == seen[2], seen  # the same objects, the same memory
    assert seen[3][0] != seen[0][0] and seen[3][1] == seen[0][1]
    kept = worker.kept.arguments([wire.encode(w)], [handles.of(w)])[0]
    assert torch.equal(kept, w.detach()), "the worker's w took the judge's new values"


def test_one_judge_object_passed_twice_is_one_object_there():
    worker, handles = _worker(), ArgumentHandles()
    x = torch.randn(3)
    assert "ok" in _call(worker, handles, "look", x, x)
    (first, second), = worker.namespace["SEEN"]
    assert first == second


def test_an_argument_left_with_a_hook_is_decoded_fresh_next_time():
    worker, handles = _worker(), ArgumentHandles()
    x = torch.randn(3, requires_grad=True)
    reply = _call(worker, handles, "hook", x)
    assert reply["args_after"][0].get("hooks") == 1
    assert "ok" in _call(worker, handles, "look", x)
    assert "ok" in _call(worker, handles, "look", x)
    first, second = worker.namespace["SEEN"]
    assert first == second  # kept again from the fresh copy on


def test_a_tensor_with_a_history_arrives_with_a_graph_of_its_own_each_time():
    worker, handles = _worker(), ArgumentHandles()
    x = torch.randn(3, requires_grad=True) * 2  # not a leaf
    for _ in range(2):
        assert "ok" in _call(worker, handles, "back", x)
        assert "ok" in _call(worker, handles, "look", x)
    first, second = worker.namespace["SEEN"]
    assert first[0][0] != second[0][0], "a non-leaf is decoded fresh, with its own graph"


@pytest.mark.slow
def test_the_sealed_judge_sees_the_stale_answer_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "accumulated_grad", CACHED_BY_POINTER)
    doc = notebooks.judged_sealed(nb, tmp_path / "cached.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q2_microbatch")
    assert failed == {("same_objects_twice", "answer-cached")}, failed
    assert not notebooks.lost_elsewhere(doc, "q2_microbatch")
