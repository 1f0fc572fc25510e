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
from dataclasses import dataclass, field
from typing import Iterator

from ..limits import Limits
from . import uids
from .worker_client import WorkerClient


@dataclass
class Slot:
    """One submission's uid and spare worker (``None``: the judge starts its own), and the
    workers its judge stopped, to be closed off the judge's path (``core.judge``'s ``later``)."""

    uid: int
    worker: WorkerClient | None
    later: list[WorkerClient] = field(default_factory=list)


class Spares:
    """At most one worker waiting, for ``limits`` (as ``core.grading_limits`` gives them)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.lock = threading.Lock()
        self.ready: tuple[contextlib.ExitStack, int, WorkerClient] | None = None
        self.filling: threading.Thread | None = None
        self.reaping: list[threading.Thread] = []
        self.closed = False

    @contextlib.contextmanager
    def take(self) -> Iterator[Slot]:
        """A leased uid and the spare worker for it for one submission (made now when none
        is ready, before the submission's time starts; ``None`` where it could not be made:
        the judge starts one on demand under that uid and hears why); the next spare is
        started meanwhile. Afterwards the
        workers are closed and the uid released in the background (``reap``)."""
        spare = self._pop()
        if spare is None:  # the first submission: its worker is made before its time starts
            # (red-team rt-s3: the zygote's start counted against the first student's limit,
            # which a 1 s --submission-timeout timed out on a right notebook)
            self._refill()
            spare = self._pop()
        self._refill()
        if spare is None:
            lease = contextlib.ExitStack()
            slot = Slot(lease.enter_context(uids.lease()), None)
        else:
            lease, uid, worker = spare
            slot = Slot(uid, worker)
        try:
            yield slot
        finally:
            self.reap(lease, [w for w in (slot.worker, *slot.later) if w is not None])

    def reap(self, lease: contextlib.ExitStack, workers: list[WorkerClient]) -> None:
        """Close ``workers`` (stopped already, or a spare never used), then release the uid
        (its leftovers killed first), in a thread: a killed torch process takes a few ms to
        give its memory back, which the next submission need not wait for."""
        thread = threading.Thread(target=_close, args=(lease, *workers), name="reap",
                                  daemon=True)
        thread.start()
        with self.lock:
            self.reaping = [t for t in self.reaping if t.is_alive()] + [thread]

    def close(self) -> None:
        """Stop the spare and release its uid (the grading run is over)."""
        with self.lock:
            self.closed = True
        spare = self._pop()
        if spare is not None:
            _close(spare[0], spare[2])
        with self.lock:
            reaping, self.reaping = self.reaping, []
        for thread in reaping:
            thread.join()

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
            _close(spare[0], spare[2])
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
            _close(lease, worker)


def _close(lease: contextlib.ExitStack, *workers: WorkerClient) -> None:
    """Close ``workers``, then release the uid they ran under (its leftovers killed first):
    no uid goes back while a process of its submission may run."""
    with lease:
        for worker in workers:
            worker.close()
