"""A CPU share and a memory cap of its own for each worker of the local sealed runner.

Without a CPU share, a submission that starts 60 busy processes gets 60 of every 61 time
slices beside a neighbour's one process: the kernel splits the CPU per process (or per session
when ``kernel.sched_autogroup_enabled`` is on, which is the only reason it did not happen on
our machine). Without a memory cap, ``RLIMIT_AS`` holds each of a worker's processes to 4 GiB
of address space, but not 64 of them together, nor memory no process maps: SysV shared memory
detached after a write, memfd files (red team rt-s4 held 6 GiB of the host that way, beyond
the reach of the OOM killer's choice of process). Here the judge makes one group per worker and
controller before that worker reads its first request: in the ``cpu`` hierarchy with the same
weight as every other worker's and a quota of one core (``CPU_QUOTA_US``), in the ``memory``
hierarchy with a limit of ``Limits.memory_bytes`` for all its processes and every page they
charge (anonymous, shared, tmpfs); at the limit the kernel kills in that group only. It moves
the worker into them (its children follow) and reads the membership back; the groups are
removed when the worker has been killed.

The groups sit side by side in the grader's own cgroup (``autograder-<grader pid>-<worker
pid>``), not under one parent group of the grader: a parent would weigh as one process
against everything else on the host, so two workers beside other load would share one
process's slice between them.

Both hierarchies: cgroup v1 (each controller's own mount: ``cpu.shares``,
``cpu.cfs_quota_us``, ``memory.limit_in_bytes``) and cgroup v2 (the unified tree, one group
for both: ``cpu.weight``, ``cpu.max``, ``memory.max``; the grader's own cgroup must let it
enable ``cpu`` and ``memory`` for a subtree, e.g. a systemd unit with ``Delegate=yes``). Where a
controller's groups cannot be made (not root, a read-only or undelegated tree) ``place`` says
so once on stderr and grading goes on without them (``docs/confinement.md``).

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

#: the controllers each worker gets a group of
CONTROLLERS = ("cpu", "memory")
#: the memory limit's file and the swap limit's, by cgroup version
MEMORY_FILES = {1: ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"),
                2: ("memory.max", "memory.swap.max")}
#: what the memory hierarchy's probe group's limit is set to, to see that limits can be set
MEMORY_PROBE_BYTES = 2**30
CPU_PERIOD_US = 100_000
CPU_QUOTA_US = 100_000  # one core a worker, as one job a core (``--jobs``) assumes
V1_SHARES, V2_WEIGHT = 1024, 100  # the defaults, written anyway: every worker the same
PREFIX = "autograder-"  # autograder-<grader pid>-<worker pid>


class Unavailable(OSError):
    """No groups of one controller here (why, in words)."""


class Groups:
    """Where this grading process makes its workers' groups in one controller's hierarchy
    (``cpu`` or ``memory``; in cgroup v2 both are the one unified tree)."""

    def __init__(self, root: Path, version: int, controller: str = "cpu"):
        self.root, self.version = root, version  # root: the grader's own cgroup folder
        self.controller = controller
        self.prefix = f"{PREFIX}{os.getpid()}-"

    @classmethod
    def create(cls, controller: str = "cpu") -> "Groups":
        """Find ``controller``'s hierarchy and check a group can be made there;
        ``Unavailable`` if not."""
        mounts = cgroup_mounts()
        with open("/proc/self/cgroup") as f:
            mine = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        groups = None
        for _, controllers, path in mine:
            names = frozenset(filter(None, controllers.split(",")))
            if controller in names and names in mounts:
                groups = cls(Path(mounts[names] + path), 1, controller)
        if groups is None:
            path = next((p for _, c, p in mine if c == ""), None)
            if frozenset() not in mounts or path is None:
                raise Unavailable(f"no {controller} controller is mounted (cgroup v1 or v2)")
            groups = cls(Path(mounts[frozenset()] + path), 2, controller)
            available = (groups.root / "cgroup.controllers").read_text().split()
            if controller not in available:
                raise Unavailable(f"the {controller} controller is not available in "
                                  f"{groups.root}")
        groups.remove_orphans()
        probe = groups.root / f"{groups.prefix}probe-{controller}"
        try:
            if groups.version == 2:  # the grader's own group must not hold processes
                _enable(groups.root, controller)
            probe.mkdir(exist_ok=True)
            if controller == "memory":  # the limit must be writable, not only the folder
                _write(probe / MEMORY_FILES[groups.version][0], MEMORY_PROBE_BYTES)
        except OSError as exc:
            raise Unavailable(f"cannot make a {controller} cgroup under {groups.root}: "
                              f"{exc.strerror or exc}") from exc
        finally:
            _rmdir(probe, tries=1)
        return groups

    def add(self, pid: int, memory_bytes: int | None = None) -> Path:
        """A group for the worker ``pid``, with its settings (the CPU weight and quota, or
        the memory limit: ``memory_bytes``, none when ``None``), the worker moved into it and
        the move read back from ``/proc/PID/cgroup``. ``OSError`` if any step fails (the
        worker must then not be used). In cgroup v2 the group the other controller made for
        ``pid`` is the same folder: it is taken as it is, and only its settings written."""
        group = self.root / f"{self.prefix}{pid}"
        made = not (self.version == 2 and group.is_dir())
        if made:
            group.mkdir()
        try:
            for name, value in self._settings(memory_bytes):
                _write(group / name, value)
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

    def _settings(self, memory_bytes: int | None) -> list[tuple[str, object]]:
        if self.controller == "memory":
            if memory_bytes is None:
                return []
            limit, swap = MEMORY_FILES[self.version]
            # where the kernel accounts swap, swap may not extend the limit (v1: memory and
            # swap together, written after the limit it may not be below; v2: no swap)
            return [(limit, memory_bytes)] + ([(swap, memory_bytes if self.version == 1 else 0)]
                                              if (self.root / swap).exists() else [])
        if self.version == 1:
            return [("cpu.shares", V1_SHARES), ("cpu.cfs_period_us", CPU_PERIOD_US),
                    ("cpu.cfs_quota_us", CPU_QUOTA_US)]
        return [("cpu.weight", V2_WEIGHT), ("cpu.max", f"{CPU_QUOTA_US} {CPU_PERIOD_US}")]

    def out_of_memory(self, group: Path) -> bool:
        """Whether the kernel killed in the group for its limit (``oom_kill`` in v1's
        ``memory.oom_control`` or v2's ``memory.events``) or refused memory at it (v1's
        ``memory.failcnt``, which some kernels leave at 0 when they kill)."""
        try:
            events = (group / ("memory.oom_control" if self.version == 1 else
                               "memory.events")).read_text()
            counts = dict(line.split()[:2] for line in events.splitlines() if line.strip())
            if int(counts.get("oom_kill", 0)) > 0:
                return True
            return self.version == 1 and int((group / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def membership(self, pid: int) -> Path | None:
        """The folder of the group ``pid`` is in, in this hierarchy (None if it is gone)."""
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                lines = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        except FileNotFoundError:
            return None
        for _, controllers, path in lines:
            if self._ours(controllers):
                try:
                    return self.root / Path(path).relative_to(self._root_path())
                except ValueError:  # outside the grader's own group
                    return Path(path)
        return None

    def _ours(self, controllers: str) -> bool:
        """Whether a ``/proc/PID/cgroup`` line's controllers are this hierarchy's."""
        names = set(filter(None, controllers.split(",")))
        return (self.controller in names) if self.version == 1 else controllers == ""

    def _root_path(self) -> str:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if self._ours(controllers):
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


def _enable(folder: Path, controller: str) -> None:
    """cgroup v2: let ``folder``'s children have ``controller``'s settings (CPU weights and
    quotas, memory limits)."""
    if controller not in (folder / "cgroup.subtree_control").read_text().split():
        _write(folder / "cgroup.subtree_control", f"+{controller}")


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


#: what each controller's missing groups cost, said once on stderr
WITHOUT = {"cpu": "no CPU share per worker ({}): a submission's processes compete with its "
                  "neighbours' as the kernel's scheduler alone decides",
           "memory": "no memory cap per worker ({}): each of a submission's processes is "
                     "held to its address-space limit, but not all of them together, nor "
                     "memory that no process maps (shared memory, memfd files)"}
_groups: dict[str, Groups] = {}
_unavailable: dict[str, str] = {}
_lock = threading.Lock()


def problem(controller: str = "cpu") -> str | None:
    """Why this grader has no groups of ``controller`` (said once on stderr), or None: they
    are ready."""
    with _lock:
        if controller not in _groups and controller not in _unavailable:
            try:
                _groups[controller] = Groups.create(controller)
                atexit.register(_groups[controller].close)
            except Unavailable as exc:
                _unavailable[controller] = str(exc)
                print(f"note: {WITHOUT[controller].format(exc)} (see docs/confinement.md)",
                      file=sys.stderr, flush=True)
        return _unavailable.get(controller)


def place(pid: int, memory_bytes: int | None = None) -> list[Path]:
    """Give the worker ``pid`` a CPU group and a memory group of its own, the memory group
    capped at ``memory_bytes`` for all its processes together (``None``: no cap, as for
    CUDA, which maps more than it uses); their folders, none for a controller this host has
    no groups of (``problem``). ``OSError`` when the groups exist but this worker could not
    be put in one (those made are removed)."""
    placed: list[Path] = []
    try:
        for controller in CONTROLLERS:
            if problem(controller) is None:
                group = _groups[controller].add(pid, memory_bytes)
                if group not in placed:  # cgroup v2: one folder for both
                    placed.append(group)
    except BaseException:
        release(placed)
        raise
    return placed


def out_of_memory(groups: list[Path]) -> bool:
    """Whether the worker placed in ``groups`` reached its memory group's limit."""
    memory = _groups.get("memory")
    return memory is not None and any(
        g.parent == memory.root and memory.out_of_memory(g) for g in groups)


def worker_groups(controller: str = "cpu") -> list[Path]:
    """This grader's workers' groups of ``controller`` now (none before its first worker got
    one)."""
    return _groups[controller].groups() if controller in _groups else []


def release(groups: list[Path]) -> None:
    """Remove a worker's groups (``place``'s answer) after the worker was killed."""
    for group in groups:
        owner = next((g for g in _groups.values() if group.parent == g.root), None)
        if owner is not None:
            owner.remove(group)
