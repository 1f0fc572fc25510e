"""q1_accumulation: gradients capped at one constant c (``clip_grad_norm_([p], max_norm=c)`` or
``clip_grad_value_([p], c)`` after every backward, ``p.grad.clamp_(-c, c)``, a clamp of the
value recorded), recognised when every returned value is the right one with its magnitude
capped at c, c fitted as the largest magnitude returned (``capped_at``), and confirmed by
calls at other p0 with the same c (``confirmed``): right wherever every ``|2 * p0 * k|`` is at
most c, as for the lesson's 2.0 and 3 repeats with c = 20.

Without clearing, a cap on what each backward delivers (a hook on the leaf,
``p.register_hook(lambda g: g.clamp(-c, c))``) is another answer: every value k times the
right ``2 * p0`` capped at c, added up as it should be (``contributions_capped_at``,
``CONTRIBUTIONS``), confirmed the same way; with clearing the two caps give the same values."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

from ..calling import call
from ..closeness import close_lists, is_float
from ..describing import describe, expected_text, fmt
from ..probes import recorded_call
from ..result import Verdict

CLIPPED = "gradients-clipped"
CONTRIBUTIONS = "contributions-clipped"
#: Where the confirming calls are made, as fractions of the cap (the sign opposite the
#: failing p0's): 0.3 c keeps the first gradient under the cap (it must come back as it is,
#: told apart from a gradient normalised to c at every size) and, without clearing, puts the
#: second over it; 0.77 c puts the first over it (with clearing, the only way to see the cap).
BELOW, ABOVE = 0.3, 0.77


def _right(p0: float, repeats: int, clear: bool) -> list[float]:
    return [2.0 * p0 * (1 if clear else k) for k in range(1, repeats + 1)]


def _capped(values: list[float], c: float) -> list[float]:
    """``values`` with every magnitude capped at ``c``: what clipping in place after each
    backward gives (the next backward adds 2*p0 of the same sign onto the capped value, which
    is capped again) and what a clamp of the recorded value gives alike."""
    return [max(-c, min(c, v)) for v in values]


def capped_at(got: list[float], p0: float, repeats: int, clear: bool, rtol: float,
              atol: float) -> float | None:
    """The cap c (the largest magnitude in ``got``) when every value of ``got`` is the right
    gradient with its magnitude capped at c and some value was capped; else ``None``."""
    if not got or not all(math.isfinite(v) for v in got):
        return None
    c = max(abs(v) for v in got)
    right = _right(p0, repeats, clear)
    if not c > 0 or close_lists(got, right, rtol, atol):
        return None
    return c if close_lists(got, _capped(right, c), rtol, atol) else None


def _contributions(p0: float, repeats: int, c: float) -> list[float]:
    """Without clearing, what ``repeats`` backwards leave in p.grad when each one delivers
    ``2 * p0`` with its magnitude capped at ``c``: k times the capped gradient."""
    each = max(-c, min(c, 2.0 * p0))
    return [each * k for k in range(1, repeats + 1)]


def contributions_capped_at(got: list[float], p0: float, repeats: int, clear: bool,
                            rtol: float, atol: float) -> float | None:
    """The cap c (the first value's magnitude) when, without clearing, every value of ``got``
    is k times one gradient, the right ``2 * p0`` with its magnitude capped at c, and the cap
    changed it: each backward's contribution capped before it was added into p.grad, the sum
    then right. Else ``None``."""
    if clear or not got or not all(math.isfinite(v) for v in got):
        return None
    c = abs(got[0])
    if not c > 0 or close_lists(got[:1], [2.0 * p0], rtol, atol):
        return None
    return c if close_lists(got, _contributions(p0, repeats, c), rtol, atol) else None


def steady_increments(got: list[float], p0: float, repeats: int, clear: bool, rtol: float,
                      atol: float) -> str:
    """Without clearing, an answer no known mistake explains whose every value is k times its
    first, g, other than 2*p0 (a hook that scales, rounds or normalises each backward's
    gradient, or a cap no call confirmed): what it shows, said as seen, not as a cause."""
    if clear or repeats < 2 or len(got) != repeats or not math.isfinite(got[0]) \
            or close_lists(got[:1], [2.0 * p0], rtol, atol) \
            or not close_lists(got, [got[0] * k for k in range(1, repeats + 1)], rtol, atol):
        return ""
    return (f"The values grow by the same {fmt(got[0])} at every backward, where p.grad grows "
            f"by 2*p0 = {fmt(2.0 * p0)} each time.")


def cap_found(got: list[float], p0: float, repeats: int, clear: bool, rtol: float,
              atol: float, which: bool | str = True) -> tuple[str, str] | None:
    """The name and hint of a cap that gives ``got``, ``CLIPPED`` before ``CONTRIBUTIONS``
    (one backward fits both: ``confirmed`` tells them apart); ``which``: both (``True``),
    none (``False``) or only the one named."""
    c = capped_at(got, p0, repeats, clear, rtol, atol) if which in (True, CLIPPED) else None
    if c is not None:
        return CLIPPED, clipped_hint(got, p0, repeats, clear, c)
    c = (contributions_capped_at(got, p0, repeats, clear, rtol, atol)
         if which in (True, CONTRIBUTIONS) else None)
    if c is not None:
        return CONTRIBUTIONS, contributions_hint(got, p0, repeats, c)
    return None


def clipped_hint(got: list[float], p0: float, repeats: int, clear: bool, c: float) -> str:
    """What a square_grads whose gradients were capped at ``c`` is told: which were capped."""
    right = _right(p0, repeats, clear)
    which = [k for k, e in enumerate(right) if abs(e) > c]
    cap = f"{c:.6g}"
    pairs = list(dict.fromkeys(f"{fmt(right[k])} came back as {fmt(got[k])}" for k in which))
    told = ", ".join(pairs[:3]) + (", ..." if len(pairs) > 3 else "")
    rest = ", the others are right" if len(which) < len(right) else ""
    count = (f"{len(which)} of the {len(right)} right gradients" if rest else
             "the right gradient" if len(right) == 1 else f"all {len(right)} right gradients")
    verb = "is" if len(which) == 1 else "are"
    hook = (f", or a hook on the leaf that caps what each backward delivers, p.register_hook("
            f"lambda g: g.clamp(-{cap}, {cap}))" if clear else "")
    return (f"Every value is the right gradient with its magnitude capped at c={cap}: "
            f"{count} {verb} above {cap} in magnitude and "
            f"came back capped ({told}){rest}. That is gradient clipping: "
            f"torch.nn.utils.clip_grad_norm_([p], max_norm={cap}) or clip_grad_value_([p], "
            f"{cap}) after each backward (for one scalar both cap |p.grad| at {cap}), "
            f"p.grad.clamp_(-{cap}, {cap}), or a clamp of the value recorded{hook}. Clipping "
            "changes the gradients, and nothing in the contract asks for it: square_grads "
            f"returns p.grad as backward leaves it, so only gradients within -{cap} to {cap} "
            "come out right. Remove the clipping and append p.grad.item() after each "
            "backward.")


def contributions_hint(got: list[float], p0: float, repeats: int, c: float) -> str:
    """What a square_grads told: each backward delivered 2*p0 capped at ``c``, p.grad added
    those up as it should (uncleared)."""
    cap, each = f"{c:.6g}", fmt(got[0])
    summed = (f"; after {repeats} backwards p.grad holds {fmt(got[-1])}, {repeats} times "
              f"{each}, past the cap" if repeats > 1 else "")
    return (f"Every value is k times one gradient, {each}: the right 2*p0 = {fmt(2.0 * p0)} "
            f"with its magnitude capped at c={cap}. Each backward delivered {each}, and p.grad "
            f"added those up as it should{summed}. So the cap acts on what each backward "
            "contributes, not on p.grad: that is what a hook on the leaf does: "
            f"p.register_hook(lambda g: g.clamp(-{cap}, {cap})) changes the gradient each "
            "backward delivers before it is added into p.grad (as would clamping it on its "
            "way back, in a custom backward). Nothing in the contract asks for a cap: "
            "square_grads returns p.grad as backward leaves it, so only p0 with |2*p0| at "
            f"most {cap} come out right. Remove the hook and append p.grad.item() after each "
            "backward.")


def _calls(p0: float, repeats: int, clear: bool, c: float) -> list[tuple[float, int]]:
    """The confirming calls' (p0, repeats), on the other side of zero from ``p0``: without
    clearing, the first tells the caps apart (the second gradient, 1.2 c, capped on p.grad
    and not on what each backward delivers), the second is made for a cap on contributions
    only (each over it there)."""
    side = -1.0 if p0 > 0 else 1.0
    if clear:
        return [(side * BELOW * c, 1), (side * ABOVE * c, max(repeats, 2))]
    return [(side * BELOW * c, max(repeats, 3)), (side * ABOVE * c, max(repeats, 2))]


def _predicted(name: str, p0: float, repeats: int, clear: bool, c: float) -> list[float]:
    right = _right(p0, repeats, clear)
    return _capped(right, c) if name == CLIPPED else _contributions(p0, repeats, c)


def confirmed(verdict: Verdict, square_grads: Callable, p0: float, repeats: int, clear: bool,
              rtol: float, atol: float, rejudge: Callable[..., Verdict]) -> Verdict:
    """``verdict`` (named ``CLIPPED`` or ``CONTRIBUTIONS`` from one answer) kept when calls at
    other p0 (``_calls``) are what the same cap gives, with those calls in its evidence (the
    other name, judged by ``rejudge(name)``, when only it fits them); else ``rejudge(False)``,
    the answer judged without either name."""
    got0 = verdict.evidence.got
    fits = {name: c for name, c in (
        (CLIPPED, capped_at(got0, p0, repeats, clear, rtol, atol)),
        (CONTRIBUTIONS, contributions_capped_at(got0, p0, repeats, clear, rtol, atol)))
        if c is not None}
    if not fits:
        return rejudge(False)
    records, shown = [], []
    for step, (other, n) in enumerate(_calls(p0, repeats, clear, next(iter(fits.values())))):
        got, failure = call(square_grads, "square_grads", other, n, clear=clear)
        ok = (failure is None and isinstance(got, (list, tuple)) and len(got) == n
              and all(is_float(v) for v in got))
        fits = {name: c for name, c in fits.items() if ok and close_lists(
            [float(v) for v in got], _predicted(name, other, n, clear, c), rtol, atol)}
        if not fits:
            return rejudge(False)
        right = _right(other, n, clear)
        records.append(recorded_call("another p0", (other, n), right, list(got)))
        shown.append(f"square_grads({fmt(other)}, {n}, clear={clear}) returned "
                     f"{describe(list(got))} for {expected_text(right)}")
        if CLIPPED in fits and step + 1 >= (2 if clear else 1):
            break
    name, c = next(iter(fits.items()))
    if name != verdict.misconception:
        verdict = rejudge(name)
    what = "capped" if name == CLIPPED else "each backward's gradient capped"
    probe = {"id": name, "established": f"{what} at {c:.6g} at other p0", "calls": records}
    lead = "The same cap" if name == CLIPPED else "The same cap on what each backward delivers"
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} {lead} at other p0: {'; '.join(shown)}.")
