"""q4_vjp: the weights handed to backward in another shape (``weights-reshaped``).

``v.backward(weights.flatten())`` (or ``view(-1)``, ``reshape(-1)``, ``ravel()``) is right for
1-D x, where flattening changes nothing; on a 2-D x torch refuses the weights: "Mismatch in
shape: grad_output[0] has a shape of torch.Size([6]) and output[0] has a shape of
torch.Size([2, 3])". Named from that raise alone, at no cost: the grad_output torch names has
the output's number of elements in another shape, so the weights reached backward reshaped (a
transpose is told apart first, by ``vjp_transposed``, with a call of its own). On a (1, n) x,
``weights[0]`` gives the same (n,): the same weights in another shape, told the same.

Where the grad_output torch names has x's own shape (the weights as given) it was v that had
another shape (``torch.func.vjp`` or a leaf at ``x.t()``, ``v.t()``): not named, since the
weights were not reshaped; told what the shapes show (``v.t().backward(weights)`` is named
``weights-transposed`` before this, by ``vjp_transposed``, from a call of its own).
"""

from __future__ import annotations

import dataclasses
import math
import re

from ..result import Verdict

RESHAPED = "weights-reshaped"
_MISMATCH = re.compile(r"grad_output\[0\] has a shape of torch\.Size\(\[([\d, ]*)\]\) "
                       r"and output\[0\] has a shape of torch\.Size\(\[([\d, ]*)\]\)")
HINT = ("The weights passed to backward must have v's shape, which is x's shape (one weight "
        "per entry of v): weights.flatten() (or view(-1), reshape(-1), ravel()) changes that "
        "shape, which only a 1-D x does not notice. Pass weights as they are, "
        "v.backward(weights).")

#: What a v of another shape than x's (weights as given) is told.
V_HINT = ("v = leaf ** 2 has the leaf's shape, and the weights have x's: make the leaf from x "
          "in x's own shape, leaf = x.detach().clone().requires_grad_(), with no transpose or "
          "reshape, and call v.backward(weights).")


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.replace(" ", "").split(",") if n)


def named(verdict: Verdict, x_shape: tuple[int, ...] | None = None) -> Verdict:
    """``verdict`` (a call that raised torch's shape mismatch) named ``RESHAPED`` when the
    grad_output torch names has as many elements as the output, in another shape, and that
    shape is not ``x_shape`` (the weights' own); told that v's shape was not x's where it is;
    else ``verdict`` as it was."""
    if verdict.ok or verdict.misconception != "raised":
        return verdict
    found = _MISMATCH.search(verdict.message)
    if found is None:
        return verdict
    given, output = _shape(found.group(1)), _shape(found.group(2))
    if given == output or math.prod(given) != math.prod(output):
        return verdict
    if x_shape is not None and given == tuple(x_shape):
        return dataclasses.replace(verdict, message=(
            f"{verdict.message.rstrip()} The weights reached backward in x's shape {given}, as "
            f"given; it was v, of shape {output}, that did not have x's shape. {V_HINT}"))
    return dataclasses.replace(
        verdict, misconception=RESHAPED,
        message=(f"{verdict.message.rstrip()} backward got as many weights as v has entries, "
                 f"but in the shape {given}, not v's {output}. {HINT}"))
