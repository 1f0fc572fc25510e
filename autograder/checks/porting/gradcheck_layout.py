"""q3_gradcheck: the gradient's values right but laid out wrong (blind round zzj).

Blind round zzj's backward returned ``(grad_output * grad).t()``. For a 1-D x (the lesson's,
the public test's, the graded 1-D draws) ``.t()`` changes nothing; at a square 2-D x it has
x's shape and the right values in the wrong places; at a non-square one autograd refuses it
("got [n, m] but expected shape compatible with [m, n]"). The same class: ``.T``, ``.mT``,
``permute(1, 0)``, the gradient computed on ``x.t()``, flipped (``flip``), rotated a quarter
turn (``rot90``: x's sizes reversed, like a transpose), or a flat computation reshaped in
another order (``g.view(x.shape[::-1]).t()``). A gradient only reshaped to x's sizes reversed
(``g.reshape(x.shape[::-1])``) is the right one at a square x: the shaped checks ask at a
non-square x on every seed (``gradcheck_shapes``), where autograd refuses it.

Named only when the student's gradient is exactly the right one (times the upstream, or
without it) under one of ``arrangements`` that changes it at this x, and no other: a
transpose (``grad-transposed``) or another arrangement (``grad-rearranged``, told which). A
transpose seen at a square x is confirmed by one more call at the non-square ``WIDE``, which
tells more: refused there with x's sizes reversed (a transpose), or a gradient of x's shape
whose entries are read in column order (a reshape in another order). A refusal at a
non-square x is confirmed the other way round, at the square ``SQUARE``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from ..raised_hints import gradient_shapes, hint_for
from ..result import Verdict
from .common import allclose

TRANSPOSED, REARRANGED = "grad-transposed", "grad-rearranged"
MATCH_RTOL, MATCH_ATOL = 1e-6, 1e-9

#: The confirming inputs: all magnitudes distinct, both signs, away from 0.
WIDE = ((0.5, -1.2, 2.0), (-0.7, 1.5, -2.4))
SQUARE = ((0.5, -1.2, 2.0), (-0.7, 1.5, -2.4), (1.1, -0.3, 0.9))

#: What backward must do instead, told after each arrangement.
ELEMENTWISE = (
    "backward returns one gradient per input of forward, with that input's shape, element by "
    "element: each entry is the derivative with respect to x's entry in the same place "
    "(x.grad[i, j] for x[i, j]). f is elementwise terms and sums over all of x, so nothing in "
    "backward needs a transpose, a flip or a reshape: return grad_output * (3 * x ** 2 / (1 + "
    "A) - S * torch.sign(x) / (1 + A) ** 2), computed on the x saved in forward, as it is.")

#: What ``again`` is: the student's ``x.grad`` at another x, same upstream, or the failure.
Again = Callable[[torch.Tensor], tuple[Any, "Verdict | None"]]


def arrangements(shape: tuple[int, ...]) -> list[tuple[str, str, Callable]]:
    """``(name, what the student is told it is, g -> g rearranged)`` for a gradient of
    ``shape``: those a student's gradient of the right values may come back in."""
    found: list[tuple[str, str, Callable]] = []
    if len(shape) == 2:
        m, n = shape
        found.append((TRANSPOSED, "transposed: entry [i, j] holds the derivative with respect "
                      "to x[j, i] (a .t(), .T, .mT or permute(1, 0) of the gradient, or the "
                      "gradient computed on x.t())", lambda g: g.t()))
        if m != n and min(m, n) > 1:  # at a square x both are the transpose
            found.append((REARRANGED, "read column by column into x's shape, as "
                          "g.t().reshape(x.shape) does (a gradient computed on x.t() and "
                          "reshaped to x's shape)", lambda g: g.t().reshape(m, n)))
            found.append((REARRANGED, "laid out in x's sizes reversed and transposed back, as "
                          "g.reshape(-1).view(x.shape[::-1]).t() does",
                          lambda g: g.reshape(n, m).t()))
        found.append((REARRANGED, "rotated a quarter turn, as torch.rot90(g) does (the "
                      "transpose flipped along dimension 0, g.t().flip(0))",
                      lambda g: torch.rot90(g, 1, (0, 1))))
        found.append((REARRANGED, "rotated a quarter turn the other way, as torch.rot90(g, -1) "
                      "does (the transpose flipped along dimension 1, g.t().flip(1))",
                      lambda g: torch.rot90(g, -1, (0, 1))))
    dims = [(d,) for d in range(len(shape))] + ([tuple(range(len(shape)))]
                                                if len(shape) > 1 else [])
    for flip in dims:
        along = f"dimension {flip[0]}" if len(flip) == 1 else "every dimension"
        found.append((REARRANGED, f"in reverse order along {along}, as g.flip({list(flip)}) "
                      "does", lambda g, d=flip: g.flip(d)))
    return found


def _close(got: Any, wrong: torch.Tensor) -> bool:
    return (isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(wrong.shape)
            and allclose(got, wrong, MATCH_RTOL, MATCH_ATOL))


def match(got: Any, x: torch.Tensor, upstream: float,
          right: Callable[[torch.Tensor], torch.Tensor]
          ) -> tuple[str, str, bool, Callable] | None:
    """``(name, told, upstream dropped, the arrangement)`` when ``got`` is ``right(x)`` times
    the upstream (or without it) under exactly one arrangement that changes it at this x; else
    None."""
    grad = right(x)
    factors = (upstream,) if abs(upstream - 1.0) < 1e-12 else (upstream, 1.0)
    found = []
    for name, told, arrange in arrangements(tuple(x.shape)):
        wrong = arrange(grad)
        if tuple(wrong.shape) == tuple(grad.shape) and allclose(wrong, grad, MATCH_RTOL,
                                                                   MATCH_ATOL):
            continue  # the arrangement changes nothing at this x: it cannot be told here
        found += [(name, told, factor != upstream, arrange) for factor in factors
                  if _close(got, factor * wrong)]
    return found[0] if len(found) == 1 else None


def _upstream(dropped: bool) -> str:
    return (" It also leaves out the upstream gradient: multiply by the grad_output backward "
            "receives." if dropped else "")


def laid_out(got: Any, x: torch.Tensor, upstream: float,
             right: Callable[[torch.Tensor], torch.Tensor],
             again: Again | None) -> tuple[str, str] | None:
    """``(name, what the student is told)`` when the failing ``got`` is the right gradient
    laid out wrong (``match``); a transpose at a square x is confirmed at ``WIDE`` by
    ``again`` when one is given. None when the evidence does not show that."""
    found = match(got, x, upstream, right)
    if found is None:
        return None
    name, told, dropped, _ = found
    said = f"Its values are those of the right gradient g, {told}."
    if name == TRANSPOSED and again is not None:
        wide = torch.tensor(WIDE, dtype=torch.float64)
        other, failure = again(wide)
        shapes = gradient_shapes(failure.message) if failure is not None else None
        there = match(other, wide, upstream, right) if failure is None else None
        asked = f" Asked again at x of shape {tuple(wide.shape)}"
        if shapes is not None and shapes[0] == tuple(wide.shape)[::-1]:
            said += (f"{asked}, backward's gradient had shape {shapes[0]}, x's sizes "
                     "reversed, which autograd refuses.")
        elif there is not None and there[0] == REARRANGED and there[2] == dropped:
            name = REARRANGED
            said = (f"At this square x its values are those of the right gradient g, "
                    f"transposed.{asked}, they are g's, {there[1]}, which at a square x is "
                    "the transpose.")
    return name, f"{said}{_upstream(dropped)} {ELEMENTWISE}"


def refused_reversed(failure: Verdict, x: torch.Tensor, upstream: float,
                     right: Callable[[torch.Tensor], torch.Tensor], again: Again) -> Verdict:
    """``failure`` at a non-square 2-D ``x`` where autograd refused a gradient of x's sizes
    reversed: named ``grad-transposed`` when, asked again at ``SQUARE``, the gradient is the
    right one transposed (``grad-rearranged`` when rotated a quarter turn, ``rot90``, which
    reverses x's sizes too); told what that call showed when it is the right one; else as it
    was (``raised_hints`` told what the refused shape means)."""
    shapes = gradient_shapes(failure.message)
    if (failure.misconception != "raised" or shapes is None or x.dim() != 2
            or shapes[0] != tuple(x.shape)[::-1] or x.shape[0] == x.shape[1]):
        return failure
    square = torch.tensor(SQUARE, dtype=torch.float64)
    other, again_failed = again(square)
    if again_failed is not None:
        return failure
    asked = f" Asked again at a square x of shape {tuple(square.shape)}"
    found = match(other, square, upstream, right)
    if found is not None and tuple(found[3](right(x)).shape) == shapes[0]:
        # an arrangement that reverses x's sizes, as the refused gradient's did: a transpose
        # or a quarter turn (rot90)
        told = failure.message.rstrip()
        advice = hint_for(told)  # what raised_hints told of the refused shape: said below
        told = told[:-len(advice)].rstrip() if advice and told.endswith(advice) else told
        how = "transposed" if found[0] == TRANSPOSED else "in that arrangement"
        return dataclasses.replace(failure, misconception=found[0], message=(
            f"{told} Its gradient had shape {shapes[0]}, x's sizes reversed.{asked}, where "
            f"that shape is x's own, its "
            f"values are those of the right gradient g, {found[1]}: backward returns it "
            f"{how}.{_upstream(found[2])} {ELEMENTWISE}"))
    if _close(other, upstream * right(square)):
        return dataclasses.replace(failure, message=(
            f"{failure.message.rstrip()}{asked}, it returned the right gradient; here its "
            f"gradient has x's sizes reversed, {shapes[0]}: return it in x's own shape, "
            f"{tuple(x.shape)}."))
    return failure
