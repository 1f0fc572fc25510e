"""Unprivileged uids for workers, one per running worker, shared safely between graders.

Two ``autograder grade`` runs on one host must never hand the same uid to two live workers:
the process limit counts per uid, and cleaning up a uid kills every process it owns. Each uid
is held through an exclusive ``flock`` on a root-only lock file while a worker uses it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Iterator

#: The uids student code runs as when our runners grade (leased here, host-wide; a grading
#: container's judge accepts no other). The Gradescope zip's entry point and the pods take theirs from
#: ``CONTAINER_UIDS``, so a host runner's cleanup never reaches them.
STUDENT_UIDS = range(61000, 62000)
#: The uids student code runs as inside a container we do not lease for (the Gradescope zip,
#: PrairieLearn, a pod): without user namespaces a container's uid is the host's, so these stay
#: apart from ``STUDENT_UIDS``, out of reach of a host runner cleaning up its leased uid.
CONTAINER_UIDS = range(62000, 63000)
FIRST_UID, COUNT = STUDENT_UIDS.start, len(STUDENT_UIDS)


def lock_dir() -> Path:
    for base in (Path("/run"), Path(tempfile.gettempdir())):
        path = base / "autograder-uids"
        try:
            path.mkdir(mode=0o700, exist_ok=True)
            os.chmod(path, 0o700)
            return path
        except OSError:
            continue
    raise OSError("no folder for uid locks (/run and the temp folder are not writable)")


@contextlib.contextmanager
def lease() -> Iterator[int]:
    """Hold a free sandbox uid for the block; its leftover processes are killed before and
    after use, so a process that outlived one submission never meets the next."""
    folder = lock_dir()
    for uid in range(FIRST_UID, FIRST_UID + COUNT):
        fd = os.open(folder / f"{uid}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            kill_uid(uid)
            yield uid
        finally:
            kill_uid(uid)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        return
    raise OSError(f"all {COUNT} sandbox uids are in use")


def _owned_by(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                continue
    return pids


def kill_uid(uid: int) -> None:
    """Kill every process running as ``uid``: a child that switches to ``uid`` and calls
    ``kill(-1, SIGKILL)``, which no fork can outrun, repeated until none is left."""
    for _ in range(20):
        if not _owned_by(uid):
            return
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only signals and exits
            try:
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.01)
