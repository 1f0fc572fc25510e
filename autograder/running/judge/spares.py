"""A worker confined ahead of need, for the local sealed runner: while one submission is
graded, the next one's worker is forked from the zygote, confined, given its CPU group and
its leased uid, and has said so (``WorkerClient``'s first line), so that the next submission
does not wait for any of it (the CPU group's move alone waits for the kernel: ~10 ms).

A spare holds nothing of any submission: it is forked from the secret-free zygote and reads
no request before it is handed to a submission's ``judge``, whose time limit starts then. Its
uid is leased (``uids.lease``, leftovers killed first) for as long as it lives, and released
after the submission that used it, as for a worker started on demand.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from ..limits import Limits
from . import uids
from .worker_client import WorkerClient


class Spares:
    """At most one worker waiting, for ``limits`` (as ``core.grading_limits`` gives them)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.lock = threading.Lock()
        self.ready: tuple[contextlib.ExitStack, int, WorkerClient] | None = None
        self.filling: threading.Thread | None = None
        self.closed = False

    @contextlib.contextmanager
    def take(self) -> Iterator[tuple[int, WorkerClient | None]]:
        """A leased uid and the spare worker for it (``None``: start one on demand under
        that uid) for one submission; the next spare is started meanwhile."""
        spare = self._pop()
        self._refill()
        if spare is None:
            with uids.lease() as uid:
                yield uid, None
            return
        lease, uid, worker = spare
        with lease:
            try:
                yield uid, worker
            finally:
                worker.close()  # the judge's own close, or a spare it never used

    def close(self) -> None:
        """Stop the spare and release its uid (the grading run is over)."""
        with self.lock:
            self.closed = True
        spare = self._pop()
        if spare is not None:
            lease, _, worker = spare
            with lease:
                worker.close()

    def _pop(self) -> tuple[contextlib.ExitStack, int, WorkerClient] | None:
        """The ready spare (waiting for the one being started), or None; a spare whose
        process is gone is stopped and not handed out."""
        with self.lock:
            filling = self.filling
        if filling is not None:
            filling.join()
        with self.lock:
            spare, self.ready = self.ready, None
        if spare is not None and (spare[2].lost or spare[2].proc.poll() is not None):
            lease, _, worker = spare
            with lease:
                worker.close()
            return None
        return spare

    def _refill(self) -> None:
        with self.lock:
            if self.closed or self.ready is not None or (self.filling is not None
                                                         and self.filling.is_alive()):
                return
            filling = threading.Thread(target=self._prepare, daemon=True)
            filling.start()
            self.filling = filling

    def _prepare(self) -> None:
        lease = contextlib.ExitStack()
        try:
            uid = lease.enter_context(uids.lease())
            worker = WorkerClient(uid, self.limits)
        except Exception:  # noqa: BLE001 - the submission starts its own and hears why
            lease.close()
            return
        with self.lock:
            keep = not self.closed
            if keep:
                self.ready = (lease, uid, worker)
        if not keep:
            with lease:
                worker.close()
