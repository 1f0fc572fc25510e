"""``Limits``: what one worker may use (memory, processes, files, output, time) and how it is
confined; a light module (no torch, no sandbox), so the command line, the runners' host side
and the entry points build limits without importing the sandbox."""

from __future__ import annotations

import dataclasses
import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-worker limits. Memory is address space; processes count per uid (one uid a worker)."""

    memory_bytes: int = 4 * 2**30
    cpu_seconds: int = 600
    processes: int = 64
    file_bytes: int = 64 * 2**20
    open_files: int = 256
    output_bytes: int = 64 * 2**10
    tmp_bytes: int = 256 * 2**20
    call_timeout: float = 30.0
    cell_timeout: float = 120.0
    submission_timeout: float = 300.0
    confinement: str = "namespaces"  # or "container", "join": see ``judge.sandbox``
    join_pid: int = 0  # "join": the host pid of the submission's container (its sleep)
    join_pidfd: int = -1  # "join": the judge's pidfd of that process, held for the whole job
    cuda: bool = False  # the judge grades with CUDA: each worker must show it can use it

    @classmethod
    def timed(cls, call_timeout: float, submission_timeout: float, **rest) -> "Limits":
        """Limits from the two times staff set (``--timeout``, ``--submission-timeout``, or a
        pod's environment): a notebook cell may take four calls' time."""
        return cls(call_timeout=call_timeout, cell_timeout=4 * call_timeout,
                   submission_timeout=submission_timeout, **rest)


def with_gpu(limits: Limits) -> Limits:
    """``limits`` for grading with a GPU: no address-space rlimit, because CUDA reserves tens
    of GB of virtual address space when it initialises and fails under one (in a container
    the memory cgroup still caps what is really used)."""
    return dataclasses.replace(limits, memory_bytes=resource.RLIM_INFINITY)
