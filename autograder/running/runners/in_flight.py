"""The containers of the submissions a container runner is grading now (``InFlight``), so that
closing the runner (a second Ctrl-C: ``batch.interrupt``) stops them at once, as the sealed
runner's ``judge.core.abandon`` stops its workers.

The host side only: it never imports torch and never runs a check.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ..container_protocol import ContainerError


def kill(container) -> None:
    """Kill a container holding a submission (its own thread removes it)."""
    try:
        container.kill()
    except Exception:  # noqa: BLE001 - ended already, or removed (auto_remove)
        pass


class Abandoned(ContainerError):
    """The runner was closed while this submission was being graded (a second Ctrl-C:
    ``batch.interrupt``): its container is gone and nobody writes its result."""


class InFlight:
    """The containers holding a submission now, one per grading thread (``hold`` takes one,
    ``release`` lets the thread's go). ``stop`` kills them all at once and refuses any taken
    later: the workers in them die with them, the threads waiting on the judge's answer get
    it at once (a grader error nobody writes), and the grader exits in seconds, never after
    the slowest notebook in flight (``kill(container)`` kills one)."""

    def __init__(self, kill: Callable[[Any], None]):
        self.kill = kill
        self.held: dict[int, Any] = {}  # thread ident -> its container
        self.stopped = False
        self.lock = threading.Lock()

    def hold(self, container) -> None:
        """``container`` holds this thread's submission (``Abandoned`` once stopped)."""
        with self.lock:
            if self.stopped:
                raise Abandoned("the run was stopped before this submission's container "
                                "was used")
            self.held[threading.get_ident()] = container

    def release(self) -> bool:
        """This thread's container is done with; False when ``stop`` killed it first."""
        with self.lock:
            return self.held.pop(threading.get_ident(), None) is not None

    def stop(self) -> int:
        """Kill every container held now; returns how many."""
        with self.lock:
            self.stopped = True
            held, self.held = list(self.held.values()), {}
        for container in held:
            self.kill(container)
        return len(held)
