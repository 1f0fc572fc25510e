"""The ``docker-fork`` runner, host side: one judge container for the whole run
(``JudgeContainer``, which runs ``judge_service``), and a fresh container per submission that
only ever holds that student's worker."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass

from ..container_protocol import ContainerError
from ..judge import uids
from ..limits import Limits
from ..submissions import Submission
from .base import Setup
from .container import ContainerRunner
from .docker_engine import ContainerLimits, box_config, owner_label
from .judge_container import JudgeContainer


@dataclass
class Placed:
    """A submission's container as ``_launch`` leaves it: the host pid of its ``sleep``, the
    uid leased for its worker (held by ``lease`` until after the container is gone), and the
    job's connection to the judge container (``service``) that placed a worker in it."""

    pid: int
    uid: int
    lease: contextlib.ExitStack
    service: JudgeContainer
    conn: socket.socket


class ForkRunner(ContainerRunner):
    """``docker-fork``: still a fresh container per submission, but one that only ever holds
    that student's worker. One judge container (``JudgeContainer``) imports torch once for the
    whole run and forks each worker into the submission's container (its cgroups and
    namespaces), so a submission costs a container's start and stop, not an ``import torch``.

    The submission's container runs ``sleep`` as nobody: no network, read-only root, tmpfs
    ``/tmp`` and ``/student``, the memory, process and CPU limits of ``ContainerLimits``, no
    capability at all. The hidden tests, the zip and the seed stay in the judge container.
    A spare (``Spares``) is started with its uid leased and its first worker already forked,
    joined and confined in it by the judge (``JudgeContainer.place``): that worker holds
    nothing of any submission and reads no request before the job comes.
    """

    name = "docker-fork"

    def __init__(self, setup: Setup, *, image: str | None = None,
                 box: ContainerLimits | None = None, client=None, spares: int = 0):
        from .docker_engine import IMAGES

        super().__init__(setup, image=image or IMAGES["cpu"], box=box, client=client,
                         spares=spares, starters=spares)
        if self.box.gpus:
            raise ContainerError("docker-fork grades on the CPU image: use --runner docker-gpu")
        self.jobs = setup.jobs
        self.service = JudgeContainer.shared(self.client, self.image, setup.jobs)
        self.image = self.service.image_id  # the same files as the judge's zygote

    def _launch(self):
        """Create and start one empty container for a submission, lease its uid and have the
        judge place its first worker in it; return it with its ``Placed``."""
        container = self.client.containers.create(
            self.image, ["sleep", str(int(SLEEP_SECONDS))], entrypoint=[],
            labels={"autograder": self.assignment, "autograder-role": "submission",
                    **owner_label()},
            **submission_config(self.limits, self.box))
        lease = contextlib.ExitStack()
        try:
            container.start()
            pid = int(self.client.api.inspect_container(container.id)["State"]["Pid"])
            if pid <= 0:
                raise ContainerError("the submission's container stopped at once")
            uid = lease.enter_context(uids.lease())
            service = self.service
            return container, Placed(pid, uid, lease, service,
                                     service.place(self._placement(container.id, pid, uid)))
        except BaseException:
            container.remove(force=True)
            lease.close()
            raise

    def _placement(self, container_id: str, pid: int, uid: int) -> dict:
        return {"join_pid": pid, "join_container": container_id, "uid": uid,
                "limits": self.job_limits()}

    def _discard(self, spare) -> None:
        """Remove a spare never given a job; then end its connection (the judge closes the
        worker it placed), then release its uid."""
        container, placed = spare
        with placed.lease:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
            with contextlib.suppress(OSError):  # the judge container is gone
                placed.conn.shutdown(socket.SHUT_WR)
            finished(placed.conn)

    def run(self, sub: Submission, lease: contextlib.ExitStack) -> dict:
        """Grade in a fresh container; if the judge container itself is gone (killed, out of
        memory), start another and grade the submission once more, in another fresh
        container: nothing of the batch is lost with it."""
        try:
            return self._run_once(sub)
        except ContainerError:
            if self.in_flight.stopped or self.service.alive():
                raise
        self.service = JudgeContainer.shared(self.client, self.image, self.jobs)
        return self._run_once(sub)

    def _run_once(self, sub: Submission) -> dict:
        """The judge answers before it closes the job's worker; the container's removal, then
        the end of that close (the job's connection), then the uid's release follow off the
        submission's path (``Removals``), in that order."""
        container, placed = self._take()
        then = contextlib.ExitStack()
        then.enter_context(placed.lease)
        try:
            if placed.service is not self.service:  # placed by a judge container now gone
                placed.conn.close()
                placed.conn = self.service.place(
                    self._placement(container.id, placed.pid, placed.uid))
            answer = self.service.grade(placed.conn, self.job(sub, placed.uid),
                                        self.wall_limit())
            then.callback(finished, placed.conn)
            return answer
        finally:
            self.removals.remove(container, then)


def finished(conn: socket.socket, timeout: float = 60.0) -> None:
    """Wait until the judge ends a job's connection (it has closed the job's worker, and no
    process of its uid is left), at most ``timeout`` seconds, then close it."""
    with conn:
        conn.settimeout(timeout)
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass  # timed out, or the judge container is gone (and its workers with it)


SLEEP_SECONDS = 4 * 3600  # a submission's container ends by itself if the host never removes it


def submission_config(limits: Limits, box: ContainerLimits) -> dict:
    """The ``containers.create`` arguments of a ``docker-fork`` submission's container:
    ``box_config``, its ``sleep`` as nobody, removed when it stops."""
    return {**box_config(limits, box), "user": "65534:65534", "auto_remove": True}
