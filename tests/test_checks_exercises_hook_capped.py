"""Blind round zzi's q1 class: a transform applied to each backward's gradient before it is
added into p.grad (``p.register_hook(lambda g: g.clamp(-10, 10))``). With clear=True it gives
what a cap on p.grad gives (``gradients-clipped``); without clearing every value is k times
the capped ``2 * p0`` (``contributions-clipped``), which the probe varying p0 used to call
ignoring p0 ("use the argument you are given") though the answer follows p0 under the cap.

And the probe itself: an answer that stays as it was when an argument changes is asked again
a thousand times closer to zero and with the argument's sign flipped before it is said to
ignore it (``probe.stops-following``, ``probe.follows-sign-only`` otherwise), for every
check's subject (q1 and q3 here, made-up subjects with float and tensor arguments).
"""

from __future__ import annotations

import pytest
import torch

from autograder.checks import probes
from autograder.checks.exercises import accumulation, accumulation_clipped, multipath
from autograder.checks.seeding import generator

SEEDS = range(4)
IGNORES = ("does not follow", "use the argument", "use the arguments")

# ---------------------------------------------------------------- q1: the student's variants


def _hooked(hook):
    """A square_grads whose leaf carries ``hook`` (what each backward delivers is changed
    before it is added into p.grad); otherwise right."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(float(p0), requires_grad=True)
        p.register_hook(hook)
        grads = []
        for _ in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            grads.append(p.grad.item())
        return grads
    return square_grads


class _ClampedSquare(torch.autograd.Function):
    """p ** 2 whose backward clamps the gradient it sends to p at 8."""

    @staticmethod
    def forward(ctx, p):
        ctx.save_for_backward(p)
        return p * p

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        return (2 * p * grad).clamp(-8.0, 8.0)


def _custom_backward(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        _ClampedSquare.apply(p).backward()
        grads.append(p.grad.item())
    return grads


def _post_accumulate(p0, repeats, clear):
    """A cap on p.grad itself, after each backward has added into it: gradients-clipped."""
    p = torch.tensor(float(p0), requires_grad=True)
    def cap(t):
        t.grad.clamp_(-10.0, 10.0)

    p.register_post_accumulate_grad_hook(cap)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(p.grad.item())
    return grads


def _constant(value):
    """A leaf from a constant, whatever p0: it ignores p0."""
    def square_grads(p0, repeats, clear):
        p = torch.tensor(value, requires_grad=True)
        grads = []
        for _ in range(repeats):
            if clear:
                p.grad = None
            (p ** 2).backward()
            grads.append(p.grad.item())
        return grads
    return square_grads


#: Each backward's gradient capped before it accumulates, and the cap the message must tell.
CONTRIBUTIONS = {
    "g.clamp(-10, 10) (round zzi)": (_hooked(lambda g: g.clamp(-10.0, 10.0)), "10"),
    "torch.clamp(g, min=-3, max=3)": (_hooked(lambda g: torch.clamp(g, min=-3.0, max=3.0)), "3"),
    "torch.where on |g| > 25": (_hooked(
        lambda g: torch.where(g.abs() > 25.0, 25.0 * g.sign(), g)), "25"),
    "g.clamp(-0.5, 0.5)": (_hooked(lambda g: g.clamp(-0.5, 0.5)), "0.5"),
    "custom backward clamped at 8": (_custom_backward, "8"),
}

#: Wrong, but no cap on each backward's gradient: never named for one.
NOT_CAPPED = {
    "sign hook": _hooked(lambda g: g.sign()),
    "normalised to 10": _hooked(lambda g: 10.0 * g / g.abs()),
    "tanh-saturated hook": _hooked(lambda g: 10.0 * torch.tanh(g / 10.0)),
    "one-sided clamp(max=10)": _hooked(lambda g: g.clamp(max=10.0)),
    "doubling hook": _hooked(lambda g: 2.0 * g),
    "constant 3.0": _constant(3.0),
    "lesson's 2.0": _constant(2.0),
}

#: Right whatever the hook: never fails.
CORRECT = {
    "identity hook": _hooked(lambda g: g),
    "hook that returns None": _hooked(lambda g: None),
    "clamp no gradient reaches": _hooked(lambda g: g.clamp(-1e9, 1e9)),
}


@pytest.mark.parametrize("how", sorted(CONTRIBUTIONS))
@pytest.mark.parametrize("seed", SEEDS)
def test_each_backward_capped_is_named_without_clearing(seed, how):
    fn, cap = CONTRIBUTIONS[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=False)
    assert not result.passed, result.message
    assert result.misconception == "contributions-clipped", result.message
    for words in (f"c={cap}", "hook", "each backward", "not on p.grad", "register_hook"):
        assert words in result.message, result.message
    assert not any(w in result.message for w in IGNORES), result.message
    assert result.evidence.probes and result.evidence.probes[0]["id"] == "contributions-clipped"


@pytest.mark.parametrize("how", sorted(CONTRIBUTIONS))
@pytest.mark.parametrize("seed", SEEDS)
def test_each_backward_capped_with_clearing_is_clipping_and_tells_the_hook(seed, how):
    fn, cap = CONTRIBUTIONS[how]
    result = accumulation.check_square_grads(fn, generator(seed), clear=True)
    assert result.misconception == "gradients-clipped", result.message
    assert f"c={cap}" in result.message and "register_hook" in result.message
    assert not any(w in result.message for w in IGNORES), result.message


def test_one_backward_is_told_apart_by_the_confirming_calls():
    """A single uncleared backward fits both caps; the confirming calls say which."""
    fn = CONTRIBUTIONS["g.clamp(-10, 10) (round zzi)"][0]
    got = fn(-550.0, 1, False)

    def rejudge(which):
        return accumulation.judge_grads(got, -550.0, 1, False, precision=False, integer=False,
                                        clipped=which)

    first = accumulation.judge_grads(got, -550.0, 1, False)
    assert first.misconception == "gradients-clipped"
    verdict = accumulation_clipped.confirmed(first, fn, -550.0, 1, False, accumulation.RTOL,
                                             accumulation.ATOL, rejudge)
    assert verdict.misconception == "contributions-clipped", verdict.message
    assert "not on p.grad" in verdict.message

    post = _post_accumulate(-550.0, 1, False)
    kept = accumulation_clipped.confirmed(
        accumulation.judge_grads(post, -550.0, 1, False), _post_accumulate, -550.0, 1, False,
        accumulation.RTOL, accumulation.ATOL, rejudge)
    assert kept.misconception == "gradients-clipped", kept.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_cap_on_p_grad_itself_stays_gradients_clipped(seed, clear):
    result = accumulation.check_square_grads(_post_accumulate, generator(seed), clear=clear)
    assert result.misconception == "gradients-clipped", result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(NOT_CAPPED))
@pytest.mark.parametrize("seed", SEEDS)
def test_no_cap_named_without_its_evidence(seed, how, clear):
    result = accumulation.check_square_grads(NOT_CAPPED[how], generator(seed), clear=clear)
    if result.passed:  # the one-sided clamp is right where no gradient reaches its side
        assert how == "one-sided clamp(max=10)"
        return
    assert result.misconception not in ("contributions-clipped", "gradients-clipped"), (
        result.message)


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("how", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_hooks_that_change_nothing_pass(seed, how, clear):
    assert accumulation.check_square_grads(CORRECT[how], generator(seed), clear=clear).passed


# ---------------------------------------------------------------- the probe: saturation


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_one_sided_cap_is_not_said_to_ignore_p0(seed, clear):
    result = accumulation.check_square_grads(NOT_CAPPED["one-sided clamp(max=10)"],
                                             generator(seed), clear=clear)
    if result.passed:
        return
    assert result.misconception == "probe.stops-following", result.message
    assert "both right" in result.message and "closer to zero" in result.message
    assert not any(w in result.message for w in IGNORES), result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_an_answer_that_keeps_only_the_sign_is_told_so(seed, clear):
    """Told so where p0 + 1.5 keeps p0's sign (seeds 0-2); where it crosses zero (seed 3's
    -1.27) the answer changed with p0 and nothing claims it ignores p0."""
    for how in ("sign hook", "normalised to 10"):
        result = accumulation.check_square_grads(NOT_CAPPED[how], generator(seed), clear=clear)
        assert not any(w in result.message for w in IGNORES), result.message
        if seed == 3:
            assert result.misconception != "probe.ignores-argument", result.message
            continue
        assert result.misconception == "probe.follows-sign-only", result.message
        assert "the sign of p0, not its size" in result.message


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_an_answer_that_ignores_p0_is_still_told_so(seed, clear):
    result = accumulation.check_square_grads(NOT_CAPPED["constant 3.0"], generator(seed),
                                             clear=clear)
    assert result.misconception == "probe.ignores-argument", result.message
    assert "does not follow p0" in result.message and "use the argument" in result.message
    lesson = accumulation.check_square_grads(NOT_CAPPED["lesson's 2.0"], generator(seed),
                                             clear=clear)
    assert lesson.misconception == "ignores-p0", lesson.message


def test_each_backward_told_when_no_cap_fits():
    """Uncleared values k times one wrong gradient, no known mistake: said as seen. (A whole
    multiple of the right gradient is a known one, ``gradient-multiplied``: named-leftovers.)"""
    verdict = accumulation.judge_grads([-30.0, -60.0, -90.0], -6.0, 3, False)
    assert verdict.misconception is None
    assert "grow by the same -30.0 at every backward" in verdict.message
    doubled = accumulation.judge_grads([-24.0, -48.0, -72.0], -6.0, 3, False)
    assert doubled.misconception == "gradient-multiplied", doubled.message
    assert "grow by the same" not in accumulation.judge_grads([1.0, 1.0], 3.0, 2, True).message


def _mp_hooked(split):
    def fn(x0, y0):
        a = torch.tensor(float(x0), requires_grad=True)
        b = torch.tensor(float(x0 if split else y0), requires_grad=True)
        a.register_hook(lambda g: g.clamp(-20.0, 20.0))
        b.register_hook(lambda g: g.clamp(-20.0, 20.0))
        (a * float(y0) + b ** 2 if split else a * b + a ** 2).backward()
        return a.grad.item(), b.grad.item()
    return fn


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_q3_capped_leaves_are_not_said_to_ignore_their_arguments(seed, split):
    result = multipath.check_grads(_mp_hooked(split), generator(seed), split=split)
    assert not result.passed
    assert result.misconception == "probe.stops-following", result.message
    assert not any(w in result.message for w in IGNORES), result.message


# ---------------------------------------------------------------- the probe on made-up subjects


def _subject(fn, args, expected, variations):
    return probes.Subject(
        "f", fn, args, tuple("ab"[:len(args)]), expected,
        lambda got, exp: probes.numbers_close(probes.numbers_of(got), probes.numbers_of(exp)),
        probes.numbers_of, variations=variations)


def test_probe_tells_saturation_sign_and_ignoring_apart():
    def expected(a, b):
        return (a * b, a + b)

    vary = {0: lambda a: [a + 1.5], 1: lambda b: [b + 1.5]}
    cases = {
        "probe.stops-following": lambda a, b: (max(-5.0, min(5.0, a * b)),
                                               max(-5.0, min(5.0, a + b))),
        "probe.follows-sign-only": lambda a, b: (float(a > 0), float(b > 0)),
        "probe.ignores-argument": lambda a, b: (7.0, 3.0),
    }
    for want, fn in cases.items():
        args = (250.0, 125.0)
        found = probes.diagnose(_subject(fn, args, expected, vary), fn(*args))
        assert found is not None and found.id == want, (want, found)
        said = any(w in found.message for w in IGNORES)
        assert said == (want == "probe.ignores-argument"), found.message


def test_probe_scales_tensor_arguments_and_keeps_their_flags():
    t = torch.tensor([300.0, -400.0], requires_grad=True)
    seen = []

    def capped(x):
        seen.append(x.requires_grad)
        return (2 * x.detach()).clamp(-1.0, 1.0)

    subject = _subject(capped, (t,), lambda x: 2 * x.detach(), {0: lambda x: [x + 1.5]})
    found = probes.diagnose(subject, capped(t))
    assert found is not None and found.id == "probe.stops-following", found
    assert all(seen), seen
    assert any(c["probe"] == "smaller-a" for c in found.calls)


def test_probe_without_a_magnitude_to_scale_still_says_ignored():
    """Ints keep their class: nothing is scaled, the claim is as it was."""
    def fn(a, b):
        return (a * 2, a + 2)

    found = probes.diagnose(
        _subject(fn, (3, 4), lambda a, b: (a * b, a + b), {1: lambda b: [b + 2]}), fn(3, 4))
    assert found is not None and found.id == "probe.ignores-argument", found
