"""The pod runner (``entry.pod``): ``SealedRunner`` inside the grading container, with a
block of sandbox uids of its own and each submission's leftovers deleted before the next."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterator

from ..judge import uids
from ..judge.core import judge
from ..judge.sandbox import SandboxError
from ..resultdoc import ResultDoc
from ..submissions import Submission
from .base import Setup
from .sealed import SealedRunner

#: Writable places every uid can reach, emptied of a uid's files around each submission.
SHARED_SCRATCH = ("/tmp", "/dev/shm", "/student")


def scrub(uid: int, roots: tuple[str, ...] = SHARED_SCRATCH) -> None:
    """Delete every file and folder ``uid`` owns under ``roots``, as ``uid`` (the judge has no
    CAP_DAC_OVERRIDE, and should not: it cannot enter a student's 0700 folder, the student
    uid can). By hand, not ``shutil.rmtree``: only ``uid``'s entries, never another's."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; covered by the pod tests
        code = 0
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for root in roots:
                for top, dirs, files in os.walk(root, topdown=False):
                    for name in files + dirs:
                        path = os.path.join(top, name)
                        try:
                            if os.lstat(path).st_uid != uid:
                                continue
                            if name in dirs and not os.path.islink(path):
                                os.rmdir(path)
                            else:
                                os.unlink(path)
                        except OSError:
                            code = 1
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.waitpid(pid, 0)


class UidPool:
    """The sandbox uids this pod hands out, one per submission being graded.

    Not ``uids.lease``'s ``STUDENT_UIDS``: without user namespaces a container's uids are the
    node's, and a runner on the node cleaning up its leased uid (``kill -1`` as that uid)
    would reach this pod's worker; the process rlimit counts per uid node-wide too. So pods
    take ``uids.CONTAINER_UIDS`` (as the Gradescope entry point does), each shard its own
    block: ``count`` uids from ``offset`` (shard index x jobs), wrapping around, so the pods of
    one Job never share one.
    """

    def __init__(self, offset: int = 0, count: int = 1):
        span = uids.CONTAINER_UIDS
        self.free = [span[(offset + i) % len(span)] for i in range(count)]
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def lease(self) -> Iterator[int]:
        with self.lock:
            uid = self.free.pop(0)
        try:
            uids.kill_uid(uid)  # in this container's pid namespace only
            yield uid
        finally:
            uids.kill_uid(uid)
            with self.lock:
                self.free.append(uid)


POOL = UidPool()  # main() sizes it for the shard and its jobs


class PodRunner(SealedRunner):
    """``SealedRunner`` inside the grading container: the same judge and documents, workers
    confined the container way, each submission's leftovers scrubbed before the next."""

    def __init__(self, setup: Setup):
        if setup.limits.confinement != "container":
            raise SandboxError("the pod runner confines workers the container way")
        super().__init__(setup)

    def _judge(self, sub: Submission, tests: list, seed: int) -> ResultDoc:
        with POOL.lease() as uid:
            scrub(uid)
            try:
                return judge(sub.path, sub.name, self.assignment, tests, seed=seed, uid=uid,
                             limits=self.limits)
            finally:
                uids.kill_uid(uid)
                scrub(uid)
