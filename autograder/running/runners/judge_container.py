"""The ``docker-fork`` judge container (``JudgeContainer``, which runs
``entry.judge_service``) and the host's way to it: one per engine and image in a process,
shared by every assignment of a run. A job's connection is opened, and its container named,
ahead of the job (``place``), so that its first worker is forked and confined there before
the submission comes (``grade``)."""

from __future__ import annotations

import atexit
import json
import socket
import threading
from pathlib import Path

from ..container_protocol import MAX_ANSWER_BYTES, ContainerError, parse_answer
from .docker_engine import CAPABILITIES, owner_label

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

    def place(self, placement: dict) -> socket.socket:
        """Open a job's connection and name its container (``placement``: ``join_pid``,
        ``join_container``, ``uid``, ``limits``) on its first line: the judge forks the
        job's first worker into that container at once, and it waits there, reading nothing,
        until the job comes on the same connection (``grade``)."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(str(self.path))
            conn.sendall(json.dumps(placement).encode() + b"\n")
        except OSError as exc:
            conn.close()
            raise ContainerError(f"the judge container is gone: {exc}") from exc
        return conn

    @staticmethod
    def grade(conn: socket.socket, job: bytes, timeout: float) -> dict:
        """Send one job on its placed connection (``place``); return its result document.
        The judge closes ``conn`` once it has closed the job's worker (``finished``); on an
        error it is closed here."""
        conn.settimeout(timeout)
        try:
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
            return parse_answer(b"".join(chunks).decode("utf-8", "replace"),
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
