"""The judge's handle on one confined worker: requests with deadlines, capped output, kill.

Everything read back is untrusted: replies are size-capped JSON decoded by ``wire.decode``
only, never unpickled or evaluated.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from typing import Any, Callable, Iterator

from ...checks.calling import WorkerLost
from ..limits import Limits, memory_cap
from . import cgroups, sandbox, zygote, zygotes
from .cuda_report import cuda_mismatch
from .disk_budget import POLL, DiskBudget
from .reply_budget import (
    MAX_REPLY_BYTES,
    MAX_REPLY_CONTAINERS,
    MAX_REPLY_MEMORY,
    MAX_REPLY_VALUES,
    parse_cost,
)
from .student_output import StudentOutput
from .uids import kill_uid

# What one read of the reply pipe asks for: a pipe holds 64 KiB, so a read never returns more.
# Asking for 1 MiB made every read allocate, and free, a 1 MiB buffer (an mmap and a munmap:
# ~20 us a read, and a TLB shootdown across the judge's threads), about 120 times a submission.
READ_CHUNK = 1 << 16
# Questions one call may put to the judge (the stand-in op's backward: gradcheck asks a few)
MAX_ASKS = 1000
#: What a time limit limits, in the words a stopped worker is told: two limits of different
#: lengths (``Limits.cell_timeout``, ``call_timeout``) must not read as one.
CELL, CALL, LOOKUP = "one cell", "one call of a function", "reading one of the notebook's names"


def submission_cut(limits: Limits) -> str:
    """Why a worker stopped when the whole submission's time ran out (not one step's)."""
    return (f"the submission used up its time limit ({limits.submission_timeout:g} s for all "
            "its cells and tests together)")


class WorkerClient:
    """Starts a worker (forked by the zygote, confined before it reads a request) and talks
    to it.

    Args:
        uid: the unprivileged uid for this worker.
        limits: resource limits and timeouts.
        deadline: ``time.monotonic()`` past which no request may run (the submission's).
    """

    def __init__(self, uid: int, limits: Limits, deadline: float | None = None):
        self.limits, self.uid = limits, uid
        self.deadline = deadline if deadline is not None else float("inf")
        self.proc = zygotes.shared(limits.confinement).spawn(uid, limits)
        self.groups: list = []  # its CPU and memory cgroups (``cgroups.place``)
        self.requests = os.fdopen(self.proc.requests, "wb", buffering=0)
        # written with the request's deadline (``_send``): a worker that stops reading (its
        # questions answered while it asks more) cannot block the judge
        os.set_blocking(self.proc.requests, False)
        self.replies = self.proc.replies
        self.output = StudentOutput(self.proc.stdout, limits.output_bytes)
        self.lost: str | None = None
        self.cuda: dict | None = None  # the worker's CUDA report, when the judge asked
        self.cut = False  # lost to the whole submission's time limit
        self.closed = False
        self._buffer = bytearray()
        # the container's disk is the host's: the judge keeps the worker's files to a budget
        # (the other confinements give it tmpfs of a fixed size)
        self.disk = (DiskBudget(uid, limits) if limits.confinement == "container"
                     and (limits.disk_bytes > 0 or limits.disk_files > 0) else None)
        if limits.confinement == "namespaces":  # the containers of the others have their own
            try:
                self.groups = cgroups.place(self.proc.pid, memory_cap(limits))
            except OSError as exc:
                self._confined()  # a worker that refused and exited already: its reason
                self.close()
                raise sandbox.SandboxError(f"could not give the worker its CPU share and "
                                           f"memory cap: {exc}") from exc
        self._confined()

    def _confined(self) -> None:
        """The worker's first line says whether it could confine itself (the grader's
        problem if not, never the student's)."""
        try:
            line = self._read_line(time.monotonic() + zygote.SPAWN_TIMEOUT, zygote.SPAWN_TIMEOUT,
                                   step="the worker's start")
            hello = json.loads(line)
        except (WorkerLost, ValueError) as exc:
            self.close()
            raise sandbox.SandboxError(f"the worker did not start: {exc}") from exc
        if not isinstance(hello, dict) or hello.get("confined") is not True:
            self.close()
            error = hello.get("error") if isinstance(hello, dict) else hello
            raise sandbox.SandboxError(f"could not confine the worker: {error}")
        self.cuda = hello.get("cuda")
        why = cuda_mismatch(self.cuda) if self.limits.cuda else None
        if why:  # the grader's problem: the student's code never ran
            self.close()
            raise sandbox.SandboxError(f"the judge grades with CUDA but the confined worker "
                                       f"cannot use it: {why}")

    def request(self, message: dict, timeout: float,
                answer: Callable[[Any], dict] | None = None, step: str = CALL) -> dict:
        """Send one request; return the reply, or raise ``WorkerLost`` (and kill the worker).
        No request outlives the submission's own deadline. With ``answer``, the worker may ask
        questions during the request (``{"ask": ...}`` lines, at most ``MAX_ASKS``): each is
        answered with ``answer(question)`` on the request pipe, within the same time limit.
        ``step``: what ``timeout`` limits, as a worker stopped by it is told (``CALL``)."""
        deadline, timeout, whole = self._limit(timeout)
        self._send(message, deadline, timeout, whole, step)
        return self._answer(deadline, timeout, whole, answer, step)

    def stream(self, message: dict, count: int, timeout: float, step: str = CELL
               ) -> Iterator[dict]:
        """Send one request answered by ``count`` lines (``run_cells``: one per cell); yield
        each, read as ``request`` reads its reply, within ``timeout`` of the one before it
        (``step``: what that limits, ``CELL``). A caller that stops early (its submission's
        time up) closes it: the worker, out of step now, is killed as cut."""
        deadline, limit, whole = self._limit(timeout)
        self._send(message, deadline, limit, whole, step)
        read = 0
        try:
            for read in range(1, count + 1):
                if read > 1:
                    deadline, limit, whole = self._limit(timeout)
                yield self._answer(deadline, limit, whole, None, step)
        finally:
            if read < count and not self.lost:  # lines still to come: out of step, killed
                self._cut()

    def _limit(self, timeout: float) -> tuple[float, float, bool]:
        """One step's deadline, time limit, and whether the submission's deadline is it."""
        if self.lost:
            raise WorkerLost(self.lost)
        whole = self.deadline - time.monotonic() < timeout  # the submission's limit comes first
        if whole:
            timeout = max(self.deadline - time.monotonic(), 0.0)
            if timeout <= 0:
                raise self._cut()
        return time.monotonic() + timeout, timeout, whole

    def _answer(self, deadline: float, timeout: float, whole: bool,
                answer: Callable[[Any], dict] | None, step: str) -> dict:
        """The reply to the request just sent, the worker's questions answered on the way."""
        for _ in range(MAX_ASKS + 1):
            reply = self._reply(self._read_line(deadline, timeout, whole, step))
            if "ask" not in reply:
                return reply
            if answer is None:
                raise self._lose("its process asked the grader a question where it may ask none")
            self._send(answer(reply["ask"]), deadline, timeout, whole, step)
        raise self._lose(f"its process asked the grader more than {MAX_ASKS} questions in one "
                         "call")

    def _send(self, message: dict, deadline: float, timeout: float, whole: bool = False,
              step: str = CALL) -> None:
        """Write one line to the worker by ``deadline`` (the pipe is non-blocking); ``whole``:
        that deadline is the submission's own; ``step``: what ``timeout`` limits."""
        data = memoryview(json.dumps(message, allow_nan=False).encode() + b"\n")
        fd = self.requests.fileno()
        if self.disk is not None:  # measured from its first request (a spare waits idle)
            if not self.disk.started:
                self.disk.start()
            self._watch_disk(force=True)  # what it wrote between requests (a thread of its)
        while data:  # written at once while the pipe has room: the wait only when it is full
            try:
                data = data[os.write(fd, data):]
                continue
            except BlockingIOError:
                pass
            except OSError:  # BrokenPipeError: the worker is gone
                raise self._lose(self._exit_reason())
            left = deadline - time.monotonic()
            if left <= 0 and whole:
                raise self._cut()
            if left <= 0:
                raise self._lose(f"it was stopped after {timeout:g} s (the time limit for "
                                 f"{step}): it stopped reading what the grader sent")
            select.select([], [fd], [], left if self.disk is None else min(left, POLL))
            self._watch_disk()

    def _reply(self, line: bytes) -> dict:
        """One line of the worker's, parsed within the reply caps."""
        if not line.isascii():  # the worker writes ``json.dumps``' ASCII; a wide character
            # sent raw would make the whole text 4 bytes a character before parsing begins
            raise self._lose("its process sent something that is not a reply (bytes that are "
                             "not ASCII)")
        values, containers = line.count(b","), line.count(b"[") + line.count(b"{")
        if values > MAX_REPLY_VALUES or containers > MAX_REPLY_CONTAINERS:
            raise self._lose(f"its reply held more values than the grader accepts (at most "
                             f"{MAX_REPLY_VALUES:,} values and {MAX_REPLY_CONTAINERS:,} lists "
                             "or objects)")
        cost = parse_cost(line, values, containers)
        if cost > MAX_REPLY_MEMORY:
            raise self._lose(f"its reply would take the grader about {cost / 2**20:,.0f} MiB of "
                             f"memory to read; it accepts at most {MAX_REPLY_MEMORY // 2**20} MiB "
                             "for one reply (what a function returns or a name holds should be "
                             "far smaller)")
        try:
            reply = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested deep
            raise self._lose("its process sent something that is not a reply")
        except MemoryError:
            raise self._lose("the grader ran out of memory reading its reply")
        if not isinstance(reply, dict):
            raise self._lose("its process sent something that is not a reply")
        return reply

    def _read_line(self, deadline: float, timeout: float, whole: bool = False,
                   step: str = CALL) -> bytes:
        scanned = 0
        while self._buffer.find(b"\n", scanned) < 0:
            scanned = len(self._buffer)  # look only at new bytes next time
            left = deadline - time.monotonic()
            if left <= 0 and whole:
                raise self._cut()
            if left <= 0:
                raise self._lose(f"it was stopped after {timeout:g} s (the time limit for "
                                 f"{step}): look for an endless loop or a very long "
                                 "computation")
            ready, _, _ = select.select([self.replies], [], [],
                                        left if self.disk is None else min(left, POLL))
            self._watch_disk()
            if not ready:
                continue
            chunk = os.read(self.replies, READ_CHUNK)
            if not chunk:
                raise self._lose(self._exit_reason())
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise self._lose(f"its reply was larger than the grader accepts (at most "
                                 f"{MAX_REPLY_BYTES // 2**20} MiB for one reply)")
        self._watch_disk(force=True)  # a reply, or the files it wrote before: the last counts
        end = self._buffer.find(b"\n")
        with memoryview(self._buffer) as view:  # one copy of the line, not two
            line = bytes(view[:end])
        del self._buffer[:end + 1]
        return line

    def _exit_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except Exception:  # noqa: BLE001 - still running: it closed the pipe itself
            return "its process closed the connection to the grader"
        if code == -signal.SIGKILL and cgroups.out_of_memory(self.groups):
            return (f"its processes used more than the memory limit "
                    f"({self.limits.memory_bytes / 2**30:g} GiB for the notebook's processes "
                    "together, shared memory included) and were killed")
        if code == -signal.SIGKILL:
            return "its process was killed (memory or process limit, or killed from inside)"
        if code == -signal.SIGXCPU:
            return f"its process used more than {self.limits.cpu_seconds} s of CPU time"
        if code < 0:
            return f"its process died from signal {signal.Signals(-code).name}"
        return (f"its process exited with status {code} (sys.exit, os._exit, a KeyboardInterrupt "
                "it raised, or a crash) "
                "before the grader finished")

    def _watch_disk(self, force: bool = False) -> None:
        """Lose the worker, and delete its files at once, when they are over the disk
        budget (``disk_budget``: a ``statvfs`` a filesystem, at most every ``POLL`` s)."""
        why = self.disk.check(force) if self.disk is not None else None
        if why:
            error = self._lose(why)
            self.disk.clean()
            raise error

    def _cut(self) -> WorkerLost:
        """Lost to the submission's own time limit (not one step's): ``cut`` says so."""
        self.cut = True
        return self._lose(submission_cut(self.limits))

    def _lose(self, reason: str) -> WorkerLost:
        self.lost = reason
        self.kill()
        return WorkerLost(reason)

    def _signal_group(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Kill the worker and every process left running under its uid (one uid per slot,
        so a child that escaped the process group by ``setsid`` dies too)."""
        self._signal_group()
        try:  # reaped first, so kill_uid usually finds nothing (no fork of this big process)
            self.proc.wait(timeout=2)
        except TimeoutError:
            pass
        kill_uid(self.uid)
        try:
            self.proc.wait(timeout=10)
        except TimeoutError:
            pass

    def stop(self) -> None:
        """Kill the worker's process group now and keep what it printed (``StudentOutput``):
        its output is final. ``close`` (later, or at once) reaps it and frees the rest."""
        self._signal_group()
        self.output.take()

    def close(self) -> None:
        """Stop the worker and release everything it held (once; later calls do nothing).
        No graceful exit: everything the judge needs came with the replies (the worker flushes
        the student's output before each), and a torch process takes ~0.5 s to shut down."""
        if self.closed:
            return
        self.closed = True
        self.stop()
        try:
            self.requests.close()
        except OSError:
            pass
        self.kill()
        if self.disk is not None:  # what it left on the container's disk (its uid's)
            self.disk.clean()
        cgroups.release(self.groups)
        os.close(self.replies)
        self.output.close()
        self.proc.zygote.forget(self.proc.pid)

    def student_output(self) -> str:
        return self.output.text()
