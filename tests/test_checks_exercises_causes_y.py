"""Mistake classes of ``autograd-exercises`` answers that blind round y lost points on without
being told why (or told a wrong cause), each named from its own evidence with the student's
variants, and never on its near-misses: q1 gradients capped at a constant
(``gradients-clipped``), q4 a pullback reduced by a mean where the VJP needs a sum
(``vjp-averaged``), q3 leaves made in float16 or bfloat16 (``low-precision``)."""

from __future__ import annotations

import pytest
import torch

from autograder.checks.exercises import accumulation, multipath, vjp
from autograder.checks.seeding import generator

SEEDS = range(3)

# ---------------------------------------------------------------- q1_accumulation


def _capped(cap, where="after"):
    """A square_grads that caps each gradient with ``cap(p)`` after every backward (in place
    on p.grad), or (``where="read"``) only the value it records, ``cap`` then returning it."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(float(p0), requires_grad=True)
        grads = []
        for _ in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            if where == "read":
                grads.append(float(cap(p.grad)))
            else:
                cap(p)
                grads.append(p.grad.item())
        return grads
    return square_grads


#: Gradients capped at one constant, and the cap the message must tell.
CLIPPED = {
    "clip_grad_norm_ 20 (round y)": (_capped(
        lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=20.0)), "20"),
    "clip_grad_value_ 5": (_capped(
        lambda p: torch.nn.utils.clip_grad_value_([p], clip_value=5.0)), "5"),
    "p.grad.clamp_ 1.5": (_capped(lambda p: p.grad.clamp_(-1.5, 1.5)), "1.5"),
    "p.grad.data.clamp_ 100": (_capped(lambda p: p.grad.data.clamp_(-100, 100)), "100"),
    "torch.clamp on the value read": (_capped(lambda g: torch.clamp(g, -7.0, 7.0).item(),
                                              "read"), "7"),
    "min/max on the value read": (_capped(lambda g: max(-12.5, min(12.5, g.item())), "read"),
                                  "12.5"),
}


def _hard_coded(p0, repeats, clear):
    """A constant answer, whatever p0: it does not follow p0's sign."""
    return [20.0] * repeats


def _unit(p0, repeats, clear):
    """Each gradient divided by its norm: +-1 at every size, not capped."""
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        p.grad.div_(p.grad.norm())
        grads.append(p.grad.item())
    return grads


NOT_CLIPPED = {
    "cap that follows p0": _capped(
        lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=1.5 * abs(p.item()))),
    "a constant answer": _hard_coded,
    "gradient normalised": _unit,
}


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(CLIPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_clipped_gradients_are_named(seed, how, clear):
    """Is a square_grads that caps its gradients at a constant (clip_grad_norm_,
    clip_grad_value_, clamp_ in place, a clamp on the value read) named for it, with the cap,
    and never told that it ignores p0?"""
    fn, cap = CLIPPED[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception == "gradients-clipped", result.message
    for words in (f"c={cap}", "clip", "capped"):
        assert words in result.message, result.message
    assert "does not follow" not in result.message, result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_CLIPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_clipping_named_only_on_its_evidence(seed, how, clear):
    result = accumulation.check_square_grads(NOT_CLIPPED[how], generator(seed), clear=clear)
    assert not result.passed, result.message
    assert result.misconception != "gradients-clipped", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_clip_no_gradient_reaches_passes(seed, clear):
    fn = _capped(lambda p: torch.nn.utils.clip_grad_norm_([p], max_norm=1e9))
    assert accumulation.check_square_grads(fn, generator(seed), clear=clear).passed


def test_capped_answer_at_large_p0_is_not_said_to_ignore_it():
    """Round y's answer at a large p0 ([20, 20, 20]) is named, the cap told; a probe varying
    p0 would see it unchanged and blame the argument."""
    verdict = accumulation.judge_grads([20.0, 20.0, 20.0], 1234.5, 3, True)
    assert verdict.misconception == "gradients-clipped", verdict.message
    assert "c=20" in verdict.message

# ---------------------------------------------------------------- q4_vjp


def _reduced(backward):
    """A vjp_square whose leaf gets its gradient from ``backward(leaf, v, weights)``; returns
    leaf.grad (or what ``backward`` returns, when it returns a tensor)."""
    def vjp_square(x, weights):
        leaf = x.detach().clone().requires_grad_(True)
        v = leaf ** 2
        out = backward(leaf, v, weights)
        return out if isinstance(out, torch.Tensor) else leaf.grad
    return vjp_square


#: Means where the VJP needs a sum, and the word the message gives for what was averaged.
AVERAGED = {
    "sum(-1).mean() (round y)": (_reduced(
        lambda leaf, v, w: (w * v).sum(dim=-1).mean().backward()), "rows"),
    ".mean() of all": (_reduced(lambda leaf, v, w: (w * v).mean().backward()), "entries of x"),
    "mean(-1).sum()": (_reduced(lambda leaf, v, w: (w * v).mean(-1).sum().backward()),
                       "last dimension"),
    "backward(weights / numel)": (_reduced(
        lambda leaf, v, w: v.backward(w / leaf.numel())), "entries of x"),
    "mean(0).sum()": (_reduced(lambda leaf, v, w: torch.mean(w * v, dim=0).sum().backward()),
                      "rows"),
    "grad / len(x)": (_reduced(lambda leaf, v, w: (v.backward(w), leaf.grad / len(leaf))[1]),
                      "rows"),
}
NOT_AVERAGED = {
    "backward(weights / 3)": (_reduced(lambda leaf, v, w: v.backward(w / 3)), None),
    "backward(weights * 0.5)": (_reduced(lambda leaf, v, w: v.backward(w * 0.5)),
                                "one-product-term"),
    "detached factor": (_reduced(lambda leaf, v, w: (leaf * leaf.detach()).backward(w)),
                        "one-product-term"),
}


@pytest.mark.parametrize("how", sorted(AVERAGED))
@pytest.mark.parametrize("seed", SEEDS)
def test_averaged_pullbacks_are_named(seed, how):
    """Is a pullback reduced by a mean (over every entry, the rows or the last dimension)
    named for it, with what was averaged and the sum as the fix?"""
    fn, what = AVERAGED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed, result.message
    assert result.misconception == "vjp-averaged", result.message
    for words in (what, "mean", "sum"):
        assert words in result.message, result.message


@pytest.mark.parametrize("how", sorted(NOT_AVERAGED))
@pytest.mark.parametrize("seed", SEEDS)
def test_averaging_named_only_on_its_evidence(seed, how):
    fn, name = NOT_AVERAGED[how]
    result = vjp.check_vjp(fn, generator(seed))
    assert not result.passed, result.message
    assert result.misconception != "vjp-averaged", result.message
    if name is not None:
        assert result.misconception == name, result.message


@pytest.mark.parametrize("seed", SEEDS)
def test_a_mean_scaled_back_passes(seed):
    """A mean times the count, or a sum over the last dimension then over the rows, is a
    sum: right."""
    for fn in (_reduced(lambda leaf, v, w: ((w * v).mean() * leaf.numel()).backward()),
               _reduced(lambda leaf, v, w: (w * v).sum(dim=-1).sum().backward())):
        assert vjp.check_vjp(fn, generator(seed)).passed


def test_round_y_rows_mean_tells_rows():
    """Round y's 2-D x = [[1, 2], [3, 4]], weights [[1, 2], [1, 1]]: half, and rows."""
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)
    w = torch.tensor([[1.0, 2.0], [1.0, 1.0], [2.0, 3.0]], dtype=torch.float64)
    got = AVERAGED["sum(-1).mean() (round y)"][0](x, w)
    verdict = vjp.judge_vjp(got, x, w)
    assert verdict.misconception == "vjp-averaged" and "rows" in verdict.message

# ---------------------------------------------------------------- q3_multipath


def _leaves(make, read=lambda g: g.item()):
    """multipath_grads and split_path_grads with leaves from ``make(value)`` and gradients
    read with ``read``."""
    def multipath_grads(x0, y0):
        x, y = make(float(x0)), make(float(y0))
        (x * y + x ** 2).backward()
        return read(x.grad), read(y.grad)

    def split_path_grads(x0, y0):
        a, b, y = make(float(x0)), make(float(x0)), make(float(y0))
        (a * y.detach() + b ** 2).backward()
        return read(a.grad), read(b.grad)
    return multipath_grads, split_path_grads


def _cast_inside(split):
    """float32 leaves, w computed from their float16 casts."""
    def fn(x0, y0):
        x, y = _in(torch.float32)(float(x0)), _in(torch.float32)(float(y0))
        b = _in(torch.float32)(float(x0)) if split else x
        (x.half() * (y.half().detach() if split else y.half()) + b.half() ** 2).backward()
        return (x.grad.item(), b.grad.item()) if split else (x.grad.item(), y.grad.item())
    return fn


def _in(dtype):
    return lambda v: torch.tensor(v, dtype=dtype, requires_grad=True)


LOW = {
    "bfloat16 leaves (round y)": (_leaves(_in(torch.bfloat16)), "bfloat16"),
    "float16 leaves": (_leaves(_in(torch.float16)), "float16"),
    ".half() leaves": (_leaves(lambda v: torch.tensor(v).half().requires_grad_()), "float16"),
    "gradients read in bfloat16": (_leaves(_in(torch.float32),
                                           lambda g: g.bfloat16().item()), "bfloat16"),
    "float32 leaves cast inside w": ((_cast_inside(False), _cast_inside(True)), "float16"),
}
NOT_LOW = {
    "inputs rounded to 2 decimals": _leaves(lambda v: torch.tensor(round(v, 2),
                                                                   requires_grad=True)),
    "inputs truncated": _leaves(lambda v: torch.tensor(float(int(v)), requires_grad=True)),
}


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("how", sorted(LOW))
@pytest.mark.parametrize("seed", SEEDS)
def test_low_precision_leaves_are_named(seed, how, split):
    """Are multipath_grads and split_path_grads computed in float16 or bfloat16 named for it,
    with the dtype and float32 as the fix?"""
    fns, dtype = LOW[how]
    result = multipath.check_grads(fns[split], generator(seed), split=split)
    assert not result.passed, result.message
    assert result.misconception == "low-precision", result.message
    for words in (dtype, "float32"):
        assert words in result.message, result.message


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("how", sorted(NOT_LOW))
@pytest.mark.parametrize("seed", SEEDS)
def test_multipath_low_precision_named_only_on_its_evidence(seed, how, split):
    result = multipath.check_grads(NOT_LOW[how][split], generator(seed), split=split)
    assert not result.passed, result.message
    assert result.misconception != "low-precision", result.message


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_float64_leaves_pass(seed, split):
    fns = _leaves(_in(torch.float64))
    assert multipath.check_grads(fns[split], generator(seed), split=split).passed


def test_round_y_bfloat16_point():
    """Round y's (0.3, 1.7): (2.3125, 0.30078125) for (2.3, 0.3)."""
    verdict = multipath.judge_multipath((2.3125, 0.30078125), 0.3, 1.7)
    assert verdict.misconception == "low-precision" and "bfloat16" in verdict.message
