"""The ``docker-fork`` runner, host side: one judge container for the whole run
(``JudgeContainer``, which runs ``judge_service``), and a fresh container per submission that
only ever holds that student's worker."""

from __future__ import annotations

import atexit
import contextlib
import socket
import threading
from pathlib import Path

from ..container_protocol import MAX_ANSWER_BYTES, ContainerError, parse_answer
from ..limits import Limits
from ..submissions import Submission
from .base import Setup
from .container import ContainerRunner
from .docker_engine import CAPABILITIES, ContainerLimits, box_config, owner_label


class ForkRunner(ContainerRunner):
    """``docker-fork``: still a fresh container per submission, but one that only ever holds
    that student's worker. One judge container (``JudgeContainer``) imports torch once for the
    whole run and forks each worker into the submission's container (its cgroups and
    namespaces), so a submission costs a container's start and stop, not an ``import torch``.

    The submission's container runs ``sleep`` as nobody: no network, read-only root, tmpfs
    ``/tmp`` and ``/student``, the memory, process and CPU limits of ``ContainerLimits``, no
    capability at all. The hidden tests, the zip and the seed stay in the judge container.
    """

    name = "docker-fork"

    def __init__(self, setup: Setup, *, image: str | None = None,
                 box: ContainerLimits | None = None, client=None, spares: int = 0):
        from .docker_engine import IMAGES

        super().__init__(setup, image=image or IMAGES["cpu"], box=box, client=client,
                         spares=spares)
        if self.box.gpus:
            raise ContainerError("docker-fork grades on the CPU image: use --runner docker-gpu")
        self.service = JudgeContainer.shared(self.client, self.image, spares)
        self.image = self.service.image_id  # the same files as the judge's zygote

    def _launch(self):
        """Create and start one empty container for a submission; return it with its pid."""
        container = self.client.containers.create(
            self.image, ["sleep", str(int(SLEEP_SECONDS))], entrypoint=[],
            labels={"autograder": self.assignment, "autograder-role": "submission",
                    **owner_label()},
            **submission_config(self.limits, self.box))
        try:
            container.start()
            pid = int(self.client.api.inspect_container(container.id)["State"]["Pid"])
            if pid <= 0:
                raise ContainerError("the submission's container stopped at once")
        except BaseException:
            container.remove(force=True)
            raise
        return container, pid

    def run(self, sub: Submission, uid: int, lease: contextlib.ExitStack) -> dict:
        """Grade in a fresh container; if the judge container itself is gone (killed, out of
        memory), start another and grade the submission once more, in another fresh
        container: nothing of the batch is lost with it."""
        try:
            return self._run_once(sub, uid, lease)
        except ContainerError:
            if self.in_flight.stopped or self.service.alive():
                raise
        self.service = JudgeContainer.shared(self.client, self.image, self.spares.most)
        return self._run_once(sub, uid, lease)

    def _run_once(self, sub: Submission, uid: int, lease: contextlib.ExitStack) -> dict:
        """The judge answers before it closes the job's worker; the container's removal, then
        the end of that close (the job's connection), then the uid's release follow off the
        submission's path (``Removals``), in that order."""
        container, pid = self._take()
        then = contextlib.ExitStack()
        try:
            answer, conn = self.service.grade(self.job(sub, uid, join_pid=pid,
                                                       join_container=container.id),
                                              self.wall_limit())
            then.enter_context(lease.pop_all())
            then.callback(finished, conn)
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
SERVICE_SOCKET = "/run/autograder-judge/judge.sock"
SERVICE = ["/opt/autograder-env/bin/python", "-m", "autograder.running.entry.judge_service",
           SERVICE_SOCKET]
# what moving a process into another container takes (setns, /proc/PID/ns of another uid's
# process, entering its root), plus the judge's own SETUID/SETGID/SETPCAP/KILL
SERVICE_CAPABILITIES = ["SYS_ADMIN", "SYS_PTRACE", "SYS_CHROOT", *CAPABILITIES]
# The judge container's memory limit (MiB), so that a judge bug costs the jobs it holds, never
# the host: torch, otter, the checks and the zygote (a judge's peak is ~310 MB), then per job
# in flight the worst reply it may parse and decode (~300 MB under worker_client's caps and
# wire.Budget, docs/decoding-budgets.md) and the notebook and zip on its /judge tmpfs.
JUDGE_MEMORY_BASE_MB = 1024
JUDGE_MEMORY_PER_JOB_MB = 768


def judge_memory(jobs: int) -> str:
    """The judge container's ``mem_limit`` for ``jobs`` submissions graded at once."""
    return f"{JUDGE_MEMORY_BASE_MB + JUDGE_MEMORY_PER_JOB_MB * max(jobs, 1)}m"


def submission_config(limits: Limits, box: ContainerLimits) -> dict:
    """The ``containers.create`` arguments of a ``docker-fork`` submission's container:
    ``box_config``, its ``sleep`` as nobody, removed when it stops."""
    return {**box_config(limits, box), "user": "65534:65534", "auto_remove": True}


class JudgeContainer:
    """The ``docker-fork`` judge container (``judge_service``) and the host's way to it: a
    Unix socket in a folder of this process's own, bound into the container. One per engine
    and image in a process (``shared``), shared by every assignment of a run; it ends when
    this process does (the lifeline connection closes)."""

    START_TIMEOUT = 180.0

    def __init__(self, client, image: str, jobs: int = 1):
        import tempfile
        import time

        import docker

        self.client, self.jobs = client, jobs
        self.image_id = client.images.get(image).id
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-judge-"))  # 0700: ours only
        exposed = self.folder / "socket"
        exposed.mkdir()
        exposed.chmod(0o777)  # the container's root may have no DAC_OVERRIDE
        self.path = exposed / Path(SERVICE_SOCKET).name
        self.container = client.containers.create(
            self.image_id, SERVICE, entrypoint=[],
            labels={"autograder-role": "judge", **owner_label()},
            network_mode="none", pid_mode="host", cgroupns="host", read_only=True,
            mem_limit=judge_memory(jobs), memswap_limit=judge_memory(jobs),
            cap_drop=["ALL"], cap_add=SERVICE_CAPABILITIES,
            volumes={"/sys/fs/cgroup": {"bind": "/sys/fs/cgroup", "mode": "rw"},
                     str(exposed): {"bind": str(Path(SERVICE_SOCKET).parent), "mode": "rw"}},
            tmpfs={"/judge": "size=1g,mode=0700", "/tmp": "size=64m,mode=1777"},
            environment={"TMPDIR": "/judge", "HOME": "/judge", "OMP_NUM_THREADS": "1"},
            auto_remove=True)
        try:
            try:
                self.container.start()
            except docker.errors.DockerException as exc:
                raise ContainerError(
                    f"the engine refused the judge container (docker-fork needs "
                    f"{', '.join(SERVICE_CAPABILITIES[:3])}, the host's pid namespace and "
                    f"its cgroup tree): {exc}") from exc
            end = time.monotonic() + self.START_TIMEOUT
            while not self.path.exists():
                self.container.reload()
                if self.container.status not in ("created", "running"):
                    raise ContainerError(f"the judge container stopped: {self._logs()}")
                if time.monotonic() > end:
                    raise ContainerError(f"the judge container did not start within "
                                         f"{self.START_TIMEOUT:g} s: {self._logs()}")
                time.sleep(0.05)
            self.lifeline = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.lifeline.connect(str(self.path))
        except BaseException:
            self.close()
            raise

    def _logs(self) -> str:
        try:
            text = self.container.logs().decode("utf-8", "replace").strip()
        except Exception:  # noqa: BLE001 - removed already (auto_remove)
            return "no output"
        return (text.splitlines() or ["no output"])[-1][:500]

    def grade(self, job: bytes, timeout: float) -> tuple[dict, socket.socket]:
        """Send one job; return its result document, and the job's connection, which the
        judge closes once it has closed the job's worker (``finished``)."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(timeout)
        try:
            conn.connect(str(self.path))
            conn.sendall(job)
            conn.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            # the answer is one line (JSON holds no raw newline): the judge sends nothing
            # after it, and closes the connection only once the worker is closed
            while (chunk := conn.recv(1 << 20)) and size <= MAX_ANSWER_BYTES:
                chunks.append(chunk)
                size += len(chunk)
                if chunk.endswith(b"\n"):
                    break
            answer = parse_answer(b"".join(chunks).decode("utf-8", "replace"),
                                  "the judge closed the job")
        except socket.timeout as exc:
            conn.close()
            raise ContainerError(f"the judge gave no result within {timeout:g} s") from exc
        except OSError as exc:
            conn.close()
            raise ContainerError(f"the judge container is gone: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return answer, conn

    def close(self) -> None:
        import shutil

        lifeline = getattr(self, "lifeline", None)
        if lifeline is not None:
            lifeline.close()
        try:
            self.container.remove(force=True)
        except Exception:  # noqa: BLE001 - gone already (auto_remove)
            pass
        shutil.rmtree(self.folder, ignore_errors=True)

    _shared: dict = {}
    _lock = threading.Lock()

    @classmethod
    def shared(cls, client, image: str, jobs: int = 1) -> "JudgeContainer":
        """This process's judge container for ``image`` (started on first use, and again if
        it stopped), its memory sized for ``jobs`` at once (on first use)."""
        key = (client.api.base_url, client.images.get(image).id)
        with cls._lock:
            service = cls._shared.get(key)
            if service is not None and not service.alive():
                service.close()
                service = None
            if service is None:
                service = cls._shared[key] = cls(client, image, jobs)
            elif jobs > service.jobs:  # started by registry.resolve's probe, or a smaller run
                service.container.update(mem_limit=judge_memory(jobs),
                                         memswap_limit=judge_memory(jobs))
                service.jobs = jobs
            return service

    def alive(self) -> bool:
        try:
            self.container.reload()
            return self.container.status == "running"
        except Exception:  # noqa: BLE001 - removed
            return False

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            services, cls._shared = list(cls._shared.values()), {}
        for service in services:
            service.close()


atexit.register(JudgeContainer.close_all)

