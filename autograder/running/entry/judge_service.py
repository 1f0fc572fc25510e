"""The judge container of the ``docker-fork`` runner: one trusted judge for a whole run, whose
students' workers each run inside a fresh container of their own.

The host (``runners.docker_fork.ForkRunner``) starts this once per run, with the capabilities it
needs to move a process into another container (``SYS_ADMIN``, ``SYS_PTRACE``,
``SYS_CHROOT``), the host's pid namespace and the cgroup tree, but no network. It imports
torch once and forks the worker zygote before it listens (so the zygote holds no secret),
then serves jobs on a Unix socket in a folder only the host can reach: one connection a job,
the same JSON job as ``entry.container``, after a first line that names the job's container:
``join_pid``, the host pid of the ``sleep`` in the container the host made for that submission,
``join_container``, that container's id (the judge holds that process by a pidfd for the
whole job: ``check_target``), and the job's ``uid`` and ``limits``. The host sends that line
when it starts the container, ahead of the submission (a spare), and the job's first worker
is forked into the container then, so the submission does not wait for it. Every worker of
the job is forked from the zygote, joins that container's cgroups and namespaces through
the pidfd and drops to the job's unprivileged uid before it reads a request
(``autograder.worker.confine.join_container``). The result
goes back on the same connection as one line after ``RESULT_MARKER``
(``container_protocol``).

The first connection is the host's lifeline: when it closes (the host finished, or died),
this process exits, and the engine removes its container.

    python -m autograder.running.entry.judge_service /run/autograder-judge/judge.sock
"""

from __future__ import annotations

import binascii
import json
import os
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path

from ..container_protocol import MAX_JOB_BYTES, answer_line, job_error
from .container import grade_job, job_limits, job_uid
from .startup import skip_inits


def check_target(pid: int, container: str = "") -> int:
    """Refuse a ``join_pid`` that is not another container's process: never this judge's own
    mount namespace (where the hidden tests are), nor the host's pid namespace (which this
    judge shares: a process there is no container's), nor a process outside the cgroups of
    ``container`` (the id the host says it made for the job: a pid the host read before that
    container stopped may name another process since). Returns a pidfd on it, which the
    workers of the job join through (``confine.join_container``): checked once here, it
    names that process or none for the whole job, whatever the number comes to mean."""
    if pid <= 1 or not os.path.isdir(f"/proc/{pid}"):
        raise ValueError(f"join_pid {pid} is not a running process")
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        raise ValueError(f"join_pid {pid} is not a running process") from None
    try:
        for ns in ("mnt", "pid"):
            if os.readlink(f"/proc/{pid}/ns/{ns}") == os.readlink(f"/proc/self/ns/{ns}"):
                raise ValueError(f"join_pid {pid} is in the judge's own {ns} namespace")
        with open(f"/proc/{pid}/cgroup") as f:
            paths = [line.rstrip("\n").split(":", 2)[-1] for line in f if line.strip()]
        if len(container) < 12 or not all(container in path for path in paths):
            raise ValueError(f"join_pid {pid} is not in the cgroups of container "
                             f"{container[:12] or '(none named)'}")
        signal.pidfd_send_signal(pidfd, 0)  # what was read above was that process's
    except BaseException:
        os.close(pidfd)
        raise
    return pidfd


def handle(conn: socket.socket) -> None:
    """One job's connection. Its first line names the job's container (``join_pid``,
    ``join_container``, ``uid``, ``limits``): the job's first worker is forked into it at once
    (``placed_worker``), ahead of the job. Then the job itself, read to EOF: grade it, answer
    with the result line; then close the job's workers (waiting for a killed torch process to
    exit, killing its uid's leftovers) and end the connection, which tells the host that the
    uid is free again: the host has the answer before that and grades its next submission
    meanwhile. A connection that ends before its job (a spare the host discarded) is answered
    with a grader error nobody reads, and its worker closed the same way."""
    job: dict = {}
    later: list = []
    worker = None
    pidfd = -1
    with conn:
        try:
            head, rest = _read_line(conn)
            job = placement = _object(head)
            pid = int(placement["join_pid"])
            pidfd = check_target(pid, str(placement.get("join_container", "")))
            worker = placed_worker(placement, pid, pidfd)
            job = {**_object(rest + _read_all(conn, len(rest))), **placement}
            with tempfile.TemporaryDirectory(prefix="judge-") as work:
                doc = grade_job(job, Path(work), confinement="join", join_pid=pid,
                                join_pidfd=pidfd, later=later, worker=worker)
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            doc = job_error(job, f"unreadable grading job: {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - the host must always get a result line
            doc = job_error(job, f"{type(exc).__name__}: {exc}")
        try:
            conn.sendall(answer_line(doc).encode())
        except OSError:
            pass  # the host gave up on this job (its own timeout)
        finally:
            for each in (*later, worker):  # closing a worker twice is a no-op
                if each is not None:
                    each.close()
            if pidfd >= 0:
                os.close(pidfd)


def placed_worker(placement: dict, pid: int, pidfd: int):
    """The job's first worker (``WorkerClient``), forked into its container under the job's
    uid and limits before the job comes: it holds nothing of any submission and reads no
    request until the judge grades with it. ``None`` when it could not start: the judge then
    starts its own, and the document says why that failed."""
    from ..judge.core import grading_limits
    from ..judge.sandbox import SandboxError
    from ..judge.worker_client import WorkerClient

    limits = grading_limits(job_limits(placement, "join", pid, pidfd))
    try:
        return WorkerClient(job_uid(placement), limits)
    except SandboxError:
        return None


def _object(raw: bytes) -> dict:
    found = json.loads(raw)
    if not isinstance(found, dict):
        raise ValueError("a job is a JSON object")
    return found


def _read_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """The connection's first line (to EOF when it has no newline), and what came after it."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return data, b""
        data += chunk
        if len(data) > MAX_JOB_BYTES:
            raise ValueError("the job is larger than the grader accepts")
    head, _, rest = data.partition(b"\n")
    return head, rest


def _read_all(conn: socket.socket, size: int = 0) -> bytes:
    chunks = []
    while chunk := conn.recv(1 << 20):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_JOB_BYTES:
            raise ValueError("the job is larger than the grader accepts")
    return b"".join(chunks)


def _hold(conn: socket.socket) -> None:
    """The lifeline: block until the host closes it, then end the service (and its
    container, with every job still running)."""
    try:
        while conn.recv(4096):
            pass
    finally:
        os._exit(0)


def serve(path: str) -> None:
    from ..judge.zygotes import fork_here

    fork_here("join", rehearse=True)
    skip_inits()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + ".new")
    os.chmod(path + ".new", 0o666)  # the host may not be root; its folder keeps others out
    server.listen(64)
    os.rename(path + ".new", path)  # it appears only once it accepts
    lifeline, _ = server.accept()
    threading.Thread(target=_hold, args=(lifeline,), daemon=True).start()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m autograder.running.entry.judge_service SOCKET", file=sys.stderr)
        return 2
    serve(args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
