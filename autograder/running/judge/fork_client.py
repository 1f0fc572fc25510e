"""The judge's side of the zygote (``autograder.worker.fork_server``): start it, ask it for
workers, learn how they ended (through its control socket, ``fork_channel.ZygoteChannel``).

One zygote serves every worker of a grading process (threads share it; requests are
serialised). ``shared(confinement)`` starts it on first use and again if it died. Two ways to
start one:

- ``Zygote.start``: a new Python process. For ``"namespaces"`` confinement it is built into
  the jail first (own mount, network, IPC and UTS namespaces, the minimal read-only root of
  ``sandbox.build_jail``), and stays root there only to set up each worker.
- ``Zygote.fork_here`` (the grading container's entry point): this process imports torch,
  forks the zygote, and only then reads the grading job, so the container pays for one
  ``import torch``, not two.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

from . import sandbox
from .fork_channel import ZygoteChannel
from ..limits import Limits
from .sandbox import SandboxError

SPAWN_TIMEOUT = 30.0


class Worker:
    """One forked worker as the judge sees it: its pid, the judge's ends of its pipes, and
    its exit status once the zygote reports it."""

    def __init__(self, zygote: "Zygote", pid: int, requests: int, replies: int, output: int):
        self.zygote, self.pid = zygote, pid
        self.requests, self.replies = requests, replies
        self.stdout = os.fdopen(output, "rb", buffering=0)

    def poll(self) -> int | None:
        """The exit status once the zygote has reported it, else None."""
        return self.zygote.exit_code(self.pid)

    def wait(self, timeout: float | None = None) -> int:
        """The exit status (``-signal`` when killed); ``TimeoutError`` if still running."""
        return self.zygote.wait_exit(self.pid, timeout)


class Zygote(ZygoteChannel):
    """A running zygote: started (``start``, ``fork_here``) and asked for workers (``spawn``);
    its control messages, the workers' exit statuses and ``close`` are ``ZygoteChannel``'s."""

    # -- starting -------------------------------------------------------------------------
    @classmethod
    def start(cls, confinement: str) -> "Zygote":
        if confinement not in ("namespaces", "container", "join"):
            raise SandboxError(f"unknown confinement mode {confinement!r}")
        if os.geteuid() != 0:
            raise SandboxError("the sealed judge's local mode needs root (namespaces and an "
                               "unprivileged uid for student code); run it as root or in Docker")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = Path(tempfile.mkdtemp(prefix="autograder-jail-"))
        worker_dir = sandbox.CONTAINER_WORKER_DIR
        if confinement != "namespaces" and not os.path.isdir(f"{worker_dir}/autograder/worker"):
            # not in the grading image (e.g. the GPU check on a bare machine): a copy of the
            # worker's code, readable by the student uid; nothing else of the package
            os.chmod(root, 0o755)
            sandbox.install_worker(root)
            worker_dir = str(root)
        err_r, err_w = os.pipe()

        def confine() -> None:
            try:
                if confinement == "namespaces":
                    sandbox.build_jail(str(root))
            except BaseException as exc:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode()[:2000])
                raise

        try:
            process = subprocess.Popen(
                sandbox.zygote_command(theirs.fileno(), confinement, worker_dir),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                env=sandbox.WORKER_ENV, cwd="/", preexec_fn=confine,
                pass_fds=(theirs.fileno(),), start_new_session=True)
        except subprocess.SubprocessError as exc:
            os.close(err_w)
            with os.fdopen(err_r, "rb") as f:
                reason = f.read().decode(errors="replace") or str(exc)
            ours.close()
            shutil.rmtree(root, ignore_errors=True)
            raise SandboxError(f"could not confine the worker zygote: {reason}") from exc
        finally:
            theirs.close()
        os.close(err_w)
        os.close(err_r)
        return cls(confinement, ours, process.pid, process, root)

    @classmethod
    def fork_here(cls, confinement: str = "container", optimizers: bool = False) -> "Zygote":
        """Fork the zygote from this process (which must hold no secret yet and run no
        thread); stdin and stdout are closed in it, stderr kept for its errors. Torch's
        optimizer machinery (0.7 s) only with ``optimizers``: with one notebook per process
        (the grading container), only a worker that builds an optimizer pays for it; a zygote
        that serves a whole run (the judge service) pays once."""
        from ...worker.fork_server import serve_zygote, warm_up

        warm_up(optimizers=optimizers)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the zygote; covered by the Docker tests
            status = 0
            try:
                ours.close()
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                # the workers' environment, not the judge's (its TMPDIR is root-only)
                os.environ.clear()
                os.environ.update(sandbox.WORKER_ENV)
                tempfile.tempdir = None  # cached from the judge's TMPDIR by torch's import
                os.chdir("/")
                serve_zygote(theirs.detach(), confinement, warm=False)
            except BaseException:  # noqa: BLE001
                status = 1
            finally:
                os._exit(status)
        theirs.close()
        zygote = cls(confinement, ours, pid)
        _SHARED[confinement] = zygote
        return zygote

    # -- spawning -------------------------------------------------------------------------
    def spawn(self, uid: int, limits: Limits) -> Worker:
        """Fork a worker for ``uid``; it confines itself before it reads a request."""
        fields = {k: v for k, v in dataclasses.asdict(limits).items()
                  if k not in ("confinement", "join_pidfd")}
        held = []  # "join": the container, by the pidfd the judge holds for the whole job
        if self.confinement == "join":
            if limits.join_pidfd < 0:
                raise SandboxError("no handle on the submission's container (join_pidfd)")
            held = [limits.join_pidfd]
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            with self.lock:
                if not self.alive:
                    raise SandboxError("the worker zygote exited")
                try:
                    socket.send_fds(self.sock, [json.dumps({"uid": uid, "limits": fields})
                                                .encode()], [req_r, rep_w, out_w, *held])
                except OSError as exc:
                    raise SandboxError(f"the worker zygote is gone: {exc}") from exc
                try:
                    reply = self.replies.get(timeout=SPAWN_TIMEOUT)
                except queue.Empty:
                    raise SandboxError("the worker zygote did not answer") from None
            if "spawned" not in reply:
                raise SandboxError(f"could not start a worker: {reply.get('error')}")
        except BaseException:
            for fd in (req_w, rep_r, out_r):
                os.close(fd)
            raise
        finally:  # the worker's ends: the zygote has its own copies now
            for fd in (req_r, rep_w, out_w):
                os.close(fd)
        return Worker(self, int(reply["spawned"]), req_w, rep_r, out_r)




_SHARED: dict[str, Zygote] = {}
_SHARED_LOCK = threading.Lock()


def shared(confinement: str) -> Zygote:
    """This process's zygote for ``confinement``, started (again) when needed."""
    with _SHARED_LOCK:
        zygote = _SHARED.get(confinement)
        if zygote is None or not zygote.alive:
            if zygote is not None:
                zygote.close()
            zygote = _SHARED[confinement] = Zygote.start(confinement)
        return zygote


@atexit.register
def _close_all() -> None:
    for zygote in list(_SHARED.values()):
        zygote.close()
    _SHARED.clear()


