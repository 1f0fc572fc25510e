"""q5_numpy: an export that gives the caller's tensor new memory to read from.

``t.data = t.data.contiguous()`` (or ``t.set_(...)``, ``t.data = t.data.clone()``) keeps t's
values, so the array comes out right, but the caller's ``t`` now has other strides and memory
of its own: a view is cut loose from its base (writing to the base no longer shows in t). The
layout is compared before and after the call: strides, storage offset, and whether t still
shares its base's memory. In the sealed runner the worker's ``t`` is decoded from the wire
with its strides, and the judge gives its own ``t`` the new layout when the worker reports
other strides (``running/judge/remote.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..result import Evidence, Verdict

NAME = "modified-input"


class Layout(NamedTuple):
    stride: tuple[int, ...]
    offset: int
    shares_base: bool | None  # None: t is no view of another tensor


def layout_of(t: torch.Tensor, base: torch.Tensor | None) -> Layout:
    """Where ``t``'s elements live: strides, storage offset, and memory shared with ``base``."""
    shares = None if base is None else (
        t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())
    return Layout(tuple(t.stride()), t.storage_offset(), shares)


def _placed(layout: Layout, shape: torch.Size) -> list[tuple[int, int]]:
    return [(n, s) for n, s in zip(shape, layout.stride) if n > 1]


def judge_layout(before: Layout, t: torch.Tensor, base: torch.Tensor | None,
                 shown: str) -> Verdict | None:
    """``modified-input`` when the call gave ``t`` another layout or cut it loose from the
    ``base`` it viewed; ``None`` when t is laid out as it was."""
    after = layout_of(t, base)
    cut_loose = before.shares_base and not after.shares_base
    restrided = _placed(before, t.shape) != _placed(after, t.shape)
    if not (cut_loose or restrided):
        return None
    what = ("t is no longer a view of its base: writing to the base no longer shows in t"
            if cut_loose else "the caller's t now has memory and strides of its own")
    return Verdict(False, f"{shown}: the values are right, but t.data = ... (or t.set_) replaced "
                   f"t's storage: {what} (strides {before.stride} before the call, "
                   f"{after.stride} after). export_numpy must leave t as it found it. NumPy "
                   "needs no contiguous memory from you: t.detach().cpu().numpy().copy() "
                   "follows any strides, and t.contiguous() makes a copy of your own without "
                   "touching t.", NAME,
                   Evidence({"t": {"stride": list(before.stride), "offset": before.offset}},
                            got={"stride": list(after.stride), "offset": after.offset}))
