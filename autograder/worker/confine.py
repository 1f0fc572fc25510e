"""The last steps before student code runs, taken by each worker as root right after it is
forked (``zygote``): its own namespaces and scratch space where the kernel allows them (or, for
``join``, the namespaces and cgroups of a fresh container made for its submission), then
resource limits, an empty capability bounding set, an unprivileged uid with ``no_new_privs``
and the seccomp filter.

Every step is read back from the kernel before student code may run (``verify``, the
namespace and cgroup checks of ``private_namespaces`` and ``join_container``): a step that did
not take raises ``ConfinementError``, and the judge grades nothing with that worker.

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
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
PRIVATE_NAMESPACES = ("mnt", "net", "ipc", "uts")  # what ``private_namespaces`` unshares
CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")  # /proc/PID/status


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
        raises (it used to end the loop silently, leaving the set full)."""
        for cap in range(64):
            if self.lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                err = ctypes.get_errno()
                if err == errno.EINVAL and cap > 0:
                    return
                raise OSError(err, f"dropping capability {cap} from the bounding set: "
                                   f"{os.strerror(err)}")


def private_namespaces(libc: Libc, uid: int, tmp_bytes: int) -> None:
    """Inside the jail (already read-only, pivoted): a network, IPC, UTS and mount namespace
    of this worker's own, so that two students' workers forked from one zygote share no
    loopback, abstract socket, SysV/POSIX IPC or scratch folder; fresh tmpfs on ``/tmp`` and
    ``/student`` (its working directory, owned by ``uid``). Read-only binds that live under
    ``/tmp`` (a venv there: the worker imports lazily from it) are moved onto the new
    ``/tmp``, not hidden by it."""
    before = namespace_inodes(PRIVATE_NAMESPACES)
    libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    after = namespace_inodes(PRIVATE_NAMESPACES)
    shared = [ns for ns in PRIVATE_NAMESPACES if after[ns] == before[ns]]
    if shared:
        raise ConfinementError(f"still in the zygote's {', '.join(shared)} namespace(s)")
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


def join_container(libc: Libc, pid: int, pidfd: int) -> dict[str, int]:
    """Move this process into the container whose first process is ``pid`` (a host pid),
    held by ``pidfd`` (opened by the judge once for the whole job): its cgroups (memory,
    pids, CPU, devices), then its namespaces, ``mnt`` last, which also makes the container's
    root this process's root. Only children forked afterwards are in its pid namespace: the
    caller forks once more, then checks with ``verify_joined`` (given the descriptors
    returned here, which it closes) before student code runs. Needs CAP_SYS_ADMIN,
    CAP_SYS_PTRACE and CAP_SYS_CHROOT, the host's pid namespace and a writable cgroup tree
    (the judge container of ``fork_runner.JudgeService``).

    ``pid`` is only a number: if the container stopped and the number was reused, the files
    under ``/proc/PID`` are another process's. They are opened first, then ``pidfd`` must
    still name a live process with that number, so what was opened is the container's (a
    worker respawned after its container is gone fails; it never joins a stranger)."""
    fds = {ns: os.open(f"/proc/{pid}/ns/{ns}", os.O_RDONLY) for ns in JOINED_NAMESPACES}
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            memberships = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        check_pidfd(pidfd, pid)
        mounts = cgroup_mounts()
        for _, controllers, path in memberships:
            mount = mounts.get(frozenset(filter(None, controllers.split(","))))
            if mount is None:
                raise OSError(f"no cgroup mount for {controllers or 'cgroup2'!r}")
            with open(f"{mount}{path}/cgroup.procs", "w") as procs:
                procs.write(str(os.getpid()))
        with open("/proc/self/cgroup") as f:
            mine = [line.rstrip("\n").split(":", 2) for line in f if line.strip()]
        if sorted(mine) != sorted(memberships):
            raise ConfinementError("this process is not in its container's cgroups")
        for ns in JOINED_NAMESPACES:
            libc.setns(fds[ns], ns)
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def check_pidfd(pidfd: int, pid: int) -> None:
    """``pidfd`` names the live process ``pid`` (its ``fdinfo`` says which pid it holds;
    signal 0 fails once that process has ended, even if the number was reused since)."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}") as f:
            held = [line.split()[1] for line in f if line.startswith("Pid:")]
        signal.pidfd_send_signal(pidfd, 0)
    except (OSError, ValueError) as exc:
        raise ConfinementError(f"the submission's container (pid {pid}) is gone: {exc}") from exc
    if held != [str(pid)]:
        raise ConfinementError(f"the handle on the submission's container names pid "
                               f"{held[0] if held else '?'} (ended), not {pid}")


def verify_joined(fds: dict[str, int]) -> None:
    """In the child forked after ``join_container``: every namespace of this process is the
    container's (the inodes of ``/proc/self/ns/*`` are those of the descriptors held)."""
    mine = namespace_inodes(JOINED_NAMESPACES)
    apart = [ns for ns in JOINED_NAMESPACES if mine[ns] != os.fstat(fds[ns]).st_ino]
    if apart:
        raise ConfinementError(f"not in the container's {', '.join(apart)} namespace(s)")


def namespace_inodes(names) -> dict[str, int]:
    """This process's namespaces, by inode (two processes share one iff the inodes match)."""
    return {ns: os.stat(f"/proc/self/ns/{ns}").st_ino for ns in names}


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
    """rlimits, then an empty capability bounding set (needs CAP_SETPCAP, so before the uid
    changes), then the unprivileged uid (which also clears every capability), then
    ``no_new_privs`` so no setuid binary can give them back, then the seccomp filter; then
    all of it read back (``verify``)."""
    if not 61000 <= uid < 63000:  # never root or a system account for student code
        raise ValueError(f"uid {uid} is not a sandbox uid")
    workdir = "/student" if os.path.isdir("/student") else _scratch(uid)
    set_limits(limits)
    libc.drop_bounding_set()
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc.no_new_privs()
    os.chdir(workdir)
    os.environ["HOME"] = workdir
    filtered = seccomp.install()
    verify(uid, limits, filtered)


def process_status() -> dict[str, str]:
    """``/proc/self/status`` as a dict of its fields (values stripped)."""
    with open("/proc/self/status") as f:
        return {key: value.strip() for key, _, value in
                (line.partition(":") for line in f.read().splitlines())}


def verify(uid: int, limits: dict, filtered: bool = True) -> None:
    """Read back from the kernel what ``drop_privileges`` set, as student code will find it:
    no capability in any set (the bounding set included), ``no_new_privs``, the seccomp
    filter (``filtered``: on a machine with a table), ``uid`` as every uid and gid and no
    supplementary group, every rlimit of ``set_limits``. ``ConfinementError`` naming every
    step that did not take."""
    status = process_status()
    problems = [f"{name} is {status.get(name)}" for name in CAPABILITY_SETS
                if status.get(name) is None or int(status[name], 16) != 0]
    if status.get("NoNewPrivs") != "1":
        problems.append(f"NoNewPrivs is {status.get('NoNewPrivs')}")
    if filtered and status.get("Seccomp") != "2":
        problems.append(f"Seccomp is {status.get('Seccomp')} (no filter)")
    for name in ("Uid", "Gid"):
        if status.get(name, "").split() != [str(uid)] * 4:
            problems.append(f"{name} is {' '.join(status.get(name, '?').split())}, not {uid}")
    if status.get("Groups", ""):
        problems.append(f"supplementary groups {status['Groups']}")
    for kind, key in ((resource.RLIMIT_AS, "memory_bytes"), (resource.RLIMIT_CPU, "cpu_seconds"),
                      (resource.RLIMIT_NPROC, "processes"), (resource.RLIMIT_FSIZE, "file_bytes"),
                      (resource.RLIMIT_NOFILE, "open_files"), (resource.RLIMIT_CORE, None)):
        want = 0 if key is None else int(limits[key])
        if resource.getrlimit(kind) != (want, want):
            problems.append(f"rlimit {key or 'core'} is {resource.getrlimit(kind)}")
    if problems:
        raise ConfinementError("confinement did not take: " + "; ".join(problems))


def _scratch(uid: int) -> str:
    """A private working folder where there is no ``/student`` (the container confinement
    used on a bare machine, e.g. the GPU check where namespaces are missing)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix=f"autograder-student-{uid}-")
    os.chown(folder, uid, uid)
    return folder
