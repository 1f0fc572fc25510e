"""This process's zygotes (``zygote.Zygote``), one per confinement mode, shared by every
worker the process asks for (threads share them; a zygote serialises their requests).

``shared(confinement)`` starts one on first use (or ``prestart`` before that, not waiting for
it) and again if it died; ``fork_here`` (the grading container's entry points) forks it from
this process instead, so that the container pays for one ``import torch``, not two. Every one
is stopped when the process exits.
"""

from __future__ import annotations

import atexit
import os
import socket
import tempfile
import threading

from . import sandbox
from .sandbox import SandboxError
from .zygote import Zygote

_SHARED: dict[str, Zygote] = {}
_SHARED_LOCK = threading.Lock()


def shared(confinement: str) -> Zygote:
    """This process's zygote for ``confinement``, started (again) when needed, once it is
    ready."""
    with _SHARED_LOCK:
        zygote = _SHARED.get(confinement)
        if zygote is None or not zygote.alive:
            if zygote is not None:
                zygote.close()
            zygote = _SHARED[confinement] = Zygote.start(confinement)
        try:
            zygote.handshake()
        except SandboxError:
            del _SHARED[confinement]
            raise
        return zygote


def prestart(confinement: str, rehearse: bool = True) -> None:
    """Start this process's zygote for ``confinement`` now, without waiting for it, so that
    its imports (torch, with ``rehearse`` the rehearsal: seconds) run beside the judge's own;
    ``shared`` then waits for it. A zygote that cannot start says why at ``shared``."""
    with _SHARED_LOCK:
        if confinement not in _SHARED:
            try:
                _SHARED[confinement] = Zygote.start(confinement, rehearse)
            except SandboxError:
                pass


def started(confinement: str) -> Zygote | None:
    """This process's zygote for ``confinement`` as it stands (maybe not ready, maybe
    exited), or ``None`` when none was started."""
    return _SHARED.get(confinement)


@atexit.register
def close_all() -> None:
    """Stop every zygote of this process and forget them (the next ``shared`` starts anew).
    Not under the lock: at exit, a thread may hold it while it waits for a zygote to start."""
    for zygote in list(_SHARED.values()):
        zygote.close()
    _SHARED.clear()


def fork_here(confinement: str = "container", rehearse: bool = False) -> Zygote:
    """Fork this process's zygote for ``confinement`` from this process (which must hold no
    secret yet and run no thread); stdin and stdout are closed in it, stderr kept for its
    errors. Torch's optimizer machinery (0.7 s) and the rehearsal only with ``rehearse``: with
    one notebook per process (the grading container), only a worker that builds an optimizer
    pays for it; a zygote that serves a whole run (the judge service, a pod) pays once."""
    from ...worker.zygote import serve_zygote, warm_up

    warm_up(rehearse=rehearse)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the zygote; covered by the Docker tests
        status = 0
        try:
            ours.close()
            null = os.open("/dev/null", os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            # the workers' environment, not the judge's (its TMPDIR is root-only)
            os.environ.clear()
            os.environ.update(sandbox.WORKER_ENV)
            tempfile.tempdir = None  # cached from the judge's TMPDIR by torch's import
            os.chdir("/")
            serve_zygote(theirs.detach(), confinement, warm=False)
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    theirs.close()
    zygote = Zygote(confinement, ours, pid)
    zygote.handshake()
    _SHARED[confinement] = zygote
    return zygote
