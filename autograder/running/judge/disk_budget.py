"""A disk budget for one worker under the ``"container"`` confinement, kept by the judge.

There the platform starts the container (PrairieLearn, Gradescope, a pod), so no private tmpfs
can be mounted for a worker: its working folder (``/student``, or a scratch folder in ``/tmp``)
and ``/tmp``, ``/var/tmp`` are the container's overlay, i.e. the host's disk, which other
courses' graders share. ``RLIMIT_FSIZE`` caps one file only; a notebook writing many files
filled tens of GB in seconds. So while the judge waits on the worker it measures, in O(1),
how much the filesystems the worker can write have grown since the worker's first request
(``os.statvfs`` on each distinct one: bytes and inodes in use), and past the budget
(``Limits.disk_bytes``, ``Limits.disk_files``) the worker is lost with the reason.

``statvfs`` sees the whole filesystem, the writes of every other process on it included (on
an overlay, the host's disk: other containers, an image pulled). So crossing the budget only
triggers a count of what the worker's uid really holds there (``walk_owned``: its files and
folders, by ``lstat``, never following a link): the worker is stopped when its own files pass
the budget, when that count cannot be made (a folder of its that the judge cannot open, a tree
too large or too deep to count), or when the filesystems grew past ``hard_limit`` however it
came (files deleted while held open cannot be counted by their owner). Growth that is not its
own, once counted, raises the bar by as much for as long as the disk still holds it, and is
counted again once it has shrunk by more than an eighth of the budget (the room it frees is
not the worker's to fill); and where the disk falls below where it stood at the worker's
start by more than that (another process deleted what it held then), the baseline moves to
where the worker's own files, counted, leave it.

After a worker of this confinement is closed (killed or not), ``clean`` deletes what its uid
left in those folders: bounded (``MAX_ENTRIES`` entries, ``MAX_SECONDS``, ``MAX_DEPTH``
folders deep), saying on stderr when it stopped short; the next close of the same uid goes on.

Nothing of this in the ``namespaces`` and ``join`` confinements: their ``/tmp`` and
``/student`` are tmpfs of a fixed size.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import dataclass

from ..limits import Limits

#: Folders every uid can write in a grading container (``/var/lock`` is ``/run/lock``).
WATCHED = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/student")
#: How often the filesystems are measured while the judge waits on the worker (seconds).
POLL = 0.1
#: Bounds on one walk of the uid's files (a count, or a clean-up).
MAX_ENTRIES = 250_000
MAX_SECONDS = 5.0
MAX_DEPTH = 64
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def size_text(size: int) -> str:
    """``size`` bytes in words: ``1 GiB``, ``64 MiB``, ``1.5 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def over_bytes(limits: Limits) -> str:
    return (f"it wrote more than {size_text(limits.disk_bytes)} to disk (the limit for one "
            "submission's process: its files in /tmp, its working folder and the like); "
            "it was stopped and its files deleted")


def over_files(limits: Limits) -> str:
    return (f"it created more than {limits.disk_files:,} files and folders (the limit for one "
            "submission's process); it was stopped and its files deleted")


def hard_limit(budget: int, floor: int) -> int:
    """How far the filesystems may grow, whoever wrote, before the worker is stopped even
    when its own files are under ``budget``: 4 times it, and at least ``floor`` above it."""
    return max(4 * budget, budget + floor)


@dataclass
class Tally:
    """What one walk found and did: the uid's entries and their blocks, entries removed or
    left, folders of the uid's it could not open, and whether it stopped at a bound."""

    bytes: int = 0
    files: int = 0
    visited: int = 0
    removed: int = 0
    left: int = 0
    opaque: int = 0
    capped: str = ""


def _writable_by(st: os.stat_result, uid: int) -> bool:
    """Whether ``uid`` (no supplementary group; its gid is its uid) can make entries in the
    folder ``st``: its owner, its group, or everyone with write permission."""
    return (st.st_uid == uid or st.st_mode & 0o002 != 0
            or (st.st_gid == uid and st.st_mode & 0o020 != 0))


def walk_owned(uid: int, roots: list[str], remove: bool, max_entries: int = MAX_ENTRIES,
               seconds: float = MAX_SECONDS, max_depth: int = MAX_DEPTH) -> Tally:
    """Count (``remove``: delete, deepest first) every entry ``uid`` owns under ``roots``.

    Only folders ``uid`` could write in are entered, each opened relative to its parent with
    ``O_NOFOLLOW`` and listed by ``lstat``: a link is never followed, whoever swaps it in.
    Stops after ``max_entries`` entries, ``seconds`` or ``max_depth`` folders deep (``capped``
    says which)."""
    tally = Tally()
    end = time.monotonic() + seconds
    for root in roots:
        try:
            fd = os.open(root, _DIR_FLAGS)
        except OSError:
            continue
        try:
            _walk(fd, uid, remove, tally, 1, (max_entries, seconds, end, max_depth))
        finally:
            os.close(fd)
        if tally.capped:
            break
    return tally


def _walk(dir_fd: int, uid: int, remove: bool, tally: Tally, depth: int,
          bounds: tuple[int, float, float, int]) -> None:
    max_entries, seconds, end, max_depth = bounds
    try:
        entries = os.scandir(dir_fd)
    except OSError:
        tally.opaque += 1
        return
    with entries:
        for entry in entries:
            if tally.visited >= max_entries:
                tally.capped = f"after {max_entries:,} entries"
            elif tally.visited % 1024 == 0 and time.monotonic() > end:
                tally.capped = f"after {seconds:g} s"
            if tally.capped:
                return
            tally.visited += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mine, folder = st.st_uid == uid, stat.S_ISDIR(st.st_mode)
            if folder and _writable_by(st, uid):
                if depth >= max_depth:
                    tally.capped = f"at {max_depth} folders deep"
                    return
                try:
                    child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError:  # a 0700 folder of the uid's where root has no DAC_OVERRIDE
                    tally.opaque += mine
                else:
                    try:
                        _walk(child, uid, remove, tally, depth + 1, bounds)
                    finally:
                        os.close(child)
                    if tally.capped:
                        return
            if not mine:
                continue
            tally.files += 1
            tally.bytes += st.st_blocks * 512
            if remove:
                try:
                    if folder:
                        os.rmdir(entry.name, dir_fd=dir_fd)
                    else:
                        os.unlink(entry.name, dir_fd=dir_fd)
                    tally.removed += 1
                except OSError:
                    tally.left += 1


def _as_uid(uid: int, roots: list[str]) -> None:
    """``walk_owned(remove=True)`` as ``uid`` in a forked child, for a judge without
    CAP_DAC_OVERRIDE (a pod: it cannot enter a student's 0700 folder, the uid can). Its
    processes are all dead by now, so nothing of the uid's runs beside the child."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            tally = walk_owned(uid, roots, remove=True)
            code = 0 if not (tally.left or tally.opaque or tally.capped) else 1
        finally:
            os._exit(code)
    os.waitpid(pid, 0)


def _read_only(path: str) -> bool:
    """Whether ``path``'s filesystem is mounted read-only (the root of our own containers,
    where ``/var/tmp`` sits): no one writes it, and its ``statvfs`` would measure the host's
    disk, other containers' writes and all."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return True


class DiskBudget:
    """The disk budget of one worker (``uid``) under ``limits``: ``start`` at its first
    request, ``check`` while waiting on it (O(1) but when over), ``clean`` when it is gone."""

    def __init__(self, uid: int, limits: Limits, folders: tuple[str, ...] = WATCHED):
        self.uid, self.limits = uid, limits
        roots, devices = [], {}
        for folder in folders:
            path = os.path.realpath(folder)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and path not in roots:
                roots.append(path)
                if st.st_dev not in devices and not _read_only(path):
                    devices[st.st_dev] = path
        self.roots, self.paths = roots, list(devices.values())
        self.baseline: tuple[int, int] | None = None
        self.noise = (0, 0)  # growth the last count found not the uid's (bytes, files)
        self.next_poll = 0.0
        self.peak = (0, 0)  # the largest growth seen (for the log and the tests)

    @property
    def started(self) -> bool:
        return self.baseline is not None

    def usage(self) -> tuple[int, int]:
        """Bytes and inodes in use on the watched filesystems (a ``statvfs`` each)."""
        used = files = 0
        for path in self.paths:
            try:
                fs = os.statvfs(path)
            except OSError:
                continue
            used += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
            files += max(fs.f_files - fs.f_ffree, 0)  # 0 where it keeps no count (btrfs)
        return used, files

    def start(self) -> None:
        self.baseline = self.usage()
        self.next_poll = time.monotonic() + POLL

    def check(self, force: bool = False) -> str | None:
        """Why the worker must be stopped, or ``None``; measures at most every ``POLL``
        seconds (``force``: now)."""
        now = time.monotonic()
        if self.baseline is None or (now < self.next_poll and not force):
            return None
        self.next_poll = now + POLL
        used, files = self.usage()
        grown = (used - self.baseline[0], files - self.baseline[1])
        limits = self.limits
        on = (limits.disk_bytes > 0, limits.disk_files > 0)
        # an eighth of the budget: how far the others' share, or the disk below its start,
        # may fall before what is the worker's is counted again
        slack = (limits.disk_bytes // 8, limits.disk_files // 8)
        if on[0] and grown[0] < -slack[0] or on[1] and grown[1] < -slack[1]:
            # the disk holds less than when the worker started: another process deleted what
            # it held then (a file half written when the baseline was taken), and that room is
            # not the worker's to fill. The baseline moves to where the worker's own files,
            # counted, leave it (test_disk_budget: a 48 MiB file passed a 32 MiB budget).
            own = walk_owned(self.uid, self.roots, remove=False)
            if own.opaque or own.capped:
                return over_bytes(limits) if on[0] else over_files(limits)
            self.baseline = (used - own.bytes, files - own.files)
            self.noise = (0, 0)
            grown = (own.bytes, own.files)
        self.peak = (max(self.peak[0], grown[0]), max(self.peak[1], grown[1]))
        # the others' share can only have shrunk to what the disk still holds of the growth;
        # where it shrank by more than an eighth of the budget, what remains is anyone's
        # until counted again: the worker's own writes may fill the room the others freed
        # (ext4 frees a deleted file's blocks when its journal commits, seconds later, so the
        # others' share can fall while the worker writes: a 48 MiB file passed a 32 MiB
        # budget under load, test_disk_budget)
        shrunk = (min(self.noise[0], max(grown[0], 0)), min(self.noise[1], max(grown[1], 0)))
        if self.noise[0] - shrunk[0] > slack[0] or self.noise[1] - shrunk[1] > slack[1]:
            shrunk = (0, 0)
        self.noise = shrunk
        if not (on[0] and grown[0] >= limits.disk_bytes + self.noise[0]
                or on[1] and grown[1] >= limits.disk_files + self.noise[1]):
            return None
        if on[0] and grown[0] >= hard_limit(limits.disk_bytes, 2**30):
            return over_bytes(limits)
        if on[1] and grown[1] >= hard_limit(limits.disk_files, 100_000):
            return over_files(limits)
        own = walk_owned(self.uid, self.roots, remove=False)
        if own.opaque or own.capped:  # not countable: stopped, as the budget is its own
            return over_bytes(limits) if on[0] else over_files(limits)
        if on[0] and own.bytes >= limits.disk_bytes:
            return over_bytes(limits)
        if on[1] and own.files >= limits.disk_files:
            return over_files(limits)
        # growth from elsewhere on the filesystem: the bar rises by it while the disk holds
        # it; what is the uid's still counts against the budget
        self.noise = (max(grown[0] - own.bytes, 0), max(grown[1] - own.files, 0))
        print(f"note: the disk grew by {size_text(grown[0])} and {grown[1]:,} files while "
              f"worker uid {self.uid} ran; its own files hold {size_text(own.bytes)} in "
              f"{own.files:,}: the rest is another process's, not counted", file=sys.stderr)
        return None

    def clean(self) -> Tally:
        """Delete what the uid left in the watched folders (its processes must be dead)."""
        tally = walk_owned(self.uid, self.roots, remove=True)
        if tally.opaque:  # folders only the uid may enter (a judge without DAC_OVERRIDE)
            _as_uid(self.uid, self.roots)
        if tally.capped:
            print(f"note: the clean-up of uid {self.uid}'s files stopped {tally.capped} "
                  f"({tally.removed:,} removed); the next clean-up goes on", file=sys.stderr)
        return tally
