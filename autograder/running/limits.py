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
    # "container" only (the others' /tmp and /student are tmpfs of tmp_bytes): what one
    # worker's files may take on the disk its container writes (``judge.disk_budget``); 0: none
    disk_bytes: int = 2**30
    disk_files: int = 100_000
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


DISK_VARIABLES = {"AUTOGRADER_DISK_BYTES": "disk_bytes", "AUTOGRADER_DISK_FILES": "disk_files"}
_SUFFIXES = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def disk_from(environ) -> dict[str, int]:
    """The disk budget the grading containers' entry points take from their environment:
    ``AUTOGRADER_DISK_BYTES`` (default 1G; a number of bytes, or with K, M, G or T for
    powers of 1024) and ``AUTOGRADER_DISK_FILES`` (100000); 0 turns that budget off.
    ``ValueError`` naming the variable."""
    found = {}
    for name, field in DISK_VARIABLES.items():
        text = environ.get(name, "").strip()
        if not text:
            continue
        scale = _SUFFIXES.get(text[-1].upper(), 1) if field == "disk_bytes" else 1
        try:
            value = int(text[:-1] if scale > 1 else text) * scale
        except ValueError:
            raise ValueError(f"{name}={text}: not a whole number") from None
        if value < 0:
            raise ValueError(f"{name}={text}: out of range")
        found[field] = value
    return found


def with_gpu(limits: Limits) -> Limits:
    """``limits`` for grading with a GPU: no address-space rlimit, because CUDA reserves tens
    of GB of virtual address space when it initialises and fails under one (in a container
    the memory cgroup still caps what is really used)."""
    return dataclasses.replace(limits, memory_bytes=resource.RLIM_INFINITY)


def memory_cap(limits: Limits) -> int | None:
    """The memory a worker's processes may use together (its memory cgroup's limit): the
    address-space limit of one of them, or ``None`` where that is off (CUDA: ``with_gpu``)."""
    cap = limits.memory_bytes
    return None if cap == resource.RLIM_INFINITY or cap <= 0 else cap
