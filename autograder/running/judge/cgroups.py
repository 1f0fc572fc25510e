"""A CPU share of its own for each worker of the local sealed runner.

Without one, a submission that starts 60 busy processes gets 60 of every 61 time slices
beside a neighbour's one process: the kernel splits the CPU per process (or per session when
``kernel.sched_autogroup_enabled`` is on, which is the only reason it did not happen on our
machine). Here the judge makes one cgroup per worker before that worker reads its first
request, with the same CPU weight as every other worker's and a quota of one core
(``CPU_QUOTA_US``), moves the worker into it (its children follow) and reads the membership
back; the group is removed when the worker has been killed.

The groups sit side by side in the grader's own cgroup (``autograder-<grader pid>-<worker
pid>``), not under one parent group of the grader: a parent would weigh as one process
against everything else on the host, so two workers beside other load would share one
process's slice between them.

Both hierarchies: cgroup v1 (the ``cpu`` controller's own mount: ``cpu.shares``,
``cpu.cfs_quota_us``) and cgroup v2 (the unified tree: ``cpu.weight``, ``cpu.max``; the
grader's own cgroup must let it enable ``cpu`` for a subtree, e.g. a systemd unit with
``Delegate=yes``). Where neither can be written (not root, a read-only or undelegated tree)
``place`` says so once on stderr and grading goes on without (``docs/confinement.md``).

Hand-written rather than a library: the interface is a handful of file writes, and the
Python packages for it (``cgroupspy``, ``cgroup-utils``) cover v1 only.

The Docker runners need none of this: each submission's container has its own CPU quota
(``ContainerLimits.cpus``), and a ``docker-fork`` worker joins that container's cgroups
(``confine.join_container`` checks it did).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from pathlib import Path

from ...worker.confine import cgroup_mounts

CPU_PERIOD_US = 100_000
CPU_QUOTA_US = 100_000  # one core a worker, as one job a core (``--jobs``) assumes
V1_SHARES, V2_WEIGHT = 1024, 100  # the defaults, written anyway: every worker the same
PREFIX = "autograder-"  # autograder-<grader pid>-<worker pid>


class Unavailable(OSError):
    """No CPU cgroups here (why, in words)."""


class CpuGroups:
    """Where this grading process makes its workers' groups in the CPU hierarchy."""

    def __init__(self, root: Path, version: int):
        self.root, self.version = root, version  # root: the grader's own cgroup folder
        self.prefix = f"{PREFIX}{os.getpid()}-"

    @classmethod
    def create(cls) -> "CpuGroups":
        """Find the CPU hierarchy and check a group can be made there; ``Unavailable`` if
        not."""
        mounts = cgroup_mounts()
        with open("/proc/self/cgroup") as f:
            mine = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        groups = None
        for _, controllers, path in mine:
            names = frozenset(filter(None, controllers.split(",")))
            if "cpu" in names and names in mounts:
                groups = cls(Path(mounts[names] + path), 1)
        if groups is None:
            path = next((p for _, c, p in mine if c == ""), None)
            if frozenset() not in mounts or path is None:
                raise Unavailable("no cpu controller is mounted (cgroup v1 or v2)")
            groups = cls(Path(mounts[frozenset()] + path), 2)
            available = (groups.root / "cgroup.controllers").read_text().split()
            if "cpu" not in available:
                raise Unavailable(f"the cpu controller is not available in {groups.root}")
        groups.remove_orphans()
        probe = groups.root / f"{groups.prefix}probe"
        try:
            if groups.version == 2:  # the grader's own group must not hold processes
                _enable_cpu(groups.root)
            probe.mkdir(exist_ok=True)
        except OSError as exc:
            raise Unavailable(f"cannot make a cgroup under {groups.root}: "
                              f"{exc.strerror or exc}") from exc
        finally:
            _rmdir(probe, tries=1)
        return groups

    def add(self, pid: int) -> Path:
        """A group for the worker ``pid``, with its weight and quota, the worker moved into
        it and the move read back from ``/proc/PID/cgroup``. ``OSError`` if any step fails
        (the worker must then not be used)."""
        group = self.root / f"{self.prefix}{pid}"
        group.mkdir()
        try:
            if self.version == 1:
                _write(group / "cpu.shares", V1_SHARES)
                _write(group / "cpu.cfs_period_us", CPU_PERIOD_US)
                _write(group / "cpu.cfs_quota_us", CPU_QUOTA_US)
            else:
                _write(group / "cpu.weight", V2_WEIGHT)
                _write(group / "cpu.max", f"{CPU_QUOTA_US} {CPU_PERIOD_US}")
            _write(group / "cgroup.procs", pid)
            if self.membership(pid) != group:
                raise OSError(f"worker {pid} is in {self.membership(pid)}, not in {group}")
        except BaseException:
            try:  # back to the grader's own group, so that this one can go
                _write(self.root / "cgroup.procs", pid)
            except OSError:
                pass
            self.remove(group)
            raise
        return group

    def membership(self, pid: int) -> Path | None:
        """The folder of the group ``pid`` is in, in this hierarchy (None if it is gone)."""
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                lines = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        except FileNotFoundError:
            return None
        for _, controllers, path in lines:
            names = set(filter(None, controllers.split(",")))
            if ("cpu" in names) if self.version == 1 else controllers == "":
                try:
                    return self.root / Path(path).relative_to(self._root_path())
                except ValueError:  # outside the grader's own group
                    return Path(path)
        return None

    def _root_path(self) -> str:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                names = set(filter(None, controllers.split(",")))
                if ("cpu" in names) if self.version == 1 else controllers == "":
                    return path
        return "/"

    def remove(self, group: Path) -> None:
        """Remove a worker's group once its processes are gone (they were killed before)."""
        _rmdir(group)

    def groups(self) -> list[Path]:
        """This grader's workers' groups now."""
        return sorted(self.root.glob(f"{self.prefix}*/"))

    def close(self) -> None:
        for group in self.groups():
            _rmdir(group, tries=1)

    def remove_orphans(self) -> None:
        """Remove the groups left by graders of this host that were killed (empty by now:
        their workers were killed with them, or by the next ``uids.lease``)."""
        for folder in self.root.glob(f"{PREFIX}*-*/"):
            owner = folder.name[len(PREFIX):].split("-")[0]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                _rmdir(folder, tries=1)


def _write(path: Path, value) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def _enable_cpu(folder: Path) -> None:
    """cgroup v2: let ``folder``'s children have CPU weights and quotas."""
    if "cpu" not in (folder / "cgroup.subtree_control").read_text().split():
        _write(folder / "cgroup.subtree_control", "+cpu")


def _rmdir(folder: Path, tries: int = 50) -> None:
    """rmdir a cgroup; a group whose last process is still exiting is busy a moment."""
    for attempt in range(tries):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt + 1 < tries:
                time.sleep(0.02)


_groups: CpuGroups | None = None
_unavailable: str | None = None
_lock = threading.Lock()


def problem() -> str | None:
    """Why this grader has no CPU groups (said once on stderr), or None: they are ready."""
    global _groups, _unavailable
    with _lock:
        if _groups is None and _unavailable is None:
            try:
                _groups = CpuGroups.create()
                atexit.register(_groups.close)
            except Unavailable as exc:
                _unavailable = str(exc)
                print(f"note: no CPU share per worker ({exc}): a submission's processes "
                      f"compete with its neighbours' as the kernel's scheduler alone decides "
                      f"(see docs/confinement.md)", file=sys.stderr, flush=True)
        return _unavailable


def place(pid: int) -> Path | None:
    """Give the worker ``pid`` a CPU group of its own; its folder, or None where this host
    has no CPU cgroups for us (``problem``). ``OSError`` when the groups exist but this
    worker could not be put in one."""
    return None if problem() is not None else _groups.add(pid)


def worker_groups() -> list[Path]:
    """This grader's workers' CPU groups now (none before its first worker got one)."""
    return _groups.groups() if _groups is not None else []


def release(group: Path | None) -> None:
    """Remove a worker's group (``place``'s answer) after the worker was killed."""
    if group is not None and _groups is not None:
        _groups.remove(group)
