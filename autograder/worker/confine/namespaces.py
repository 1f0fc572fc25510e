"""Where the worker lives: its own mount, network, IPC and UTS namespaces and scratch
folders (``private_namespaces``), or the cgroups and namespaces of the container made for its
submission (``join_container``, checked by ``check_pidfd`` and ``verify_joined``), and what
they read from ``/proc`` (namespace inodes, cgroup mounts, mount points).

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import os
import signal

from .libc import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUTS,
    MS_BIND,
    MS_MOVE,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    ConfinementError,
    Libc,
)

# joined in this order; mnt last (it changes what /proc and /sys/fs/cgroup are)
JOINED_NAMESPACES = ("cgroup", "ipc", "uts", "net", "pid", "mnt")
PRIVATE_NAMESPACES = ("mnt", "net", "ipc", "uts")  # what ``private_namespaces`` unshares


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
    (the judge container of ``runners.docker_fork.JudgeContainer``).

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
