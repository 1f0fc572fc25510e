"""q1_accumulation: gradients capped at one constant c (``clip_grad_norm_([p], max_norm=c)`` or
``clip_grad_value_([p], c)`` after every backward, ``p.grad.clamp_(-c, c)``, a clamp of the
value recorded), recognised when every returned value is the right one with its magnitude
capped at c, c fitted as the largest magnitude returned (``capped_at``), and confirmed by
calls at other p0 with the same c (``confirmed``): right wherever every ``|2 * p0 * k|`` is at
most c, as for the lesson's 2.0 and 3 repeats with c = 20."""

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
    return (f"Every value is the right gradient with its magnitude capped at c={cap}: "
            f"{count} {verb} above {cap} in magnitude and "
            f"came back capped ({told}){rest}. That is gradient clipping: "
            f"torch.nn.utils.clip_grad_norm_([p], max_norm={cap}) or clip_grad_value_([p], "
            f"{cap}) after each backward (for one scalar both cap |p.grad| at {cap}), "
            f"p.grad.clamp_(-{cap}, {cap}), or a clamp of the value recorded. Clipping "
            "changes the gradients, and nothing in the contract asks for it: square_grads "
            f"returns p.grad as backward leaves it, so only gradients within -{cap} to {cap} "
            "come out right. Remove the clipping and append p.grad.item() after each "
            "backward.")


def _calls(p0: float, repeats: int, clear: bool, c: float) -> list[tuple[float, int]]:
    """The confirming calls' (p0, repeats), on the other side of zero from ``p0``."""
    side = -1.0 if p0 > 0 else 1.0
    if clear:
        return [(side * BELOW * c, 1), (side * ABOVE * c, max(repeats, 2))]
    return [(side * BELOW * c, max(repeats, 3))]


def confirmed(verdict: Verdict, square_grads: Callable, p0: float, repeats: int, clear: bool,
              rtol: float, atol: float, rejudge: Callable[[], Verdict]) -> Verdict:
    """``verdict`` (named ``CLIPPED`` from one answer) kept when calls at other p0
    (``_calls``) are the right gradients capped at the same c, with those calls in its
    evidence; else ``rejudge()``, the answer judged without that name."""
    c = capped_at(verdict.evidence.got, p0, repeats, clear, rtol, atol)
    if c is None:
        return rejudge()
    records, shown = [], []
    for other, n in _calls(p0, repeats, clear, c):
        got, failure = call(square_grads, "square_grads", other, n, clear=clear)
        right = _right(other, n, clear)
        if (failure is not None or not isinstance(got, (list, tuple)) or len(got) != n
                or not all(is_float(v) for v in got)
                or not close_lists([float(v) for v in got], _capped(right, c), rtol, atol)):
            return rejudge()
        records.append(recorded_call("another p0", (other, n), right, list(got)))
        shown.append(f"square_grads({fmt(other)}, {n}, clear={clear}) returned "
                     f"{describe(list(got))} for {expected_text(right)}")
    probe = {"id": CLIPPED, "established": f"capped at {c:.6g} at other p0", "calls": records}
    return dataclasses.replace(
        verdict, evidence=dataclasses.replace(verdict.evidence, probes=[probe]),
        message=f"{verdict.message.rstrip()} The same cap at other p0: {'; '.join(shown)}.")
