"""What every confinement step uses: the few system calls Python's ``os`` lacks (``Libc``:
``unshare``, ``mount``, ``pivot_root``, ``setns``, ``prctl``...), their flags, and
``ConfinementError``, raised when a step read back from the kernel did not take.

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18)
MS_MOVE, MNT_DETACH, PR_SET_NO_NEW_PRIVS = 8192, 2, 38
PR_CAPBSET_DROP = 24


class ConfinementError(OSError):
    """A confinement step did not take (read back from the kernel): no student code may run."""


class Libc:
    """The few system calls Python's ``os`` lacks, raising ``OSError`` on failure."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(None, use_errno=True)

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    def unshare(self, flags: int) -> None:
        self.check(self.lib.unshare(flags), "unshare")

    def mount(self, src: str | None, target: str, fstype: str | None, flags: int,
              data: str | None = None) -> None:
        enc = lambda s: s.encode() if s is not None else None  # noqa: E731
        self.check(self.lib.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags),
                                  enc(data)), f"mount {target}")

    def pivot_root(self, new: str, old: str) -> None:
        self.check(self.lib.syscall(155, new.encode(), old.encode()), "pivot_root")

    def umount2(self, target: str, flags: int) -> None:
        self.check(self.lib.umount2(target.encode(), flags), f"umount {target}")

    def no_new_privs(self) -> None:
        self.check(self.lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")

    def setns(self, fd: int, what: str) -> None:
        self.check(self.lib.setns(fd, 0), f"setns {what}")

    def drop_bounding_set(self) -> None:
        """Empty the capability bounding set (no exec can ever regain a capability). Needs
        CAP_SETPCAP; every refusal but the kernel's ``EINVAL`` past its last capability
        raises (a loop that ended silently would leave the set full)."""
        for cap in range(64):
            if self.lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                err = ctypes.get_errno()
                if err == errno.EINVAL and cap > 0:
                    return
                raise OSError(err, f"dropping capability {cap} from the bounding set: "
                                   f"{os.strerror(err)}")
