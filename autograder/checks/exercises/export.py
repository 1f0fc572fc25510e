"""q5_numpy: leaving autograd, an independent NumPy copy of a tensor.

The reference values come from ``t.tolist()``, which never shares memory, cast to the numpy
dtype matching ``t.dtype``. Independence is proven by writing to the returned array and checking
that ``t`` (and, for a view, the tensor it views) did not change.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..calling import call, call_then_again
from ..describing import describe, plain
from ..probes import InputClass, Subject, explain, numbers_of
from ..result import PASS, CheckResult, Evidence, Verdict, finish
from ..seeding import seed_of
from .common import NUMPY_DTYPES, dtype_name, flat, handed_out_again, renamed, reused, short
from .export_cached import changed_in_place
from .export_causes import dims_added, draw_one_element, draw_zero_dim, one_number, raised_cause
from .export_float import draw_large, large_ints
from .export_layout import judge_layout, layout_of
from .export_nonfinite import non_finite
from .export_offset import draw_offset_view
from .export_scalar import ZERO_DIM_SCALAR, zero_dim_scalar
from .export_shape import arranged, confirm, shape_cause
from .export_values import value_cause

QUESTION = "q5_numpy"
EXPORT = "t.detach().cpu().numpy().copy()"
TRACKED_HINT = (f".numpy() refuses a tensor that requires grad. Detach it first: {EXPORT}, or "
                "np.array(t.detach()).")


def _tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype: torch.dtype,
            tracked: bool) -> torch.Tensor:
    """A tensor with values from ``rng``; ints stay small so that they print readably."""
    if dtype == torch.int64:
        return torch.from_numpy(rng.integers(-50, 50, size=shape))
    values = torch.from_numpy(rng.uniform(-10.0, 10.0, size=shape)).to(dtype)
    return values.requires_grad_(tracked)


def draw_tensors(rng: np.random.Generator) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """``(t, base)`` pairs: plain, tracked, int64, and non-contiguous views (``base`` is viewed).

    Views of a tracked leaf are non-leaf tensors that still require grad, as in a real graph.
    """
    def dims() -> tuple[int, int]:
        return int(rng.integers(2, 5)), int(rng.integers(2, 6))

    float_dtype = [torch.float32, torch.float64][int(rng.integers(2))]
    transposed = _tensor(rng, dims(), float_dtype, tracked=True)
    strided = _tensor(rng, dims(), torch.int64, tracked=False)
    cases = [
        (_tensor(rng, dims(), torch.float32, tracked=False), None),
        (_tensor(rng, (int(rng.integers(1, 7)),), torch.float64, tracked=True), None),
        (_tensor(rng, dims(), torch.int64, tracked=False), None),
        (transposed.t(), transposed),
        (strided[:, ::2], strided),
    ]
    # the input classes the contract allows beyond those, drawn last so that the cases above
    # stay those of earlier runs with the same seed: a size-1 dimension on a tracked leaf that
    # carries a stale .grad, and a size-1 column sliced out of a wider tensor (non-contiguous)
    n = int(rng.integers(2, 6))
    row = _tensor(rng, (1, n), float_dtype, tracked=True)
    row.grad = torch.ones_like(row)
    wide = _tensor(rng, (n, int(rng.integers(2, 5))), torch.float64, tracked=False)
    return cases + [(row, None), (wide[:, 1:2], wide)]


def draw_twins(rng: np.random.Generator,
               cases: list[tuple[torch.Tensor, torch.Tensor | None]]) -> list[torch.Tensor]:
    """For each tensor, another in its class (shape, dtype, strides, ``requires_grad``, a
    view of a base like its own) with other values: the grader's other input for a second call
    (``call_again``)."""
    twins = []
    for t, base in cases:
        whole = t if base is None else base
        values = _tensor(rng, tuple(whole.shape), whole.dtype, tracked=False)
        twin = values.as_strided(whole.size(), whole.stride()).requires_grad_(whole.requires_grad)
        if whole.grad is not None:
            twin.grad = whole.grad.clone()
        twins.append(twin if base is None else
                     twin.as_strided(t.size(), t.stride(), t.storage_offset()))
    return twins


def expected_array(t: torch.Tensor) -> np.ndarray:
    """t's values in the numpy dtype matching t's, built without sharing any memory, in t's
    shape (a list loses an empty tensor's: ``(0, 3)`` would come back ``(0,)``)."""
    return np.array(t.detach().cpu().tolist(), dtype=NUMPY_DTYPES[t.dtype]).reshape(
        tuple(t.shape))


def describe_tensor(t: torch.Tensor) -> str:
    """``tensor (3, 2) float32, requires_grad, non-contiguous`` for messages."""
    flags = [", requires_grad" if t.requires_grad else "",
             "" if t.is_contiguous() else ", non-contiguous"]
    return f"tensor {tuple(t.shape)} {dtype_name(t.dtype)}{''.join(flags)}"


def judge_export(got: Any, t: torch.Tensor, expected: np.ndarray | None = None) -> Verdict:
    """Type, then shape, then dtype, then (exact) values of ``export_numpy(t)``.

    Args:
        got: what ``export_numpy(t)`` returned.
        t: the tensor exported.
        expected: ``expected_array(t)`` taken before the call (default: computed now).
    """
    expected = expected_array(t) if expected is None else expected
    shown = f"export_numpy({describe_tensor(t)})"
    evidence = Evidence({"t": plain(t)}, expected.tolist(), plain(got), tolerance="exact")
    if not isinstance(got, np.ndarray):
        scalar = zero_dim_scalar(got, t)
        hint = scalar or (" Convert the tensor itself, not one element: .item() and .tolist() "
                          "leave NumPy." if isinstance(got, (float, int, list)) else "")
        return Verdict(False, f"{shown} returned {describe(got)}; expected a numpy.ndarray.{hint}",
                       ZERO_DIM_SCALAR if scalar else "wrong-type", evidence)
    if got.shape != tuple(t.shape):
        hint, name = (f"{one_number(got, t, expected, EXPORT)}"
                      f"{dims_added(got, t, expected, EXPORT)}"), "wrong-shape"
        if not hint:
            hint, name = shape_cause(got, t, expected, EXPORT)
        return Verdict(False, f"{shown} returned shape {got.shape}; expected t's shape "
                       f"{tuple(t.shape)}.{hint}", name, evidence)
    if got.dtype != expected.dtype:
        swapped = got.dtype.newbyteorder("=") == expected.dtype  # red team rt-10: '>f4'
        order = "big" if got.dtype.byteorder == ">" else "little"
        how = (f"the same type in the other byte order ({order}-endian), "
               f"which NumPy compares unequal to {expected.dtype} and every consumer must "
               "swap back: the export changed the byte order (newbyteorder, byteswap, a "
               "'>f4' dtype string)" if swapped else
               "the export changed the dtype (going through Python lists or astype does that)")
        return Verdict(False, f"{shown} returned dtype {got.dtype}; expected {expected.dtype}, "
                       f"t's own: {how}. Keep it with {EXPORT}.", "dtype-changed", evidence)
    if not np.array_equal(got, expected):
        wrong = int(np.sum(got != expected))
        hint, name = value_cause(got, t, expected, EXPORT)
        shown_got, shown_expected = large_ints(got) or short(got), (
            large_ints(expected) or short(expected))
        return Verdict(False, f"{shown} returned {shown_got}; expected {shown_expected} "
                       f"({wrong} entries differ; an export must copy values exactly).{hint}",
                       name if hint else None, evidence)
    return Verdict(True, evidence=evidence)


def judge_independent(got: np.ndarray, t: torch.Tensor, before: torch.Tensor,
                      base: torch.Tensor | None, base_before: torch.Tensor | None,
                      requires_grad: bool) -> Verdict:
    """Write to ``got``; ``t`` (and the ``base`` it views) must keep their values and flag.

    Args:
        got: the exported array (already judged a numpy.ndarray holding t's values in t's
            shape or a reshaping of it: its shape is ``judge_export``'s to charge).
        t: the tensor that was exported.
        before: a copy of t's values taken before the export.
        base: the tensor ``t`` is a view of, or ``None``.
        base_before: a copy of ``base``'s values taken before the export.
        requires_grad: t's flag before the export.
    """
    shown = f"export_numpy({describe_tensor(t)})"
    evidence = Evidence({"t": plain(before)}, plain(before), plain(t))
    if t.requires_grad != requires_grad or not torch.equal(t.detach(), before):
        return Verdict(False, f"{shown} changed t itself (its values or requires_grad): export "
                       f"a copy and leave t alone, e.g. {EXPORT}.", "modified-input", evidence)
    if not got.flags.writeable:
        return Verdict(False, f"{shown} returned a read-only array: the caller must be able to "
                       f"write to it. Return an independent copy, {EXPORT}.", "read-only", evidence)
    try:
        got[...] = got + 1  # any change shows up in t if the memory is shared
    except (TypeError, ValueError) as exc:
        return Verdict(False, f"{shown} returned an array that cannot be written to ({exc}): "
                       f"return a plain numeric copy, {EXPORT}.", "read-only", evidence)
    changed = not torch.equal(t.detach(), before) or (
        base is not None and not torch.equal(base.detach(), base_before))
    if changed:
        return Verdict(False, f"{shown}: writing to the returned array changed t, so the array "
                       "shares t's memory (.numpy() and .detach() do not copy). Append .copy(): "
                       f"{EXPORT}.", "shares-storage", evidence)
    return Verdict(True, evidence=evidence)


def judge_called_again(verdict: Verdict, got: Any, t: torch.Tensor, twin: torch.Tensor
                       ) -> Verdict:
    """A wrong answer that holds the export of ``twin`` (the second call's): the array
    returned was changed by that later call, named ``result-reused``."""
    if verdict.ok or not (isinstance(got, np.ndarray) and got.shape == tuple(twin.shape)
                          and np.array_equal(got, expected_array(twin))):
        return verdict
    return reused(f"export_numpy({describe_tensor(t)})", "export_numpy", "an array",
                  f"Return a new array each call, {EXPORT}, not one kept between calls.",
                  verdict.evidence)


def _export(export_numpy: Callable, t: torch.Tensor, twin: torch.Tensor | None = None
            ) -> tuple[Any, Verdict | None, int | None]:
    """Call the student (then, with ``twin``, once more on it before the answer is read); a
    tracked tensor refused by ``.numpy()`` is a named mistake. The third value: how many
    answers back one is whose memory the answer shares (``call_then_again``), with ``twin``."""
    got, failure, back = ((*call(export_numpy, "export_numpy", t), None) if twin is None else
                          call_then_again(export_numpy, "export_numpy", (t,), (twin,)))
    if failure and failure.misconception == "raised" and t.requires_grad and \
            "requires grad" in failure.message:
        return None, renamed(failure, "numpy-on-tracked", TRACKED_HINT), None
    return got, failure and raised_cause(failure, t, EXPORT), back


def input_classes(args: tuple) -> list[InputClass]:
    """The classes of ``(t,)`` a probe can step out of, with the nearest input outside."""
    (t,) = args
    classes = []
    if t.requires_grad:
        classes.append(InputClass("requires-grad", (t.detach().clone(),),
                                  "Does a tensor that requires grad take another path?"))
    if not t.is_contiguous():
        classes.append(InputClass("non-contiguous", (t.contiguous(),),
                                  "Does something read memory in storage order (.storage(), "
                                  "data_ptr, frombuffer)?"))
    if 1 in t.shape:
        classes.append(InputClass("size-1-dimension",
                                  (torch.cat([t.detach()] * 2, dim=list(t.shape).index(1)),),
                                  "Does something drop a dimension of size 1 (.squeeze())?"))
    if t.dim() >= 2:
        classes.append(InputClass("multi-dimensional", (flat(t),),
                                  "Does something work on 1-D tensors only (a loop over t's "
                                  "entries, float() of each)? t may have any shape: "
                                  "t.detach().cpu().numpy() keeps it."))
    return classes


def subject(export_numpy: Callable, t: torch.Tensor) -> Subject:
    """What the probes need to explain a wrong ``export_numpy``."""
    def same(got: Any, expected: np.ndarray) -> bool:
        return (isinstance(got, np.ndarray) and got.shape == expected.shape
                and got.dtype == expected.dtype and np.array_equal(got, expected))

    return Subject("export_numpy", export_numpy, (t,), ("t",), expected_array, same, numbers_of,
                   classes=input_classes)


def check_export(export_numpy: Callable, rng: np.random.Generator, *,
                 points: float = 1.0) -> CheckResult:
    """Export fresh tensors (tracked or not, float32/float64/int64, views), each call followed
    by one on another tensor of its class before its answer is read; compare exactly. Last,
    the first tensor again after its values changed in place (``export_cached``)."""
    seed = seed_of(rng)
    verdict = PASS
    cases = draw_tensors(rng)
    twins = draw_twins(rng, cases)
    cases.append((draw_large(rng), None))  # drawn after the twins: int64 past float (export_float)
    twins += draw_twins(rng, cases[-1:])
    cases.append((draw_one_element(rng), None))  # last: one element, with dimensions
    twins += draw_twins(rng, cases[-1:])
    cases.append((draw_zero_dim(rng), None))  # then a 0-d tensor
    twins += draw_twins(rng, cases[-1:])
    cases.append(draw_offset_view(rng))  # last: a view that starts inside its storage
    twins += draw_twins(rng, cases[-1:])
    # last: the first plain tensor's class again, fresh values, after every other case: by then
    # an answer handed out from a pool of buffers per shape and dtype has come round again
    # (red team rt-4: a ring of two kept 4/4; ``handed_out_again``)
    first = next(i for i, (_, base) in enumerate(cases) if base is None)
    cases.append((draw_twins(rng, cases[first:first + 1])[0], None))
    twins += draw_twins(rng, cases[-1:])
    for (t, _), twin in zip(cases, twins):
        expected = expected_array(t)  # before the call, in case the student's code changes t
        got, failure, back = _export(export_numpy, t, twin)
        verdict = failure or judge_called_again(judge_export(got, t, expected), got, t, twin)
        verdict = handed_out_again(verdict, back, f"export_numpy({describe_tensor(t)})",
                                   "an array", f"Return a new array each call, {EXPORT}.")
        verdict = confirm(verdict, export_numpy, got, t, expected,
                          f"export_numpy({describe_tensor(t)})", EXPORT)
        if not verdict.ok:
            verdict = explain(verdict, subject(export_numpy, t), got)
            break
    if verdict.ok:  # drawn last: the first tensor, the same object, changed in place (rt-7)
        t = cases[0][0]
        verdict = changed_in_place(export_numpy, rng, t, expected_array, judge_export,
                                   f"export_numpy({describe_tensor(t)})", EXPORT)
    if verdict.ok:  # drawn after it: NaN and infinities among the values (rt-9)
        verdict = non_finite(export_numpy, rng, EXPORT)
    return finish(QUESTION, "export_numpy_values", verdict, seed=seed, points=points,
                  passed_message="export_numpy kept values, shape and dtype on fresh tensors, "
                                 "and on one changed in place after its first export.")


#: What an answer that is the same for every t is told (red-team round rt-3:
#: np.zeros(t.shape, dtype) earned this check's points for a function that exports nothing).
IGNORES_T = ("an array that does not depend on t's values is no export of t, and writing to it "
             "says nothing about t: this check's points are for a copy of t that is "
             f"independent of it. Export t's own values: {EXPORT}")


def depends_on_t(export_numpy: Callable, rng: np.random.Generator) -> Verdict:
    """``PASS`` unless ``export_numpy`` returns equal arrays for two tensors of one shape and
    dtype whose values differ everywhere: then a failing verdict, ``answer-ignores-input``."""
    t = torch.from_numpy(rng.uniform(-10.0, 10.0, size=(int(rng.integers(2, 5)), 3)))
    other = t + torch.from_numpy(rng.uniform(1.0, 2.0, size=tuple(t.shape)))
    first, failure = call(export_numpy, "export_numpy", t.clone())
    # the first answer as it was returned: a buffer the function reuses is the same object
    # after the second call (the values check names that), as a worker's reply never is
    first = np.array(first, copy=True) if isinstance(first, np.ndarray) else first
    again, failure_again = call(export_numpy, "export_numpy", other.clone())
    if failure or failure_again or not (isinstance(first, np.ndarray)
                                        and isinstance(again, np.ndarray)):
        return PASS  # the values check scores a raise or what is no array
    if first.shape != again.shape or not np.array_equal(first, again):
        return PASS
    return Verdict(False, f"export_numpy({describe_tensor(t)}) and export_numpy of another "
                   f"tensor of that shape, every value 1 to 2 larger, returned the same array, "
                   f"{describe(first)}: {IGNORES_T}", "answer-ignores-input",
                   Evidence({"t": plain(t), "other_t": plain(other)}, plain(expected_array(t)),
                            plain(first)))


def check_independent(export_numpy: Callable, rng: np.random.Generator, *,
                      points: float = 1.0) -> CheckResult:
    """Export fresh tensors, write to each result, and check the tensor did not change."""
    seed = seed_of(rng)
    verdict = PASS
    for t, base in draw_tensors(rng):
        before, requires_grad = t.detach().clone(), t.requires_grad
        base_before = None if base is None else base.detach().clone()
        layout = layout_of(t, base)
        expected = expected_array(t)
        got, failure, _ = _export(export_numpy, t)
        failure = failure or judge_layout(layout, t, base,
                                          f"export_numpy({describe_tensor(t)})")
        if failure is None and not isinstance(got, np.ndarray):
            scalar = zero_dim_scalar(got, t)
            failure = Verdict(False, f"export_numpy({describe_tensor(t)}) returned "
                              f"{describe(got)}; expected a numpy.ndarray of t's shape.{scalar}",
                              ZERO_DIM_SCALAR if scalar else "wrong-type",
                              Evidence({"t": plain(t)}, got=plain(got)))
        elif failure is None and got.shape != tuple(t.shape) and not arranged(got, expected):
            failure = Verdict(False, f"export_numpy({describe_tensor(t)}) returned "
                              f"{describe(got)}, which does not hold t's values in any "
                              f"arrangement; expected an export of t, an array of t's shape "
                              f"{tuple(t.shape)}: writing to another array says nothing about "
                              "t.", "wrong-shape", Evidence({"t": plain(t)}, got=plain(got)))
        verdict = failure or judge_independent(got, t, before, base, base_before, requires_grad)
        if not verdict.ok:
            break
    if verdict.ok:  # drawn last: the cases above stay those of earlier runs with the seed
        verdict = depends_on_t(export_numpy, rng)
    return finish(QUESTION, "export_numpy_independent", verdict, seed=seed, points=points,
                  passed_message="Writing to export_numpy's result never changed the tensor, on any tensor it was given.")
