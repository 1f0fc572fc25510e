"""Answers at the edges of floating point never make the grader fail: every check of both
assignments, run on the solution's functions with their results poisoned (every float, or
the first one only, made inf, -inf, NaN, 1e308, a subnormal; every float scaled by 1e300;
every int made huge), returns a result. Red-team round rt-1 found three checks whose
mistake-naming probes rounded a ratio of an inf or NaN answer (``round(inf)``) and a count
from a subnormal loss: each was a grader error for the whole submission, with a message
blaming the grading image, where the answer should simply lose that check's points.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import notebooks
from autograder.checks import all_checks
from autograder.checks.result import CheckResult
from autograder.checks.seeding import generator

INF, NAN = float("inf"), float("nan")


def _tensor(t: torch.Tensor, value: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    with torch.no_grad():
        return value(t.detach().clone())


def _filled(t: torch.Tensor, p: float) -> torch.Tensor:
    try:
        return torch.full_like(t, p)
    except RuntimeError:  # beyond the dtype's range: its inf
        return torch.full_like(t, INF)


def _first(t: torch.Tensor, p: float) -> torch.Tensor:
    if t.numel():
        try:
            t.view(-1)[0] = p
        except RuntimeError:
            t.view(-1)[0] = INF
    return t


#: how one float is poisoned, and how a float tensor or array is
MODES: dict[str, tuple[Callable[[float, float], float], Callable, Callable]] = {
    "every float": (lambda v, p: p, lambda t, p: _filled(t, p),
                    lambda a, p: np.full_like(a, p)),
    "the first float": (lambda v, p: p, _first,
                        lambda a, p: np.concatenate([[p], a.reshape(-1)[1:]]).astype(a.dtype)
                        .reshape(a.shape) if a.size else a),
    "every float scaled": (lambda v, p: v * p, lambda t, p: t * p, lambda a, p: a * p),
}


def poisoned(x: Any, mode: str, p: float, first: list[bool], depth: int = 0) -> Any:
    """``x`` with its floats poisoned (``first``: whether the first float is still to come)."""
    one, tensor, array = MODES[mode]
    if depth > 6 or isinstance(x, bool):
        return x
    if mode == "the first float" and not first[0]:
        return x
    if isinstance(x, float):
        first[0] = False
        return one(x, p)
    if isinstance(x, int) and mode == "every int huge":
        return 10 ** 30
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        first[0] = False
        return _tensor(x, lambda t: tensor(t, p))
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        first[0] = False
        with np.errstate(all="ignore"):
            return array(x.copy(), p)
    if isinstance(x, list):
        return [poisoned(v, mode, p, first, depth + 1) for v in x]
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(poisoned(v, mode, p, first, depth + 1) for v in x)
    if isinstance(x, dict):
        return {k: poisoned(v, mode, p, first, depth + 1) for k, v in x.items()}
    return x


MODES["every int huge"] = MODES["every float"]


def _wrap(fn: Callable, mode: str, p: float) -> Callable:
    @functools.wraps(fn)  # ``__wrapped__``: checks that swap a function's globals find them
    def wrapped(*args, **kwargs):
        return poisoned(fn(*args, **kwargs), mode, p, [True])

    return wrapped


@functools.lru_cache(maxsize=None)
def _solution(assignment: str) -> dict[str, Any]:
    with contextlib.redirect_stdout(io.StringIO()):
        return notebooks.namespace(notebooks.solution(assignment))


CASES = [(mode, p) for mode, values in (
    ("every float", [INF, -INF, NAN, 1e308, 3.4e38, -0.0, 1e-310]),
    ("the first float", [INF, NAN, 1e308, 1e-310]),
    ("every float scaled", [1e300, -1e300, 1e-300, NAN]),
    ("every int huge", [0.0]),
) for p in values]


@pytest.mark.parametrize("assignment", sorted(all_checks()))
@pytest.mark.parametrize("mode, p", CASES, ids=[f"{m}-{p!r}" for m, p in CASES])
def test_no_check_fails_on_an_answer_at_the_edges_of_floating_point(assignment, mode, p):
    env = _solution(assignment)
    values = {k: (_wrap(v, mode, p) if inspect.isfunction(v) else
                  v if callable(v) or k.startswith("__") else poisoned(v, mode, p, [True]))
              for k, v in env.items()}
    failed = []
    for key, check in all_checks()[assignment].items():
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = check({n: values[n] for n in check.needs}, generator(0))
        except Exception as exc:  # noqa: BLE001 - what this test looks for
            failed.append(f"{key}: {type(exc).__name__}: {exc}")
            continue
        assert isinstance(result, CheckResult), key
        if mode == "every float" and not math.isfinite(p) and key.endswith("_values"):
            assert not result.passed, f"{key} passed with every float {p!r}"
    assert not failed, "\n".join(failed)
