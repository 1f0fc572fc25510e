"""The base of both Docker runners, on the host: ``ContainerRunner`` grades each submission in
a fresh container (a job out, a result document back, checked against the zip's own points),
with ``Spares``, the containers started ahead of need, ``Removals``, the used ones removed
while the next submission is graded, and ``zip_points``, the points per question the answers
are checked against.

The host side only: it never imports torch and never runs a check.
"""

from __future__ import annotations

import abc
import base64
import contextlib
import dataclasses
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from ..container_protocol import ContainerError
from ..resultdoc import ResultDoc
from ..submissions import Submission, read_notebook_bytes, seed_of
from .base import Runner, Setup, WholeNotebooks
from .docker_engine import ContainerLimits, engine, remove_orphans
from .in_flight import Abandoned, InFlight, kill


def zip_points(zip_path: Path) -> dict[str, float]:
    """Points per question, as otter resolves them from the zip's test files (no torch: the
    test files import the harness only inside their test functions)."""
    import zipfile

    from otter.test_files import ExceptionTestFile

    totals: dict[str, float] = {}
    with zipfile.ZipFile(zip_path) as zf:
        for member in sorted(zf.namelist()):
            if member.startswith("tests/") and member.endswith(".py"):
                tf = ExceptionTestFile.from_string(zf.read(member).decode("utf-8"), member)
                totals[tf.name] = sum(float(tc.points or 0.0) for tc in tf.test_cases)
    return totals


class Spares:
    """Containers started ahead of need (up to ``most``, never more than the submissions
    announced with ``expect``): a submission does not wait for its container's start. A spare
    holds nothing of any submission until its job arrives. ``launch()`` makes one (a container
    and its handle); ``discard(spare)`` removes one that was never used. ``starters``: how
    many are started at once (a start that mostly waits on the engine, not the cores)."""

    def __init__(self, launch: Callable[[], Any], discard: Callable[[Any], None], most: int,
                 starters: int = 1):
        self.launch, self.discard, self.most = launch, discard, most
        self.spares: list = []
        self.closed = False
        self.pending = 0  # submissions announced (``expect``) and not yet given a container
        self.lock = threading.Lock()
        self.starter = ThreadPoolExecutor(max_workers=max(starters, 1)) if most else None
        self.starting: list[Future] = []  # the starter's tasks, in order

    def expect(self, count: int) -> None:
        """``count`` more submissions are coming: start spares for them (never more)."""
        with self.lock:
            self.pending += count
        if self.starter is not None:
            for _ in range(min(count, self.most)):
                self._start()

    def take(self):
        """A started container for one submission: a spare, else the one being started now
        (further on than any new one would be, and not competing with it for the cores),
        else a new one."""
        spare = self._ready()
        with self.lock:
            self.pending = max(self.pending - 1, 0)
        if self.starter is not None:
            self._start()
        return spare if spare is not None else self.launch()

    def _ready(self):
        with self.lock:
            if self.spares:
                return self.spares.pop()
            under_way = [task for task in self.starting if not task.done()]
        if not under_way:
            return None
        under_way[0].result()  # the starters take their tasks in order: this one is running
        with self.lock:
            return self.spares.pop() if self.spares else None

    def _start(self) -> None:
        try:
            task = self.starter.submit(self._add)
        except RuntimeError:  # closed
            return
        with self.lock:
            self.starting = [t for t in self.starting if not t.done()] + [task]

    def _wanted(self) -> bool:  # with ``self.lock`` held
        return not self.closed and len(self.spares) < min(self.most, self.pending)

    def _add(self) -> None:
        with self.lock:
            if not self._wanted():
                return
        try:
            spare = self.launch()
        except Exception:  # noqa: BLE001 - the next submission starts its own
            return
        with self.lock:
            if self._wanted():
                self.spares.append(spare)
                return
        self.discard(spare)

    def close(self) -> None:
        """Remove the containers started ahead of need (never given a job)."""
        with self.lock:
            self.closed = True
        if self.starter is not None:
            self.starter.shutdown(wait=True)
        with self.lock:
            spares, self.spares = self.spares, []
        for spare in spares:
            self.discard(spare)


class Removals:
    """Containers that held a submission, removed off the submissions' path: the next
    submission is graded while the engine removes this one's container (~0.2 s of round
    trips). At most ``most`` removals run at once; a submission that finds that many still
    going waits for one to end, so they never pile up. ``close`` waits for every one.
    ``then``: what ends after the container is gone, last of all the submission's uid lease
    (``uids.lease`` kills the uid's processes), so that no other submission gets the uid
    while anything of this one may still run as it."""

    def __init__(self, most: int):
        self.slots = threading.BoundedSemaphore(max(most, 1))
        self.pool = ThreadPoolExecutor(max_workers=max(most, 1))

    def remove(self, container, then: contextlib.ExitStack | None = None) -> None:
        self.slots.acquire()
        try:
            self.pool.submit(self._remove, container, then)
        except RuntimeError:  # closed: removed here and now
            self._remove(container, then)

    def _remove(self, container, then: contextlib.ExitStack | None) -> None:
        try:
            with then or contextlib.ExitStack():
                container.remove(force=True)
        except Exception:  # noqa: BLE001 - gone already (auto_remove); remove_orphans clears
            pass  # what an engine that went away kept, on the next run
        finally:
            self.slots.release()

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class ContainerRunner(Runner):
    """Grades each submission in a fresh container (``run``, a runner's own); the result
    document it answers is checked against the zip's own points before the batch writes it."""

    name = "docker"

    def __init__(self, setup: Setup, *, image: str, box: ContainerLimits | None, client,
                 spares: int, starters: int = 1):
        # API calls (create, start, copy) wait on an engine that is busy under load: the probe's
        # 10 s (resolve: is there an engine at all) is too short for them
        self.client = client or engine(timeout=120.0)
        if self.client is None:
            raise ContainerError("no Docker engine is reachable")
        self.assignment, self.seed, self.image = setup.assignment, setup.seed, image
        self.limits, self.box = setup.limits, box or ContainerLimits()
        self.zip_b64 = base64.b64encode(Path(setup.zip_path).read_bytes()).decode()
        self.questions = zip_points(setup.zip_path)
        self.in_flight = InFlight(kill)  # the containers ``close`` kills midway
        self.spares = Spares(self._launch, self._discard, spares, starters)
        self.removals = Removals(max(setup.jobs, starters))  # as many ending as starting
        remove_orphans(self.client)

    @abc.abstractmethod
    def _launch(self):
        """Create and start one container for a submission; return it with its handle."""

    def _release(self, handle) -> None:
        """Let go of the handle ``_launch`` returned with a container never given a job."""

    def _discard(self, spare) -> None:
        """Remove a container ``_launch`` made that was never given a job."""
        container, handle = spare
        try:
            self._release(handle)
            container.remove(force=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _take(self):
        """A started container for this thread's submission and its handle, held in
        ``in_flight`` until ``grade`` ends (``Abandoned`` once the runner is closed)."""
        spare = self.spares.take()
        try:
            self.in_flight.hold(spare[0])
        except Abandoned:
            self._discard(spare)
            raise
        return spare

    @abc.abstractmethod
    def run(self, sub: Submission, lease: contextlib.ExitStack) -> dict:
        """Grade ``sub`` in a fresh container (``_take``), its worker under a uid leased
        (``uids.lease``) for it; the result document the judge answered. ``lease``: ended when
        this returns, unless ``run`` takes it over (``lease.pop_all()``) to end it later."""

    def expect(self, count: int) -> None:
        self.spares.expect(count)

    def close(self) -> None:
        """Kill the containers of submissions still being graded (a second Ctrl-C abandoned
        them; at the batch's end there are none), remove the spares, and wait for the used
        containers' removals."""
        self.in_flight.stop()
        self.spares.close()
        self.removals.close()

    def points(self) -> dict[str, float]:
        return dict(self.questions)

    def grade(self, sub: Submission, questions: frozenset[str] | None = None) -> ResultDoc:
        if questions is not None:
            raise WholeNotebooks(self.name)
        try:
            with contextlib.ExitStack() as lease:
                return self.checked(self._run(sub, lease), sub.name)
        except Exception as exc:  # noqa: BLE001 - one broken container never stops the batch
            return ResultDoc.grader_error(sub.name, f"container: {exc}",
                                          assignment=self.assignment,
                                          seed=seed_of(sub, self.seed))

    def _run(self, sub: Submission, lease: contextlib.ExitStack) -> dict:
        """``run``; ``Abandoned`` instead of whatever came of a submission whose container
        ``close`` killed midway (an answer about a killed worker, a container gone)."""
        try:
            answer = self.run(sub, lease)
        except Exception:
            if self.in_flight.release() or not self.in_flight.stopped:
                raise
            raise Abandoned("the run was stopped while this submission was graded") from None
        if not self.in_flight.release():
            raise Abandoned("the run was stopped while this submission was graded")
        return answer

    def job_limits(self) -> dict:
        """The limits a job carries (``cuda``: the judge in the container decides, asking its
        own torch)."""
        return {k: v for k, v in dataclasses.asdict(self.limits).items()
                if k not in ("confinement", "join_pid", "join_pidfd", "cuda")}

    def job(self, sub: Submission, uid: int, **extra) -> bytes:
        return json.dumps({"name": sub.name, "assignment": self.assignment,
                           "seed": seed_of(sub, self.seed),
                           "uid": uid, "limits": self.job_limits(), "zip": self.zip_b64,
                           "require_cuda": self.box.gpus, **extra,
                           "notebook": base64.b64encode(read_notebook_bytes(sub.path)).decode()}
                          ).encode()

    def wall_limit(self) -> float:
        """Seconds after which a submission's container (or the judge's answer) is given up."""
        return self.limits.submission_timeout + self.box.margin

    def checked(self, answer: dict, name: str) -> ResultDoc:
        """The judge's document (``DocumentError`` if it is not one: an image of an older
        grader) with only known questions and points within the zip's (a judge that
        misbehaved cannot award more than the assignment is worth)."""
        doc = ResultDoc.from_dict(answer, "the judge's answer")
        clean = {}
        for q, v in doc.questions.items():
            if q in self.questions:
                possible = self.questions[q]
                points = min(max(float(v.points), 0.0), possible)
                clean[q] = dataclasses.replace(v, points=points, possible=possible)
        return dataclasses.replace(doc, file=name, questions=clean)
