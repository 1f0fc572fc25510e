"""What a worker's CUDA report (``autograder/worker/cuda_state.py``) says about the GPU it
was meant to use: the judge refuses a worker that cannot use it, with the reason, before any
student code runs.
"""

from __future__ import annotations


def cuda_mismatch(state: object) -> str | None:
    """Why a worker's CUDA report (``worker.cuda_state``, untrusted text from the worker
    before any student code ran) falls short of a judge that grades with CUDA, or None."""
    if not isinstance(state, dict):
        return "it sent no CUDA report"
    if state.get("bad_fork"):
        return ("it was forked from a process that had initialised CUDA (a grader bug: the "
                "zygote must fork before CUDA is touched)")
    error = f" ({str(state.get('error'))[:300]})" if state.get("error") else ""
    if state.get("available") is not True:
        return (f"torch sees no CUDA device in it{error}: check the GPU device files' modes "
                "for its uid, CUDA_VISIBLE_DEVICES, and the driver")
    if state.get("allocated") is not True:
        return (f"it could not allocate on the GPU{error}: GPU memory full (fewer --jobs) or "
                "a compute mode that allows one process per GPU")
    return None
