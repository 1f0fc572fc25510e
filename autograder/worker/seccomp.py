"""A seccomp filter for workers: the system calls no notebook needs and that widen what an
unprivileged process can reach in the kernel are refused with ``EPERM``, as Docker's default
profile refuses them in a container it starts itself (a worker joined to a container, or in
the local sealed runner, gets no filter from the engine).

Refused: new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3``
answers ``ENOSYS`` so that the C library falls back to ``clone``, where its flags can be seen),
mounting (``mount``, ``umount2``, ``pivot_root``, ``chroot``, the new mount API), the kernel
keyring (``add_key``, ``request_key``, ``keyctl``), ``bpf``, ``perf_event_open``,
``userfaultfd``, ``io_uring``, handles to files by number (``open_by_handle_at``), kernel
modules and ``kexec``, and System V shared memory and message queues (``shmget``, ``msgget``:
memory that outlives its detaching and counts against no process's address space; red team
rt-s4 held 6 GiB of the host with it. Python, numpy and torch use POSIX shared memory and
memfd, which the worker's memory cgroup counts). Calls of another ABI (x32, i386 on x86-64) are refused whole.

Standard library only (it runs in the worker, beside its code). Installed after
``no_new_privs``, last before the worker reads a request; it holds for every process the
worker starts.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_W loads, BPF_K jumps/returns
NR, ARCH, ARG0 = 0, 4, 16  # offsets in struct seccomp_data (ARG0: low half, little-endian)
NAMESPACE_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
                   | 0x20000000 | 0x40000000)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER,
#                                                NEWPID, NEWNET

# audit arch, x32 bit (x86-64 only), clone, clone3 and the refused calls, by machine
TABLES = {
    "x86_64": (0xC000003E, 0x40000000, 56, 435, {
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
        "chroot": 161, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "add_key": 248,
        "request_key": 249, "keyctl": 250, "bpf": 321, "perf_event_open": 298,
        "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 304, "name_to_handle_at": 303,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
        "kexec_file_load": 320, "shmget": 29, "msgget": 68}),
    "aarch64": (0xC00000B7, None, 220, 435, {
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
        "chroot": 51, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "add_key": 217,
        "request_key": 218, "keyctl": 219, "bpf": 280, "perf_event_open": 241,
        "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 265, "name_to_handle_at": 264,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104,
        "kexec_file_load": 294, "shmget": 194, "msgget": 186}),
}


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter as BPF instructions ``(code, jt, jf, k)`` for ``machine`` (this one's by
    default); ``KeyError`` for a machine without a table."""
    arch, x32, clone, clone3, refused = TABLES[machine or platform.machine()]
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    code = [(LD_ABS, 0, 0, ARCH), (JEQ, 1, 0, arch), (RET, 0, 0, eperm), (LD_ABS, 0, 0, NR)]
    if x32 is not None:
        code += [(JGE, 0, 1, x32), (RET, 0, 0, eperm)]
    for number in sorted(refused.values()):
        code += [(JEQ, 0, 1, number), (RET, 0, 0, eperm)]
    code += [(JEQ, 0, 1, clone3), (RET, 0, 0, enosys),
             (JEQ, 0, 3, clone), (LD_ABS, 0, 0, ARG0), (JSET, 0, 1, NAMESPACE_FLAGS),
             (RET, 0, 0, eperm), (RET, 0, 0, RET_ALLOW)]
    return code


def install() -> bool:
    """Install the filter on this process (``no_new_privs`` must be set, or root); False on a
    machine without a table (nothing installed), ``OSError`` if the kernel refuses it."""
    if platform.machine() not in TABLES:
        return False
    code = program()
    raw = b"".join(struct.pack("HBBI", *insn) for insn in code)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Program(len(code), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
    return True
