"""q4_vjp: what an answer in another dtype than x's is told (``dtype-lost``), by the dtype it
came back in: float32 for a float64 x is torch's default dtype, what a tensor built from
Python numbers (``torch.tensor(x.tolist())``) or made without ``dtype=`` gets; float16 or
bfloat16 is a half precision something cast to and never left."""

from __future__ import annotations

import torch

from .common import dtype_name

#: Half precisions, with their significant bits.
HALF = {torch.float16: 11, torch.bfloat16: 8}
LEAF_HINT = "Make the leaf from a copy: leaf = x.detach().clone().requires_grad_()."
DEFAULT_HINT = ("A tensor built from a Python list, as torch.tensor(x.tolist()) or "
                "torch.tensor(x.numpy().tolist()) builds it, is float32, torch's default dtype, "
                "whatever x's dtype was (so is one made by torch.zeros(x.shape) or torch.Tensor "
                "without dtype=, and x.float() converts to it). Keep x's dtype: "
                "leaf = x.detach().clone().requires_grad_(), or pass dtype=x.dtype.")


def lost(got: torch.dtype, given: torch.dtype) -> str:
    """Why an answer of dtype ``got`` for inputs of dtype ``given`` is wrong, and the fix."""
    if got in HALF:
        name = dtype_name(got)
        return (f"{name} is a half precision (it keeps {HALF[got]} significant bits): "
                f"something was cast to it (.half(), .to(torch.{name}), a torch.autocast "
                "region) and the gradient was never brought back. Compute in x's dtype and "
                "return the leaf's .grad as it is: leaf = x.detach().clone().requires_grad_(), "
                "v.backward(weights).")
    if got == torch.float32 and given == torch.float64:  # torch's default dtype
        return f"the fresh leaf lost x's dtype. {DEFAULT_HINT}"
    return f"the fresh leaf lost x's dtype. {LEAF_HINT}"
