"""Confining workers: a minimal read-only root (Python, the venv's packages, the worker's own
code, nothing else of the project) for the zygote that forks them (``zygote``); for each
worker its own mount, network, IPC and UTS namespaces, an unprivileged uid, no new
privileges and resource limits (``autograder.worker.confine``, applied in the forked worker).
The judge keeps the only copy of the hidden tests, the references, the seed and the results:
the worker cannot see them.

Confinement needs root (namespaces, ``setuid``); as any other user it is refused with a clear
message rather than silently weakened.

Two confinement modes (``Limits.confinement``):

- ``"namespaces"`` (the local sealed runner): the jail above, built here.
- ``"container"`` (the judge already runs inside the grading image's container, without
  CAP_SYS_ADMIN, so no unshare or pivot_root): the container is the jail (no network, read-only
  root, its own pids and memory limits); the checks, the zip and the judge's files are
  root-only by file permissions; the worker only drops to the unprivileged uid, takes the
  rlimits and ``no_new_privs``.
- ``"join"`` (the Docker runner's ``docker-fork`` mode): the judge and the zygote run once, in
  a judge container that shares the host's pid namespace; each submission gets a fresh
  container of the same image (no network, read-only root, its own tmpfs, memory, process and
  CPU limits) that runs nothing but ``sleep``; each worker forked for it joins that
  container's cgroups and namespaces (``Limits.join_pid``, held by ``Limits.join_pidfd``),
  then drops to the unprivileged uid.

Each worker reads back every step before it runs student code (``confine.verify``), and the
local sealed runner also gives each worker a CPU share of its own (``cgroups``).
"""

from __future__ import annotations

import glob
import os
import site
import sys
import sysconfig
from pathlib import Path

import autograder

from ...worker.confine import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUTS,
    MNT_DETACH,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    Libc,
)

CONTAINER_WORKER_DIR = "/opt/agworker"
# The environment of the zygote and so of every worker.
WORKER_ENV = {"HOME": "/student", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
              "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
# which GPUs CUDA shows, as the judge was told: a worker must see the devices the judge sees
# and which SIMD kernels torch, MKL and oneDNN pick, as the judge was told: a worker's float32
# results come from the same kernels as the judge's references
WORKER_ENV.update({k: os.environ[k] for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                              "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS",
                                              "ONEDNN_MAX_CPU_ISA")
                   if k in os.environ})


class SandboxError(RuntimeError):
    """The worker could not be confined (not root, no namespaces)."""


def gpu_devices() -> list[str]:
    """The host's NVIDIA device files (bound into the jail when present)."""
    return sorted(glob.glob("/dev/nvidia*"))


def worker_sources() -> dict[str, bytes]:
    """The files the worker runs, read by the judge: ``autograder/__init__.py`` and the
    ``worker`` subpackage, its own subpackages (``wire``, ``confine``) included. Nothing else
    of the package (the checks) is copied."""
    package = Path(autograder.__file__).parent
    files = {"autograder/__init__.py": (package / "__init__.py").read_bytes()}
    for path in sorted((package / "worker").rglob("*.py")):
        files[f"autograder/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    return files


def _readonly_binds() -> list[str]:
    """Host paths the worker sees read-only: system libraries, Python, the venv's packages
    (and any other site-packages folder on the path, e.g. a system torch under a venv made
    with ``--system-site-packages``)."""
    paths = ["/usr", "/etc", sys.base_prefix, sys.prefix, *_site_packages()]
    paths += [p for p in ("/lib", "/lib64", "/bin", "/sbin") if not os.path.islink(p)]
    found = [p for p in dict.fromkeys(os.path.realpath(p) for p in paths) if os.path.isdir(p)]
    return [p for p in found if not any(p.startswith(q.rstrip("/") + "/") for q in found)]


def _site_packages() -> list[str]:
    return [p for p in dict.fromkeys([sysconfig.get_paths()["purelib"],
                                      sysconfig.get_paths()["platlib"], *site.getsitepackages()])
            if os.path.isdir(p)]


def zygote_command(fd: int, confinement: str, worker_dir: str = CONTAINER_WORKER_DIR,
                   rehearse: bool = True) -> list[str]:
    """``python -I -S``: no site hooks (the editable install would point back at the project),
    only the worker's copy (``worker_dir``) and the venv's site-packages on the path;
    ``rehearse`` as ``worker.zygote.warm_up`` takes it."""
    paths = [worker_dir, *_site_packages()]
    code = (f"import sys; sys.path[:0] = {paths!r}; "
            f"from autograder.worker.zygote import serve_zygote; "
            f"serve_zygote({fd}, {confinement!r}, rehearse={rehearse!r})")
    return [os.path.realpath(sys.executable), "-I", "-S", "-c", code]


def _bind(libc: Libc, root: str, path: str, readonly: bool = True) -> None:
    target = root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    libc.mount(path, target, None, MS_BIND | MS_REC)
    if readonly:
        libc.mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_REC)


def build_jail(root: str) -> None:
    """Runs in the zygote's process, as root, before ``exec``: its own namespaces and a root
    that holds only what workers need, read-only; ``/tmp`` and ``/student`` are mount points
    on which each worker mounts its own tmpfs. The zygote stays root here only to set up
    workers; it runs no student code."""
    libc = Libc()
    libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    libc.mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=755")
    for link in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged-/usr symlinks
        if os.path.islink(f"/{link}"):
            os.symlink(os.readlink(f"/{link}"), f"{root}/{link}")
    for dev in ("null", "zero", "random", "urandom", "full"):
        _bind(libc, root, f"/dev/{dev}", readonly=False)
    gpus = gpu_devices()
    for dev in gpus:  # a GPU, when the host has one (CUDA also reads /sys)
        _bind(libc, root, dev, readonly=False)
    if gpus:
        _bind(libc, root, "/sys")
    os.makedirs(f"{root}/proc")
    libc.mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    for writable in ("tmp", "student"):  # first: a venv under /tmp is bound on top of it
        os.makedirs(f"{root}/{writable}")
        libc.mount("tmpfs", f"{root}/{writable}", "tmpfs", MS_NOSUID | MS_NODEV,
                   "size=16m,mode=755")
    for path in _readonly_binds():
        _bind(libc, root, path)
    install_worker(Path(root + CONTAINER_WORKER_DIR))
    os.makedirs(f"{root}/.old")
    libc.pivot_root(root, f"{root}/.old")
    os.chdir("/")
    libc.umount2("/.old", MNT_DETACH)
    os.rmdir("/.old")
    libc.mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def install_worker(folder: Path) -> None:
    """Write the worker's code to ``folder`` (the grading image does this at build time for
    the ``container`` mode); everything else of the package can then be made root-only."""
    for name, data in worker_sources().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
