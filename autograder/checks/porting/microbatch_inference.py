"""q2_microbatch: a gradient buffer made under ``torch.inference_mode()``
(``inference-tensor``).

A buffer for the accumulated gradient needs no graph, so it is tempting to make it inside
``with torch.inference_mode():`` (or in a helper decorated with ``@torch.inference_mode()``).
What that block makes is an *inference tensor*: outside the block torch refuses to update it
in place (``total += w.grad``, ``add_``, ``zero_``, ``total[:] = ...``, a ``w.grad`` set to it
that backward accumulates into) and autograd refuses to save it for backward (a micro-batch
or weight made there and used in the loss). torch's error names the tensor's kind, so the
error's text alone establishes the cause: no call is made.
"""

from __future__ import annotations

NAME = "inference-tensor"

ADVICE = (
    "That tensor was made under torch.inference_mode() (a `with torch.inference_mode():` "
    "block or a function decorated with it): an inference tensor, which outside the block can "
    "never be updated in place (+=, add_, zero_, an index assignment, a .grad that backward "
    "accumulates into) nor saved for backward. A gradient buffer needs no inference mode: make "
    "it as an ordinary tensor outside the block (torch.zeros_like(w); under torch.no_grad() if "
    "you want no graph), or .clone() it outside the block, or let w.grad itself accumulate.")

#: torch's words for the two refusals: ``common.call_named``'s hints.
RAISES = (
    ("Inplace update to inference tensor outside InferenceMode", NAME, ADVICE),
    ("Inference tensors cannot be saved for backward", NAME, ADVICE),
)
