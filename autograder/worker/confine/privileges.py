"""Who the worker is and what it may use: rlimits (``set_limits``), an empty capability
bounding set, the unprivileged uid, ``no_new_privs`` and the seccomp filter
(``drop_privileges``), then all of it read back from ``/proc/self/status`` and
``getrlimit`` (``verify``) before student code runs.

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import os
import resource
import stat

from .. import seccomp
from .libc import ConfinementError, Libc

CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")  # /proc/PID/status


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
    workdir = "/student" if _open_to(uid, "/student") else _scratch(uid)
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


def _open_to(uid: int, folder: str) -> bool:
    """Whether ``folder`` is a folder ``uid`` may work in once it is that uid: the grading
    image's ``/student`` (a tmpfs every user may write, or one chowned to it). A bare
    machine's own ``/student`` (the GPU check ran where one was root's alone) is not."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and (st.st_uid == uid or st.st_mode & 0o003 == 0o003)


def _scratch(uid: int) -> str:
    """A private working folder where there is no ``/student`` (the container confinement
    used on a bare machine, e.g. the GPU check where namespaces are missing)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix=f"autograder-student-{uid}-")
    os.chown(folder, uid, uid)
    return folder
