"""What the worker reports, as the judge keeps it. The worker runs student code, so everything
it sends is untrusted data: only the fields the judge uses are kept, of the types it expects,
every string cut to a length (``worker_text``): what the arrangements observed during a call
(``clean_observed``) and an error raised in the worker (``remote_error``); a cell's report is
``cells.clean_cell_entry``.
"""

from __future__ import annotations

from typing import Any

from ...checks.calling import RemoteError, UnreadableAnswer, WorkerLost
from ...worker.asked_devices import QUESTIONS
from ...worker.stand_in import GRAD_MODES


def worker_text(text: Any, limit: int) -> str:
    """At most ``limit`` characters of a field that should be a string; ``str()`` of anything
    else (a list of millions of numbers the worker put there) would build a far longer one."""
    if isinstance(text, str):
        return text[:limit]
    if text is None or isinstance(text, (bool, int, float)):
        return str(text)[:limit]
    return f"<{type(text).__name__}>"


def clean_observed(observed: dict) -> dict:
    """Only the observations checks use, as plain values of the expected types. The worker
    measured them in the student's process: hearsay, for advice only (docs/security.md)."""
    clean: dict = {}
    count = observed.get("saved_tensors")
    if isinstance(count, int) and not isinstance(count, bool):
        clean["saved_tensors"] = count
    dtypes = observed.get("dtypes")
    if isinstance(dtypes, list):
        clean["dtypes"] = [str(d)[:20] for d in dtypes[:1000]]
    modes = observed.get("grad_modes")
    if isinstance(modes, list):  # words a failure of check_my_op, never points
        clean["grad_modes"] = [m for m in modes[:1000] if isinstance(m, str) and m in GRAD_MODES]
    graphs = observed.get("graph_backwards")
    if isinstance(graphs, int) and not isinstance(graphs, bool):  # words a failure, never points
        clean["graph_backwards"] = graphs
    reused = observed.get("answer_reused")
    if isinstance(reused, int) and not isinstance(reused, bool):  # a .copy() undoes a forgery
        clean["answer_reused"] = reused
    if isinstance(observed.get("tf32"), bool):  # names a cause of a failure, never points
        clean["tf32"] = observed["tf32"]
    steps = observed.get("optimizer_steps")
    if isinstance(steps, dict):  # names a cause of a failure, never points
        clean["optimizer_steps"] = {k: steps[k] for k in ("kept", "new")
                                    if isinstance(steps.get(k), int)
                                    and not isinstance(steps.get(k), bool)}
    devices = observed.get("forward_devices")
    if isinstance(devices, list):  # names an answer on meta no forward made (docs/security.md)
        clean["forward_devices"] = [worker_text(d, 20) for d in devices[:16]]
    moves = observed.get("module_moves")
    if isinstance(moves, list):  # names a failure on meta, never points (docs/security.md)
        clean["module_moves"] = [[worker_text(m[0], 40), worker_text(m[1], 40)]
                                 for m in moves[-16:] if isinstance(m, list) and len(m) == 2]
    asked = observed.get("devices_asked")
    if isinstance(asked, list):  # words a failure of pick_device, never points
        clean["devices_asked"] = [q for q in asked[:32] if isinstance(q, str) and q in QUESTIONS]
    kinds = observed.get("move_kinds")
    if isinstance(kinds, list):  # names a mistake, never points (docs/security.md)
        clean["move_kinds"] = [worker_text(k, 40) for k in kinds[-16:]]
    if isinstance(observed.get("raised_by_move"), bool):  # names a failure, never points
        clean["raised_by_move"] = observed["raised_by_move"]
    left = observed.get("modes_left")
    if isinstance(left, dict):  # a flag like the answer's own (docs/security.md)
        clean["modes_left"] = {worker_text(k, 40): worker_text(v, 40)
                               for k, v in list(left.items())[:8]}
    return clean


def remote_error(error: Any) -> Exception:
    """The exception to raise in the judge for the worker's ``error`` reply: a ``RemoteError``
    with its type, message and traceback cut, ``WorkerLost`` for a malformed one."""
    if not isinstance(error, dict):
        return WorkerLost("its process sent a malformed error")
    if error.get("wire"):  # the call returned; what it returned could not be sent
        return UnreadableAnswer(worker_text(error.get("message"), 300))
    return RemoteError(worker_text(error.get("type"), 100), worker_text(error.get("message"), 2000),
                       worker_text(error.get("traceback"), 8000))
