"""The control socket of a running zygote (``autograder.worker.fork_server``), on the judge's
side: the handshake that says it started, the thread that reads its messages (the replies to
spawn requests, the exit statuses of its workers), waiting for a worker's end, and stopping
the zygote. Starting one and asking it for workers are ``fork_client.Zygote``'s, which builds
on ``ZygoteChannel``.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from .sandbox import SandboxError

START_TIMEOUT = 180.0  # a cold import of torch on a loaded machine, with margin


class ZygoteChannel:
    """A running zygote's control socket and the thread that reads its messages."""

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
        if process is not None and process.stderr is not None:
            threading.Thread(target=self._keep_errors, args=(process.stderr,),
                             daemon=True).start()
        ready = self._receive(START_TIMEOUT)
        if not isinstance(ready, dict) or "ready" not in ready:
            self.close()
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
