"""q2_saved: a ``count_saved`` that runs backward after its tracked forward.

The counts can be right (every pack-hook call happens in the forward), but ``backward`` writes a
``.grad`` into the caller's network's parameters, and adds to it on every later call: the
function changes its argument. ``changes`` (checks/probes) reports it as ``net.<p>.grad was
set`` / ``changed``; in the sealed runner the worker's module state carries each parameter's
``.grad`` and the judge mirrors it (``running/judge/remote.py``).
"""

from __future__ import annotations

import re

#: One phrase of ``changes`` for a parameter's gradient appearing or changing.
_GRAD = re.compile(r"^net\.[\w.]+\.grad was (set|changed)$")

RAN_BACKWARD = ("net's parameters now carry a .grad: count_saved ran backward (out.backward() "
                "or out.sum().backward() writes each parameter's .grad, and adds to it on "
                "every later call). Counting needs only the forward: every pack-hook call "
                "happens while net(inputs) runs, so leave out the backward.")


def ran_backward(changed: list[str]) -> str | None:
    """The message for a call whose only trace on the network is gradients on its parameters
    (``None`` when anything else changed, or no gradient did)."""
    net = [c for c in changed if c.startswith("net")]
    if net and all(_GRAD.match(c) for c in net):
        return RAN_BACKWARD
    return None
