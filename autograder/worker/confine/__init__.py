"""The last steps before student code runs, taken by each worker as root right after it is
forked (``zygote``): its own namespaces and scratch space where the kernel allows them (or, for
``join``, the namespaces and cgroups of a fresh container made for its submission), then
resource limits, an empty capability bounding set, an unprivileged uid with ``no_new_privs``
and the seccomp filter.

Every step is read back from the kernel before student code may run (``verify``, the
namespace and cgroup checks of ``private_namespaces`` and ``join_container``): a step that did
not take raises ``ConfinementError``, and the judge grades nothing with that worker.

The package holds the steps by what they confine: ``libc`` (the system calls, their flags,
``ConfinementError``), ``namespaces`` (namespaces, cgroups, scratch folders), ``import_paths``
(what stays importable after the uid drop) and ``privileges`` (rlimits, capabilities, uid,
seccomp, and ``verify``); every public name is importable from here.

Standard library only; it runs in the jail, beside the worker's code.
"""

from .import_paths import blocked_for_others, reach_imports
from .libc import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUTS,
    MNT_DETACH,
    MS_BIND,
    MS_MOVE,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    PR_CAPBSET_DROP,
    PR_SET_NO_NEW_PRIVS,
    ConfinementError,
    Libc,
)
from .namespaces import (
    JOINED_NAMESPACES,
    PRIVATE_NAMESPACES,
    cgroup_mounts,
    check_pidfd,
    join_container,
    mounts_under,
    namespace_inodes,
    private_namespaces,
    verify_joined,
)
from .privileges import CAPABILITY_SETS, drop_privileges, process_status, set_limits, verify

__all__ = [
    "CLONE_NEWIPC", "CLONE_NEWNET", "CLONE_NEWNS", "CLONE_NEWUTS", "MNT_DETACH", "MS_BIND",
    "MS_MOVE", "MS_NODEV", "MS_NOSUID", "MS_PRIVATE", "MS_RDONLY", "MS_REC", "MS_REMOUNT",
    "PR_CAPBSET_DROP", "PR_SET_NO_NEW_PRIVS", "JOINED_NAMESPACES", "PRIVATE_NAMESPACES",
    "CAPABILITY_SETS", "ConfinementError", "Libc",
    "blocked_for_others", "cgroup_mounts", "check_pidfd", "drop_privileges", "join_container",
    "mounts_under", "namespace_inodes", "private_namespaces", "process_status",
    "reach_imports", "set_limits", "verify", "verify_joined",
]
