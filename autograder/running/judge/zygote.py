"""The judge's side of one zygote (``autograder.worker.zygote``): start it, ask it for
workers, learn how they ended (its control socket, read by a thread of its own), stop it.

``Zygote.start`` starts one as a new Python process. For ``"namespaces"`` confinement it is
built into the jail first (own mount, network, IPC and UTS namespaces, the minimal read-only
root of ``sandbox.build_jail``), and stays root there only to set up each worker. Which zygote
serves a process's workers, and the one forked from the process itself, is ``zygotes``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ..limits import Limits
from . import sandbox
from .sandbox import SandboxError

START_TIMEOUT = 180.0  # a cold import of torch on a loaded machine, with margin
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


class Zygote:
    """A running zygote: started (``start``, ``zygotes.fork_here``), asked for workers (``spawn``),
    told apart from its workers' exit statuses (read from its control socket by a thread of
    its own: ``exit_code``, ``wait_exit``) and stopped (``close``)."""

    def __init__(self, confinement: str, sock: socket.socket, pid: int,
                 process: subprocess.Popen | None = None, root: Path | None = None):
        self.confinement, self.sock, self.pid = confinement, sock, pid
        self.process, self.root = process, root
        self.lock = threading.Lock()  # one spawn request at a time
        self.changed = threading.Condition()
        self.exits: dict[int, int] = {}
        self.replies: queue.Queue = queue.Queue()
        self.alive = True
        self.errors = bytearray()
        self.reader: threading.Thread | None = None  # from the handshake on
        if process is not None and process.stderr is not None:
            threading.Thread(target=self._keep_errors, args=(process.stderr,),
                             daemon=True).start()

    def handshake(self) -> None:
        """Wait for the zygote's ``ready`` (once; its imports take seconds), then read its
        messages on a thread of its own. ``SandboxError`` if it did not start."""
        if self.reader is not None:
            return
        ready = self._receive(START_TIMEOUT)
        if not isinstance(ready, dict) or "ready" not in ready:
            self.close()
            self.alive = False
            time.sleep(0.1)  # let the error reader see the zygote's last words
            raise SandboxError("the worker zygote did not start"
                               + (f": {self.error_text()}" if self.error_text() else ""))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _keep_errors(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(4096), b""):
            self.errors = (self.errors + chunk)[-4000:]

    def error_text(self) -> str:
        lines = self.errors.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    # -- messages -------------------------------------------------------------------------
    def _receive(self, timeout: float | None = None) -> dict | None:
        """One control message, or None at EOF, on timeout or once the socket is closed."""
        try:
            if timeout is not None:
                self.sock.settimeout(timeout)
            data = self.sock.recv(1 << 16)
            if timeout is not None:
                self.sock.settimeout(None)
        except OSError:  # socket.timeout included
            return None
        if not data:
            return None
        try:
            message = json.loads(data)
        except ValueError:
            return None
        return message if isinstance(message, dict) else None

    def _read(self) -> None:
        while True:
            message = self._receive()
            if message is None:
                break
            if "exit" in message:
                with self.changed:
                    self.exits[int(message["exit"])] = int(message.get("code", -9))
                    self.changed.notify_all()
            else:
                if "spawned" in message:  # a reused pid: its old status is not this worker's
                    with self.changed:
                        self.exits.pop(int(message["spawned"]), None)
                self.replies.put(message)
        with self.changed:
            self.alive = False
            self.changed.notify_all()
        self.replies.put({"error": "the worker zygote exited"
                          + (f": {self.error_text()}" if self.error_text() else "")})

    def _code(self, pid: int) -> int | None:  # with ``self.changed`` held
        if pid in self.exits:
            return self.exits[pid]
        if not self.alive and not os.path.exists(f"/proc/{pid}"):
            return -9  # the zygote died and something else reaped the worker
        return None

    def exit_code(self, pid: int) -> int | None:
        with self.changed:
            return self._code(pid)

    def wait_exit(self, pid: int, timeout: float | None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        with self.changed:
            while (code := self._code(pid)) is None:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"worker {pid} is still running")
                self.changed.wait(left if self.alive else 0.05)
            return code

    def forget(self, pid: int) -> None:
        """Drop a finished worker's status (pids are reused)."""
        with self.changed:
            self.exits.pop(pid, None)

    def close(self) -> None:
        """Stop the zygote (EOF on its control socket; killed if it lingers). Workers it
        forked are their clients' to stop."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader thread; EOF for the zygote
        except OSError:
            pass
        self.sock.close()
        if self.process is not None and self.reader is None:
            self.process.kill()  # never used: still importing, nothing to finish
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        elif self.pid and self.pid != os.getpid():
            _reap_child(self.pid, 5.0)
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- starting -------------------------------------------------------------------------
    @classmethod
    def start(cls, confinement: str, rehearse: bool = True) -> "Zygote":
        """A new zygote process, confined as ``confinement`` says, not waited for yet
        (``handshake``); ``rehearse`` as ``worker.zygote.warm_up`` takes it."""
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
                sandbox.zygote_command(theirs.fileno(), confinement, worker_dir, rehearse),
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


def _reap_child(pid: int, timeout: float) -> None:
    end = time.monotonic() + timeout
    try:
        while os.waitpid(pid, os.WNOHANG)[0] == 0:
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.01)
    except ChildProcessError:
        pass
