"""What a student is told beside an error torch or Python raised in their code: the usual
cause of each common error, and what to write instead, whichever function raised it.

Blind round zu's ``torch.dot(weights, y)`` and round zv's ``if w.grad: w.grad.zero_()`` were
told only torch's words ("1D tensors expected", "Boolean value of Tensor with more than one
value is ambiguous"), which say what failed, not what the student wrote. A check that knows
more about its own function renames the failure (``porting.common.name_raised``, the probes);
this table is what every raised call says first. Each needle is a fragment of the error's
text; the advice uses no digits (``name_foreign_size`` reads the sizes an error names) and
repeats no needle of the checks' own tables.
"""

from __future__ import annotations

import math
import re

#: (fragment of the error message, what to tell), checked in order; the first match is told.
HINTS: tuple[tuple[str, str], ...] = (
    ("Boolean value of Tensor with more than one value is ambiguous",
     "An `if`, `while`, `and`, `or` or `not` asked whether a tensor of several values is true. "
     "To ask whether a tensor is there at all (a `.grad` that may be None), write "
     "`is not None`; to ask about its values, say how: `.any()` or `.all()`."),
    ("1D tensors expected",
     "torch.dot and torch.vdot take one-dimensional tensors only: for tensors of any shape, "
     "multiply and sum, `(a * b).sum()`, or hand backward the weights, `y.backward(weights)`."),
    ("grad can be implicitly created only for scalar outputs",
     "backward() without an argument needs an output of one value: for a tensor of several "
     "values pass the upstream gradient, `y.backward(weights)`, or reduce it to one value "
     "first."),
    ("Trying to backward through the graph a second time",
     "backward frees the graph it went through: a second backward over the same graph needs "
     "`retain_graph=True` on the first one, or a fresh forward pass."),
    ("does not require grad and does not have a grad_fn",
     "backward was called on a tensor that no leaf requiring grad reaches: make the leaves "
     "with `requires_grad=True` (or `.requires_grad_()`), and build the graph outside "
     "`torch.no_grad()` and without `.detach()`."),
    *((needle, "`float()`, `int()` and `.item()` take a tensor of one value: for several "
                "values use `.tolist()`, or keep the tensor.")
      for needle in ("only one element tensors can be converted to Python scalars",  # float()
                     "cannot be converted to Scalar")),  # .item()
    ("Expected all tensors to be on the same device",
     "The tensors of one operation must be on one device: create new ones with "
     "`device=x.device`, or move them with `.to(x.device)`."),
    ("expected TensorOptions(dtype=",
     "torch.DoubleTensor(t) and the other legacy constructors (torch.FloatTensor, ...) do not "
     "convert: they refuse a tensor of another dtype. Convert with `t.double()`."),
    ("AssertionError",
     "An `assert` in your function stopped it at these inputs. If it compares floats with "
     "`==`, results that are equal on paper often differ in their last digits: compare with "
     "`math.isclose` or `torch.allclose`, or leave the check out of the graded function."),
    ("Expected f(*args) to return a scalar Tensor",
     "torch.func.grad takes the gradient of a function returning one value. Under "
     "torch.func.vmap it sees one slice along the first dimension, which has several values "
     "when the input has more than one dimension: flatten first, or give vjp the weights "
     "(`torch.func.vjp`, `y.backward(weights)`), which works for every shape."),
    ("all elements of input should be between 0 and 1",
     "F.binary_cross_entropy (nn.BCELoss) takes probabilities: every value of its input must "
     "lie between zero and one, and here one did not (or was NaN). Logits such as `X @ w` go "
     "to `F.binary_cross_entropy_with_logits`, which applies the sigmoid itself and stays "
     "exact for any logit."),
    ("has been modified by an inplace operation",
     "A tensor autograd saved for backward was changed in place after it was saved: compute "
     "on a new tensor (`x = x * k` rather than `x *= k`), or change it only after backward."),
)


#: autograd refusing what a custom Function's backward returned (blind round zzj's
#: ``(grad_output * grad).t()`` at a 2-D x of shape (m, n): "got [n, m] but expected shape
#: compatible with [m, n]"), with the sizes torch names.
_INVALID_GRADIENT = re.compile(r"returned an invalid gradient at index \d+ - got \[([\d, ]*)\] "
                               r"but expected shape compatible with \[([\d, ]*)\]")
#: What backward returns, told beside every such refusal.
ONE_PER_INPUT = ("backward returns one gradient per input of forward, each in that input's own "
                 "shape: entry by entry, the derivative with respect to that entry of the "
                 "input, in that entry's place.")
#: What the refused gradient's sizes show, by how they relate to the input's.
GRADIENT_SHAPES = {
    "reversed": "This one has the input's sizes in reverse order: transposed (`.t()`, `.T`, "
                "`.mT`, a `permute`), computed on a transposed input, or reshaped to the sizes "
                "reversed. Give it back in the input's own shape, each entry in its input entry's "
                "place: a gradient taken entry by entry needs no transpose.",
    "flat": "This one is flat: flattened somewhere (`flatten()`, a reshape or view to one "
            "dimension, or a flat copy saved in forward). Give it back as `.reshape(x.shape)` "
            "for the input x.",
    "reshaped": "This one has the input's number of entries in another shape: give it back in "
                "the input's own shape, each entry in its input entry's place.",
    "sized": "This one has another number of entries than the input: it must hold one "
             "derivative per entry of the input.",
}


def gradient_shapes(message: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``(got, expected)``: the sizes of a gradient autograd refused and of its input, as the
    error in ``message`` names them; None for any other text."""
    found = _INVALID_GRADIENT.search(message)
    if found is None:
        return None
    got, expected = (tuple(int(n) for n in part.split(",") if n.strip())
                     for part in found.groups())
    return got, expected


def gradient_shape_kind(got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """Which of ``GRADIENT_SHAPES`` a refused gradient of sizes ``got`` is."""
    if math.prod(got) != math.prod(expected):
        return "sized"
    if len(got) >= 2 and got == expected[::-1]:
        return "reversed"
    return "flat" if len(got) == 1 and len(expected) != 1 else "reshaped"


def hint_for(message: str) -> str | None:
    """The advice for an error whose text is ``message``, or None for one not in ``HINTS``."""
    advice = next((advice for needle, advice in HINTS if needle in message), None)
    shapes = gradient_shapes(message) if advice is None else None
    if shapes is None:
        return advice
    return f"{ONE_PER_INPUT} {GRADIENT_SHAPES[gradient_shape_kind(*shapes)]}"
