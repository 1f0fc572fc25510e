"""q2_saved: a pack hook that reads each saved tensor through ``.view`` (``t.view(-1)``,
``len(t.view(-1))``, ``t.view(t.numel())``) raises on the first saved tensor that is not
contiguous: a later Linear's ``weight.t()`` (saved for the input's gradient), a strided batch.
Right on contiguous saved tensors, as the lesson's are, so the raise comes only on other
networks. Named ``view-on-saved`` when the call raised view's own contiguity error; the points
of the raise stay as they are, only the cause is told."""

from __future__ import annotations

from ..result import Verdict
from .common import renamed

VIEWED = "view-on-saved"
#: The start of torch's error for ``.view`` on memory whose strides it cannot flatten.
VIEW_ERROR = "view size is not compatible with input tensor's size and stride"
HINT = ("That is view's error: a saved tensor can be a non-contiguous view (a later Linear "
        "saves weight.t() for the input's gradient; a strided batch is saved as it is), and "
        ".view needs contiguous memory. Count elements with t.numel() (and bytes with "
        "t.numel() * t.element_size()), or use reshape, which copies when it must.")


def view_on_saved(verdict: Verdict) -> Verdict:
    """``verdict`` (a call that raised) named ``VIEWED`` when the error is view's contiguity
    error; else ``verdict`` as it is."""
    if verdict.ok or verdict.misconception != "raised" or VIEW_ERROR not in verdict.message:
        return verdict
    return renamed(verdict, VIEWED, HINT)
