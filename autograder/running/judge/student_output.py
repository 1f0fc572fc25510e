"""What the student's code printed in one worker: read from the worker's output pipe by a
thread of the judge, the first ``limit`` bytes kept, the rest counted.

``take`` ends it at once, without waiting for the worker to die: everything the worker
printed before its last reply is in the pipe by then (it flushes its output before each
reply), so a final read of what the pipe holds keeps all of it, and the judge need not wait
for a killed process to release its memory before the submission's result is written.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import threading
import time
from typing import BinaryIO

#: Seconds the reader waits after each chunk once the kept output is full: 64 KiB each time,
#: at most about 6 MB a second (an honest notebook's extra prints still flow at that rate)
PAST_THE_CAP_PAUSE = 0.01


class StudentOutput:
    """The capped output of one worker (``stream``: its stdout/stderr pipe)."""

    def __init__(self, stream: BinaryIO, limit: int):
        self.stream, self.limit = stream, limit
        self.kept = bytearray()
        self.dropped = 0
        self.taken = False
        self._lock = threading.Lock()
        self._fd = stream.fileno()
        os.set_blocking(self._fd, False)
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                select.select([self._fd], [], [])
            except (OSError, ValueError):  # closed
                return
            with self._lock:
                if self.taken or self._read() == 0:
                    return
                past_the_cap = self.dropped > 0
            if past_the_cap:
                # what comes now is only counted: read it slowly, so that a notebook that
                # floods its output waits on a full pipe instead of the judge's thread, which
                # no worker's CPU cap holds, reading for it (red team rt-s5: 62 % of a core)
                time.sleep(PAST_THE_CAP_PAUSE)

    def _read(self, size: int = 65536) -> int | None:
        """One chunk (at most ``size`` bytes) of what the pipe holds, kept or counted: its
        size, 0 at EOF, None when the pipe is empty for now. Called with the lock held."""
        try:
            chunk = os.read(self._fd, size)
        except BlockingIOError:
            return None
        except OSError:
            return 0
        room = max(self.limit - len(self.kept), 0)
        self.kept += chunk[:room]
        self.dropped += max(len(chunk) - room, 0)
        return len(chunk)

    def take(self) -> None:
        """Read what the pipe holds now, and no more, and stop (the worker was killed: a
        process of its uid that escaped the kill may write on until it is reaped)."""
        with self._lock:
            if self.taken:
                return
            left = struct.unpack("i", fcntl.ioctl(self._fd, termios.FIONREAD, b"\0" * 4))[0]
            while left > 0 and (got := self._read(min(left, 65536))):
                left -= got
            self.taken = True

    def close(self) -> None:
        """After the worker and everything under its uid are gone (the pipe's writers):
        the reading thread has ended, the pipe is closed."""
        self.take()
        self._thread.join(timeout=2)
        if not self._thread.is_alive():
            self.stream.close()

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} more bytes of output were dropped]"
        return text
