"""Ctrl-C during ``autograder grade``: stop cleanly, never with a traceback.

The first SIGINT stops the batch from starting anything new; the submissions being graded
finish (each within its own time limit) and their results are written, with
``final_grades.csv``, so ``--resume`` grades only the rest. A second SIGINT abandons those too:
their runners are closed (their workers and containers killed at once, so the grader exits in
seconds) and their results are not written. Neither ever raises ``KeyboardInterrupt`` into
the grader (which would print a traceback midway through writing a file); the batch polls
``Stop`` instead. Exit status 130, as for any command a SIGINT stopped.

Student code never sees the terminal's SIGINT: the sealed judge's zygote and every worker run
in sessions of their own, and containers are children of the engine.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

#: The exit status of a run that a SIGINT stopped (128 + SIGINT).
INTERRUPTED = 130


class Stop:
    """What the Ctrl-Cs so far ask: ``stopping`` (start nothing new) after the first,
    ``abandoned`` (write nothing more that is in flight) after the second."""

    def __init__(self, say: Callable[[str], None] = print):
        self.say = say
        self.presses = 0
        self.acted = 0  # presses the batch has acted on (``folder._react``)
        self.changed = threading.Event()  # set on each press: the batch's waits wake up

    @property
    def stopping(self) -> bool:
        return self.presses >= 1

    @property
    def abandoned(self) -> bool:
        return self.presses >= 2

    def press(self) -> None:
        """One SIGINT (the handler: sets state only; the batch's loop does the work)."""
        self.presses += 1
        self.changed.set()


@contextlib.contextmanager
def catching(stop: Stop) -> Iterator[Stop]:
    """SIGINT presses ``stop`` instead of raising, while the block runs (main thread only:
    elsewhere, e.g. a test's thread, Python lets no handler be set, and none is)."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = signal.signal(signal.SIGINT, lambda *_: stop.press())
    try:
        yield stop
    finally:
        # a press while the block ended (writing the CSV) is not lost: it still ends the run
        # with 130, and the default handler does not come back until this process exits
        if not stop.stopping:
            signal.signal(signal.SIGINT, previous)


def react(stop: Stop, plans: list, say: Callable[[str], None]) -> None:
    """Act on the Ctrl-Cs not acted on yet (``plans``: the batch's ``group.Group`` s): the
    first cancels what has not started, the second abandons what is in flight (its results
    not written; the batch then closes its runners, removing their containers)."""
    while stop.acted < stop.presses:
        stop.acted += 1
        running = sum(plan.running for plan in plans)
        if stop.acted == 1:
            for plan in plans:
                plan.cancel()
            say(f"stopping (Ctrl-C): nothing new starts; the {running} submission(s) being "
                "graded finish and are written (Ctrl-C again to abandon them)")
        elif stop.acted == 2:
            say(f"abandoning the {running} submission(s) being graded: their results are "
                "not written")


def interrupted(summary: dict, plans: list, display) -> int:
    """The end of a run a SIGINT stopped: what was written, in one line; exit status 130
    (with ``--json``, the summary too, with ``"interrupted"``)."""
    done = sum(len(plan.fresh) for plan in plans)
    asked = sum(len(plan.now) for plan in plans)
    summary["exit_status"] = INTERRUPTED
    summary["interrupted"] = {"graded_now": done, "left": asked - done}
    if display.machine:
        display.finish(summary)
    display.say(f"interrupted: {done} submission(s) graded and written (results and "
                f"final_grades.csv in {summary['out']}); run the same command with --resume "
                f"to grade the rest")
    return INTERRUPTED
