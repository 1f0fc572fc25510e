"""Starting the worker confined: its own mount and network namespaces, a minimal read-only
root (Python, the venv's packages, the worker's own code, nothing else of the project), an
unprivileged uid, no new privileges, resource limits. The judge keeps the only copy of the
hidden tests, the references, the seed and the results: the worker cannot see them.

Confinement needs root (namespaces, ``setuid``); as any other user it is refused with a clear
message rather than silently weakened.

Two confinement modes (``Limits.confinement``):

- ``"namespaces"`` (the local sealed runner): the jail above, built here.
- ``"container"`` (the judge already runs inside the grading image's container, without
  CAP_SYS_ADMIN, so no unshare or pivot_root): the container is the jail (no network, read-only
  root, its own pids and memory limits); the checks, the zip and the judge's files are
  root-only by file permissions; the worker only drops to the unprivileged uid, takes the
  rlimits and ``no_new_privs``. Its code is the copy baked in at ``CONTAINER_WORKER_DIR``.
"""

from __future__ import annotations

import ctypes
import os
import resource
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import autograder

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18)
MNT_DETACH, PR_SET_NO_NEW_PRIVS = 2, 38
CONTAINER_WORKER_DIR = "/opt/agworker"


class SandboxError(RuntimeError):
    """The worker could not be confined (not root, no namespaces)."""


@dataclass(frozen=True)
class Limits:
    """Per-worker limits. Memory is address space; processes count per uid (one uid a worker)."""

    memory_bytes: int = 4 * 2**30
    cpu_seconds: int = 600
    processes: int = 64
    file_bytes: int = 64 * 2**20
    open_files: int = 256
    output_bytes: int = 64 * 2**10
    tmp_bytes: int = 256 * 2**20
    call_timeout: float = 30.0
    cell_timeout: float = 120.0
    submission_timeout: float = 300.0
    confinement: str = "namespaces"  # or "container": see the module docstring


def worker_sources() -> dict[str, bytes]:
    """The files the worker runs, read by the judge: ``autograder/__init__.py`` and the
    ``worker`` subpackage. Nothing else of the package (the checks) is copied."""
    package = Path(autograder.__file__).parent
    files = {"autograder/__init__.py": (package / "__init__.py").read_bytes()}
    for path in sorted((package / "worker").glob("*.py")):
        files[f"autograder/worker/{path.name}"] = path.read_bytes()
    return files


def _readonly_binds() -> list[str]:
    """Host paths the worker sees read-only: system libraries, Python, the venv's packages."""
    paths = ["/usr", "/etc", sys.base_prefix, sys.prefix]
    paths += [p for p in ("/lib", "/lib64", "/bin", "/sbin") if not os.path.islink(p)]
    return [p for p in dict.fromkeys(os.path.realpath(p) for p in paths) if os.path.isdir(p)]


def _site_packages() -> list[str]:
    return [p for p in dict.fromkeys([sysconfig.get_paths()["purelib"],
                                      sysconfig.get_paths()["platlib"], *site.getsitepackages()])
            if os.path.isdir(p)]


def worker_command(fd_in: int, fd_out: int) -> list[str]:
    """``python -I -S``: no site hooks (the editable install would point back at the project),
    only the venv's site-packages and the worker's copy on the path."""
    paths = [CONTAINER_WORKER_DIR, *_site_packages()]
    code = (f"import sys; sys.path[:0] = {paths!r}; "
            f"from autograder.worker.main import serve; serve({fd_in}, {fd_out})")
    return [os.path.realpath(sys.executable), "-I", "-S", "-c", code]


class _Libc:
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


def _bind(libc: _Libc, root: str, path: str, readonly: bool = True) -> None:
    target = root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    libc.mount(path, target, None, MS_BIND | MS_REC)
    if readonly:
        libc.mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_REC)


def _confine(root: str, uid: int, limits: Limits, files: dict[str, bytes]) -> None:
    """Runs in the forked child, as root, before ``exec``: build the jail and drop privileges."""
    libc = _Libc()
    libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    libc.mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=755")
    for link in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged-/usr symlinks
        if os.path.islink(f"/{link}"):
            os.symlink(os.readlink(f"/{link}"), f"{root}/{link}")
    for dev in ("null", "zero", "random", "urandom", "full"):
        _bind(libc, root, f"/dev/{dev}", readonly=False)
    os.makedirs(f"{root}/proc")
    libc.mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    for writable in ("tmp", "student"):  # first: a venv under /tmp is bound on top of it
        os.makedirs(f"{root}/{writable}")
        libc.mount("tmpfs", f"{root}/{writable}", "tmpfs", MS_NOSUID | MS_NODEV,
                   f"size={limits.tmp_bytes},mode=1777")
    os.chown(f"{root}/student", uid, uid)
    for path in _readonly_binds():
        _bind(libc, root, path)
    for name, data in files.items():
        os.makedirs(os.path.dirname(f"{root}/opt/agworker/{name}"), exist_ok=True)
        Path(f"{root}/opt/agworker/{name}").write_bytes(data)
    os.makedirs(f"{root}/.old")
    libc.pivot_root(root, f"{root}/.old")
    os.chdir("/")
    libc.umount2("/.old", MNT_DETACH)
    os.rmdir("/.old")
    libc.mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    _drop_privileges(libc, uid, limits)


def _drop_privileges(libc: _Libc, uid: int, limits: Limits) -> None:
    """The last steps of both modes: rlimits, then the unprivileged uid (which also clears
    every capability), then ``no_new_privs`` so no setuid binary can give them back."""
    _limit(limits)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc.no_new_privs()
    os.chdir("/student")


def install_worker(folder: Path) -> None:
    """Write the worker's code to ``folder`` (the grading image does this at build time for
    the ``container`` mode); everything else of the package can then be made root-only."""
    for name, data in worker_sources().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _limit(limits: Limits) -> None:
    for kind, value in ((resource.RLIMIT_AS, limits.memory_bytes),
                        (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_NPROC, limits.processes),
                        (resource.RLIMIT_FSIZE, limits.file_bytes),
                        (resource.RLIMIT_NOFILE, limits.open_files),
                        (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(kind, (value, value))


def start(root_dir: Path, uid: int, limits: Limits) -> tuple[subprocess.Popen, int, int]:
    """Start one confined worker; return it with the judge's ends of the two pipes.

    Args:
        root_dir: an empty folder owned by root where the worker's root is mounted (in its
            own namespace; the host sees the folder empty).
        uid: the unprivileged uid (and gid) to run as; one per live worker (``uids.lease``).
        limits: resource limits.
    """
    if limits.confinement not in ("namespaces", "container"):
        raise SandboxError(f"unknown confinement mode {limits.confinement!r}")
    if os.geteuid() != 0:
        raise SandboxError("the sealed judge's local mode needs root (namespaces and an "
                           "unprivileged uid for student code); run it as root or in Docker")
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    files = worker_sources()
    env = {"HOME": "/student", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}

    err_r, err_w = os.pipe()

    def child() -> None:
        try:
            if limits.confinement == "container":
                _drop_privileges(_Libc(), uid, limits)
            else:
                _confine(str(root_dir), uid, limits, files)
        except BaseException as exc:
            os.write(err_w, f"{type(exc).__name__}: {exc}".encode()[:2000])
            raise

    try:
        proc = subprocess.Popen(worker_command(req_r, rep_w), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd="/",
                                preexec_fn=child, pass_fds=(req_r, rep_w),
                                start_new_session=True)
    except subprocess.SubprocessError as exc:
        os.close(err_w)
        with os.fdopen(err_r, "rb") as f:
            reason = f.read().decode(errors="replace") or str(exc)
        for fd in (req_r, req_w, rep_r, rep_w):
            os.close(fd)
        raise SandboxError(f"could not confine the worker: {reason}") from exc
    os.close(err_w)
    os.close(err_r)
    os.close(req_r)
    os.close(rep_w)
    return proc, req_w, rep_r
