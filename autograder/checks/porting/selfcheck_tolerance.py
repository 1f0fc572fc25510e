"""q3_gradcheck: a ``check_my_op`` whose gradcheck tolerances are not the contract's.

gradcheck passes where ``|analytical - numerical| <= atol + rtol * |numerical|`` at every entry
of the Jacobian, the numerical one from central differences of step ``eps``; the contract fixes
eps=1e-6, atol=1e-8 and rtol at its default 1e-3, so that ``check_my_op``'s verdict is
gradcheck's. A check with a looser tolerance (rtol=1e-2, atol=1e-4, a finite difference of its
own compared within 1 %) still rejects the grossly wrong ops and accepts the right one, and
only an op that is off by a little tells it apart: ``check_check_my_op_at_x`` asks, after its
other cases, about the right backward times 1.005 (gradcheck says False) and times 1.0005
(gradcheck says True).

Named ``tolerance-loosened`` where the check accepted a backward that gradcheck rejects
(off by 0.5 %, or by 1e-6 at an entry of x equal to 0, where the gradient is 0 and only atol
holds) and, asked again at the same x, rejects the op whose backward lacks a whole term;
``tolerance-tightened`` where it rejected one that gradcheck accepts (off by 0.05 %, or by 1e-6
where no entry of the gradient is 0) and, asked again at the same x, accepts the right one. Both answers are to the judge's own choice of backward:
measured, not heard. Only a failing verdict costs the one call more.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from ..result import Verdict

LOOSENED, TIGHTENED = "tolerance-loosened", "tolerance-tightened"

#: How each stand-in's backward is off (for the failing call's message).
OFF_BY = {
    "scaled": "whose backward is the right gradient times 1.005 (off by 0.5 %)",
    "nudged": "whose backward is the right gradient times 1.0005 (off by 0.05 %, within "
              "gradcheck's default rtol=1e-3)",
    "edged": "whose backward is the right gradient times 1.0011 (off by 0.11 %, just over "
             "gradcheck's default rtol=1e-3)",
    "offset_edge": "whose backward is off by 3e-8 at every entry (at the entry of x equal to "
                   "0, where the gradient is 0, that is just over the contract's atol=1e-8)",
}

CONTRACT = ("gradcheck's verdict depends on its tolerances: it passes where |analytical - "
            "numerical| <= atol + rtol·|numerical| at every entry, the numerical gradient from "
            "finite differences of step eps. The contract fixes them, eps=1e-6, atol=1e-8 and "
            "rtol left at its default 1e-3, so that check_my_op gives gradcheck's verdict: pass "
            "exactly those (torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, "
            "raise_exception=False)), with no other rtol, atol or tolerance of your own.")

#: What accepting each slightly wrong op shows.
LOOSE = {
    "scaled": "a backward off by 0.5 % is within rtol=1e-2 (or a 1 % comparison of its own), "
              "but not within the contract's rtol=1e-3, so the check is looser than "
              "gradcheck's and accepts a backward that is wrong.",
    "offset": "the backward is off by 1e-6 at the entry of x equal to 0, where the gradient "
              "is 0, so only atol applies there: the contract's atol=1e-8 rejects it, a larger "
              "atol (1e-6, 1e-4) accepts a backward that is wrong, and so does fast_mode=True, "
              "which compares one random combination of the gradient's entries, where rtol "
              "covers the 1e-6.",
    "edged": "a backward off by 0.11 % is within rtol=1.2e-3 (or any rtol from 1.1e-3 "
             "up), but not within the contract's rtol=1e-3, so the check is looser than "
             "gradcheck's and accepts a backward that is wrong.",
    "offset_edge": "the backward is off by 3e-8 at the entry of x equal to 0, where the "
                   "gradient is 0, so only atol applies there: the contract's atol=1e-8 rejects "
                   "it, an atol a few times larger (5e-8, 1e-7) accepts a backward that is wrong.",
}
#: What rejecting each op that gradcheck accepts shows.
TIGHT = {
    "nudged": "a backward off by 0.05 % is within the contract's rtol=1e-3, so gradcheck "
              "accepts it; a smaller rtol (1e-4, 0) or a comparison of its own rejects it, so "
              "the check is stricter than gradcheck's.",
    "offset": "this backward is off by 1e-6 at every entry, and no entry of the gradient is 0 "
              "here, so the contract's rtol=1e-3 covers it and gradcheck accepts it; rtol=0 "
              "(or a smaller one, or a comparison of its own) rejects it, so the check is "
              "stricter than gradcheck's.",
}


def tolerance(verdict: Verdict, stand_in: str, got: Any, expected: bool,
              ask: Callable[[str], Any]) -> Verdict:
    """``verdict`` (failed, no name) named ``LOOSENED`` where ``got`` accepted a slightly wrong
    ``stand_in`` (``LOOSE``) and ``ask("broken")`` (the op without the quotient rule's second
    term, at the same x) is False, or ``TIGHTENED`` where it rejected one of ``TIGHT`` and
    ``ask("lesson")`` is True; any other verdict or answer as it is."""
    if verdict.ok or verdict.misconception is not None \
            or not isinstance(got, (bool, np.bool_)) or bool(got) == expected:
        return verdict
    if got and stand_in in LOOSE:
        name, other, told, cause = LOOSENED, "broken", False, LOOSE[stand_in]
    elif not got and stand_in in TIGHT:
        name, other, told, cause = TIGHTENED, "lesson", True, TIGHT[stand_in]
    else:
        return verdict
    again = ask(other)
    if not isinstance(again, (bool, np.bool_)) or bool(again) != told:
        return verdict
    which = ("a my_op whose backward lacks the quotient rule's second term" if other == "broken"
             else "the right my_op")
    evidence = dataclasses.replace(verdict.evidence, probes=[{
        "id": name, "established": f"at the same x, {told} for {which}, as gradcheck says",
        "calls": [{"backward": stand_in, "got": bool(got)}, {"backward": other, "got": told}]}])
    return dataclasses.replace(verdict, misconception=name, evidence=evidence, message=(
        f"{verdict.message} Asked again at this x, it returned {told} for {which}, as "
        f"gradcheck does: {cause} {CONTRACT}"))
