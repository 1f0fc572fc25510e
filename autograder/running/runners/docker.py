"""The Docker runner: one container of the grading image per submission.

The host side only: it never imports torch and never runs a check. Each container gets the
notebook, the autograder zip, the seed and the limits as one JSON job on stdin; inside, the
trusted judge (``entry.container``) grades it with the notebook's code in a worker under an
unprivileged uid; the result document comes back as one JSON line on stdout, never a pickle,
and is checked against the zip's own points before it is written.

Containers run with no network, a read-only root, tmpfs for the writable paths, memory, process
and CPU limits, ``no-new-privileges`` and every capability dropped except the four the judge
needs to hand the notebook to the student uid:

- ``SETUID``, ``SETGID``: ``setgroups``/``setgid``/``setuid`` to uid 61000 before the worker
  runs (which also clears every capability in the worker);
- ``SETPCAP``: the worker empties its capability bounding set before that (without it the
  set keeps the container's capabilities, and the worker refuses to run student code);
- ``KILL``: the judge (root) kills the worker, a process of another uid, on a timeout.
"""


from __future__ import annotations

import contextlib
import socket
import sys

from ..container_protocol import MAX_ANSWER_BYTES, ContainerError, parse_answer
from ..judge import uids
from ..limits import Limits
from ..submissions import Submission
from .base import Setup
from .container import ContainerRunner
from .docker_engine import (
    CAPABILITIES,
    IMAGES,
    ContainerLimits,
    box_config,
    owner_label,
    warm_gpu_image,
)

ENTRY = ["/opt/autograder-env/bin/python", "-m", "autograder.running.entry.container"]


def host_config(limits: Limits, box: ContainerLimits) -> dict:
    """The ``containers.create`` arguments that confine one grading container (``docker``):
    ``box_config``, with the judge inside as root with three capabilities back."""
    import docker

    config = box_config(limits, box)
    config["tmpfs"]["/judge"] = "size=256m,mode=0700"  # the judge's scratch: zip, notebook
    config.update(
        user="0", cap_add=CAPABILITIES,
        # one intra-op thread: the container has one CPU, more threads only get throttled
        environment={"TMPDIR": "/judge", "HOME": "/judge", "OMP_NUM_THREADS": "1"},
    )
    if box.gpus:
        config["device_requests"] = [docker.types.DeviceRequest(count=-1,
                                                                capabilities=[["gpu"]])]
    return config


class DockerRunner(ContainerRunner):
    """Grades each submission in its own container, the judge inside it.

    Containers are started ahead of need (``spares``, up to one per job): a started container
    imports torch and forks its worker zygote while it waits for its job, so a submission
    does not wait for that. ``close()`` removes the spares left at the end of the batch.
    """

    def __init__(self, setup: Setup, *, image: str = IMAGES["cpu"],
                 box: ContainerLimits | None = None, client=None, spares: int = 0):
        super().__init__(setup, image=image, box=box, client=client, spares=spares)
        self.name = "docker-gpu" if self.box.gpus else "docker"
        if self.box.gpus:  # before any submission's clock starts (and before spares)
            try:
                took = warm_gpu_image(self.client, image, say=_say)
                _say(f"{image} warm after {took:.0f} s")
            except ContainerError as exc:  # each submission's worker will say it again
                _say(f"warning: {exc}")

    def _launch(self):
        """Create and start one container waiting for its job; return it with its stdin."""
        container = self.client.containers.create(
            # detach=False with stdin_open sets StdinOnce: closing our stdin is EOF inside
            self.image, ENTRY, stdin_open=True, detach=False,
            labels={"autograder": self.assignment, **owner_label()},
            **host_config(self.limits, self.box))
        try:
            stream = self.client.api.attach_socket(container.id,
                                                   params={"stdin": 1, "stream": 1})
            container.start()
        except BaseException:
            container.remove(force=True)
            raise
        return container, stream

    def _release(self, handle) -> None:
        handle.close()  # the container's stdin, never written

    def run(self, sub: Submission, lease: contextlib.ExitStack) -> dict:
        """Run one container to the end; return the result document it printed."""
        # A host-wide uid, not a fixed one: without user namespaces a container's uid is the
        # host's, so two workers sharing one would share its process limit, and the local
        # sealed runner's cleanup of that uid (kill -1 as it) would kill them.
        uid = lease.enter_context(uids.lease())
        container, stream = self._take()
        try:
            _send(stream, self.job(sub, uid))
            self._wait(container)
            out = _bounded(container.logs(stdout=True, stderr=False, stream=True))
            err = _bounded(container.logs(stdout=False, stderr=True, stream=True))
        finally:  # the uid is released once the container is gone
            self.removals.remove(container, lease.pop_all())
        return parse_answer(out, err)

    def _wait(self, container) -> None:
        limit = self.wall_limit()
        try:
            container.wait(timeout=limit)
        except Exception as exc:  # requests' ReadTimeout/ConnectionError: the judge is stuck
            container.kill()
            raise ContainerError(f"the container did not finish within {limit:g} s") from exc


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _send(stream, data: bytes) -> None:
    """Write the job to the container's stdin and close it (``stdin_once``: EOF for the
    judge)."""
    raw = getattr(stream, "_sock", stream)
    try:
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
    finally:
        stream.close()


def _bounded(chunks) -> str:
    """At most ``MAX_ANSWER_BYTES`` of a stream of byte chunks, as text."""
    kept, size = [], 0
    for chunk in chunks:
        kept.append(chunk[: MAX_ANSWER_BYTES - size])
        size += len(kept[-1])
        if size >= MAX_ANSWER_BYTES:
            break
    return b"".join(kept).decode("utf-8", "replace")

