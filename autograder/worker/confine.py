"""The last steps before student code runs, taken by each worker as root right after it is
forked (``zygote``): its own namespaces and scratch space where the kernel allows them (or, for
``join``, the namespaces and cgroups of a fresh container made for its submission), then
resource limits and an unprivileged uid with ``no_new_privs``.

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
import sys

from . import seccomp

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18)
MS_MOVE, MNT_DETACH, PR_SET_NO_NEW_PRIVS = 8192, 2, 38
PR_CAPBSET_DROP = 24
# joined in this order; mnt last (it changes what /proc and /sys/fs/cgroup are)
JOINED_NAMESPACES = ("cgroup", "ipc", "uts", "net", "pid", "mnt")


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
        """Empty the capability bounding set (no exec can ever regain a capability)."""
        cap = 0
        while self.lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
            cap += 1


def private_namespaces(libc: Libc, uid: int, tmp_bytes: int) -> None:
    """Inside the jail (already read-only, pivoted): a network, IPC, UTS and mount namespace
    of this worker's own, so that two students' workers forked from one zygote share no
    loopback, abstract socket, SysV/POSIX IPC or scratch folder; fresh tmpfs on ``/tmp`` and
    ``/student`` (its working directory, owned by ``uid``). Read-only binds that live under
    ``/tmp`` (a venv there: the worker imports lazily from it) are moved onto the new
    ``/tmp``, not hidden by it."""
    libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    flags = MS_NOSUID | MS_NODEV
    libc.mount("tmpfs", "/student", "tmpfs", flags, f"size={tmp_bytes},mode=1777")
    kept = mounts_under("/tmp")
    for i, path in enumerate(kept):
        os.mkdir(f"/student/.keep{i}")
        libc.mount(path, f"/student/.keep{i}", None, MS_BIND | MS_REC)
    libc.mount("tmpfs", "/tmp", "tmpfs", flags, f"size={tmp_bytes},mode=1777")
    for i, path in enumerate(kept):
        os.makedirs(path, mode=0o755)
        libc.mount(f"/student/.keep{i}", path, None, MS_MOVE)
        libc.mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags | MS_REC)
        os.rmdir(f"/student/.keep{i}")
    os.chown("/student", uid, uid)


def join_container(libc: Libc, pid: int) -> None:
    """Move this process into the container whose first process is ``pid`` (a host pid): its
    cgroups (memory, pids, CPU, devices), then its namespaces, ``mnt`` last, which also makes
    the container's root this process's root. Only children forked afterwards are in its pid
    namespace: the caller forks once more before student code runs. Needs CAP_SYS_ADMIN,
    CAP_SYS_PTRACE and CAP_SYS_CHROOT, the host's pid namespace and a writable cgroup tree
    (the judge container of ``docker_runner.JudgeService``)."""
    fds = {ns: os.open(f"/proc/{pid}/ns/{ns}", os.O_RDONLY) for ns in JOINED_NAMESPACES}
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            memberships = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        mounts = cgroup_mounts()
        for _, controllers, path in memberships:
            mount = mounts.get(frozenset(filter(None, controllers.split(","))))
            if mount is None:
                raise OSError(f"no cgroup mount for {controllers or 'cgroup2'!r}")
            with open(f"{mount}{path}/cgroup.procs", "w") as procs:
                procs.write(str(os.getpid()))
        for ns in JOINED_NAMESPACES:
            libc.setns(fds[ns], ns)
    finally:
        for fd in fds.values():
            os.close(fd)


def cgroup_mounts() -> dict[frozenset, str]:
    """Where each cgroup hierarchy is mounted, keyed by its names as ``/proc/PID/cgroup``
    gives them: the v1 controllers (``{"cpu", "cpuacct"}``, ``{"name=systemd"}``), or the
    empty set for cgroup2."""
    with open("/proc/cgroups") as f:
        known = {line.split()[0] for line in f if not line.startswith("#")}
    mounts: dict[frozenset, str] = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            tail = fields[fields.index("-") + 1:]
            point = fields[4].encode().decode("unicode_escape")
            if tail[0] == "cgroup2":
                mounts.setdefault(frozenset(), point)
            elif tail[0] == "cgroup":
                names = frozenset(o for o in tail[2].split(",")
                                  if o in known or o.startswith("name="))
                mounts.setdefault(names, point)
    return mounts


def mounts_under(folder: str) -> list[str]:
    """Mount points strictly under ``folder``, outermost only (binds are recursive)."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")  # \040 is a space
            if point.startswith(folder.rstrip("/") + "/"):
                points.append(point)
    return [p for p in dict.fromkeys(points)
            if not any(p.startswith(q + "/") for q in points if q != p)]


def blocked_for_others(path: str) -> bool:
    """Whether a folder above ``path`` keeps other users from passing through it (no ``o+x``,
    as a 0700 ``mktemp -d`` or home folder does): the sandbox uid owns nothing and belongs to
    no group, so the "other" bits are what it gets."""
    folder = os.path.dirname(os.path.realpath(path))
    while os.stat(folder).st_mode & stat.S_IXOTH:
        if folder == os.sep:
            return False
        folder = os.path.dirname(folder)
    return True


def reach_imports() -> dict[str, str]:
    """Keep every import path usable after the uid drop where the project is checked out under
    a private folder (confinement ``container``: no jail, so the sandbox uid sees the real
    paths, and a 0700 parent stops it before the venv). For each entry of ``sys.path`` behind
    such a folder, open the folder itself here, as root, and import from
    ``/proc/self/fd/N`` from now on: the kernel checks a path through that link from the
    folder down only, so the venv's own world-readable files (torch's lazily loaded modules:
    ``torch._subclasses.schema_check_mode``, ``torch.distributions``, ...) load as they would
    anywhere, and nothing beside the venv becomes readable. Already imported packages'
    ``__path__``, ``__file__`` and loaders move too (lazy submodules are found through the
    parent package's ``__path__``, not ``sys.path``). Pre-importing torch's lazy modules instead
    would need a list that is never complete (students import what they like).
    Returns old prefix -> new prefix (empty where nothing is blocked: the grading image, a
    checkout under a 0755 folder)."""
    moved: dict[str, str] = {}
    for entry in dict.fromkeys(sys.path):
        if entry and os.path.isdir(entry) and blocked_for_others(entry):
            fd = os.open(entry, os.O_PATH | os.O_DIRECTORY)  # close-on-exec: this process only
            moved[entry.rstrip(os.sep)] = f"/proc/self/fd/{fd}"
    if not moved:
        return moved
    # longest first: a site-packages inside another moved folder keeps its own descriptor
    order = sorted(moved, key=len, reverse=True)

    def new(path):
        if not isinstance(path, str):
            return path
        for old in order:
            if path == old or path.startswith(old + os.sep):
                return moved[old] + path[len(old):]
        return path

    sys.path[:] = [new(p) for p in sys.path]
    for module in list(sys.modules.values()):
        # the module's own dict, never getattr: torch.ops and other lazy modules would make
        # up an attribute for any name asked
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        if isinstance(names.get("__path__"), list):
            names["__path__"][:] = [new(p) for p in names["__path__"]]
        if isinstance(names.get("__file__"), str):
            names["__file__"] = new(names["__file__"])
        spec = names.get("__spec__")
        if spec is not None and not isinstance(spec, type):
            try:
                spec.origin = new(spec.origin)
                if isinstance(spec.submodule_search_locations, list):
                    spec.submodule_search_locations[:] = [
                        new(p) for p in spec.submodule_search_locations]
            except AttributeError:
                pass
        loader = names.get("__loader__")
        if isinstance(getattr(loader, "path", None), str):
            try:
                loader.path = new(loader.path)
            except AttributeError:
                pass
    sys.path_importer_cache.clear()
    return moved


def set_limits(limits: dict) -> None:
    """rlimits from the judge's ``Limits`` fields (address space, CPU, processes per uid,
    file size, open files; no core files)."""
    for kind, value in ((resource.RLIMIT_AS, limits["memory_bytes"]),
                        (resource.RLIMIT_CPU, limits["cpu_seconds"]),
                        (resource.RLIMIT_NPROC, limits["processes"]),
                        (resource.RLIMIT_FSIZE, limits["file_bytes"]),
                        (resource.RLIMIT_NOFILE, limits["open_files"]),
                        (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(kind, (int(value), int(value)))


def drop_privileges(libc: Libc, uid: int, limits: dict) -> None:
    """rlimits, then the unprivileged uid (which also clears every capability), then
    ``no_new_privs`` so no setuid binary can give them back, then the seccomp filter."""
    if not 61000 <= uid < 63000:  # never root or a system account for student code
        raise ValueError(f"uid {uid} is not a sandbox uid")
    workdir = "/student" if os.path.isdir("/student") else _scratch(uid)
    set_limits(limits)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc.no_new_privs()
    os.chdir(workdir)
    os.environ["HOME"] = workdir
    seccomp.install()


def _scratch(uid: int) -> str:
    """A private working folder where there is no ``/student`` (the container confinement
    used on a bare machine, e.g. the GPU check where namespaces are missing)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix=f"autograder-student-{uid}-")
    os.chown(folder, uid, uid)
    return folder
