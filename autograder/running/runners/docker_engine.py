"""What both Docker runners share, on the host: the engine, the images, what confines a container
that holds student code, the spares started ahead of need, the base of both runners (a job out,
a checked ``ResultDoc`` back), and the cleanup of containers a killed grader left behind.

The host side only: it never imports torch and never runs a check. The runners are
``runners.docker.DockerRunner`` (``docker``, ``docker-gpu``: the judge inside each
submission's container) and ``runners.docker_fork.ForkRunner`` (``docker-fork``: one judge
container for the run).
"""

from __future__ import annotations

import abc
import base64
import dataclasses
import json
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..judge import uids
from ..results import MAX_DOCUMENT_BYTES
from ..resultdoc import ResultDoc
from .base import Runner, Setup, WholeNotebooks
from ..judge.sandbox import Limits
from ..submissions import Submission, read_notebook_bytes, seed_of

# AUTOGRADER_IMAGE names the image repository (a course's registry, or one checkout's own
# images beside another's on a shared engine); the variant is the tag.
IMAGE_REPOSITORY = os.environ.get("AUTOGRADER_IMAGE", "autograder-grader")
IMAGES = {"cpu": f"{IMAGE_REPOSITORY}:cpu", "cuda": f"{IMAGE_REPOSITORY}:cuda"}
# TEST-ONLY: "1" lets `--runner docker-gpu` grade in the CUDA image without a GPU (on the CPU,
# with no GPU requested), so tests can check that image on a machine that has none. Never set
# it for real grading: a GPU run must fail without a GPU, never fall back to the CPU.
CUDA_ON_CPU_VARIABLE = "AUTOGRADER_TEST_CUDA_ON_CPU"
RESULT_MARKER = "AUTOGRADER-RESULT-V1 "  # same as entry.container (which imports torch)
CAPABILITIES = ["SETUID", "SETGID", "SETPCAP", "KILL"]


class ContainerError(RuntimeError):
    """The container could not be run or gave no usable result (the grader's fault)."""


@dataclass(frozen=True)
class ContainerLimits:
    """What one grading container may use, on top of the worker's own ``Limits``.

    Attributes:
        memory: judge + worker (the worker's address space is capped at 4 GiB inside).
        pids: processes and threads in the container (torch starts a few per process).
        cpus: CPU share (``nano_cpus``); one per container matches one job per core.
        margin: seconds past the submission timeout before the container is killed: the
            judge enforces the submission timeout itself, this only catches a stuck judge.
        gpus: request every GPU (needs the NVIDIA container toolkit on the host).
    """

    memory: str = "6g"
    pids: int = 512
    cpus: float = 1.0
    margin: float = 180.0
    gpus: bool = False


def cuda_on_cpu() -> bool:
    """Whether the test-only ``AUTOGRADER_TEST_CUDA_ON_CPU=1`` is set (see above)."""
    return os.environ.get(CUDA_ON_CPU_VARIABLE) == "1"


def engine(timeout: float = 10.0):
    """A Docker client for a reachable engine (``DOCKER_HOST`` or the local socket), or None."""
    try:
        import docker

        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except Exception:  # noqa: BLE001 - no SDK, no socket, no permission: all mean "no engine"
        return None


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


def box_config(limits: Limits, box: ContainerLimits) -> dict:
    """What every container that holds student code gets: no network, a read-only root,
    private IPC, the memory, process and CPU limits, every capability dropped,
    ``no-new-privileges``, and tmpfs ``/tmp`` and ``/student`` (the worker's cwd)."""
    return dict(
        network_mode="none", read_only=True, ipc_mode="private",
        mem_limit=box.memory, memswap_limit=box.memory, pids_limit=box.pids,
        nano_cpus=int(box.cpus * 1e9), cap_drop=["ALL"], security_opt=["no-new-privileges"],
        tmpfs={"/tmp": f"size={limits.tmp_bytes},mode=1777",
               "/student": f"size={limits.tmp_bytes},mode=1777"})


class Spares:
    """Containers started ahead of need (up to ``most``, never more than the submissions
    announced with ``expect``): a submission does not wait for its container's start. A spare
    holds nothing of any submission until its job arrives. ``launch()`` makes one (a container
    and its handle); ``discard(spare)`` removes one that was never used."""

    def __init__(self, launch: Callable[[], Any], discard: Callable[[Any], None], most: int):
        self.launch, self.discard, self.most = launch, discard, most
        self.spares: list = []
        self.closed = False
        self.pending = 0  # submissions announced (``expect``) and not yet given a container
        self.lock = threading.Lock()
        self.starter = ThreadPoolExecutor(max_workers=1) if most else None

    def expect(self, count: int) -> None:
        """``count`` more submissions are coming: start spares for them (never more)."""
        with self.lock:
            self.pending += count
        if self.starter is not None:
            for _ in range(min(count, self.most)):
                self.starter.submit(self._add)

    def take(self):
        """A started container for one submission (a spare, else a new one)."""
        with self.lock:
            spare = self.spares.pop() if self.spares else None
            self.pending = max(self.pending - 1, 0)
        if self.starter is not None:
            self.starter.submit(self._add)
        return spare if spare is not None else self.launch()

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


class ContainerRunner(Runner):
    """Grades each submission in a fresh container (``run``, a runner's own); the result
    document it answers is checked against the zip's own points before the batch writes it."""

    name = "docker"

    def __init__(self, setup: Setup, *, image: str, box: ContainerLimits | None, client,
                 spares: int):
        self.client = client or engine()
        if self.client is None:
            raise ContainerError("no Docker engine is reachable")
        self.assignment, self.seed, self.image = setup.assignment, setup.seed, image
        self.limits, self.box = setup.limits, box or ContainerLimits()
        self.zip_b64 = base64.b64encode(Path(setup.zip_path).read_bytes()).decode()
        self.questions = zip_points(setup.zip_path)
        self.spares = Spares(self._launch, self._discard, spares)
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

    @abc.abstractmethod
    def run(self, sub: Submission, uid: int) -> dict:
        """Grade ``sub`` in a fresh container; the result document the judge answered."""

    def expect(self, count: int) -> None:
        self.spares.expect(count)

    def close(self) -> None:
        self.spares.close()

    def points(self) -> dict[str, float]:
        return dict(self.questions)

    def grade(self, sub: Submission, questions: frozenset[str] | None = None) -> ResultDoc:
        if questions is not None:
            raise WholeNotebooks(self.name)
        try:
            # A host-wide uid, not a fixed one: without user namespaces a container's uid is the
            # host's, so two workers sharing one would share its process limit, and the local
            # sealed runner's cleanup of that uid (kill -1 as it) would kill them.
            with uids.lease() as uid:
                return self.checked(self.run(sub, uid), sub.name)
        except Exception as exc:  # noqa: BLE001 - one broken container never stops the batch
            return ResultDoc.grader_error(sub.name, f"container: {exc}",
                                          assignment=self.assignment,
                                          seed=seed_of(sub, self.seed))

    def job(self, sub: Submission, uid: int, **extra) -> bytes:
        limits = {k: v for k, v in dataclasses.asdict(self.limits).items()
                  if k not in ("confinement", "join_pid", "join_pidfd")}
        return json.dumps({"name": sub.name, "assignment": self.assignment,
                           "seed": seed_of(sub, self.seed),
                           "uid": uid, "limits": limits, "zip": self.zip_b64,
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
                points = min(max(float(v["points"]), 0.0), possible)
                clean[q] = {**v, "points": points, "possible": possible}
        return dataclasses.replace(doc, file=name, questions=clean)


OWNER_LABEL = "autograder-owner"


def owner_label() -> dict[str, str]:
    """Which grader made a container: this host and this process."""
    return {OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"}


def remove_orphans(client) -> list[str]:
    """Remove the containers left by graders of this host that are no longer running (killed
    before they could clean up: a spare waiting for a job, a submission's ``sleep``, a judge
    container). Containers of running graders, of other hosts, or not ours are left alone.
    Returns the ids removed."""
    host = socket.gethostname()
    removed = []
    try:
        found = client.containers.list(all=True, filters={"label": OWNER_LABEL})
    except Exception:  # noqa: BLE001 - an engine that cannot list: nothing to clean
        return removed
    for container in found:
        owner_host, _, pid = container.labels.get(OWNER_LABEL, "").rpartition(":")
        if owner_host != host or not pid.isdigit() or _running(int(pid)):
            continue
        try:
            container.remove(force=True)
            removed.append(container.id)
        except Exception:  # noqa: BLE001 - removed meanwhile (auto_remove)
            pass
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # PermissionError: it runs, as another user
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


#: The most of a container's output (or the judge's answer) the host reads: the result
#: document is capped at 1 MiB in the container (results.capped); anything past this is cut
#: and the document then fails to parse, as a grader error, never a grader out of memory.
MAX_ANSWER_BYTES = 4 * MAX_DOCUMENT_BYTES


def parse_answer(stdout: str, stderr: str) -> dict:
    """The result document after ``RESULT_MARKER`` in a judge's output (a JSON object), else
    ``ContainerError`` with the last line of ``stderr``."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            doc = json.loads(line[len(RESULT_MARKER):])
            if isinstance(doc, dict):
                return doc
    tail = (stderr.strip().splitlines() or ["no output"])[-1][:500]
    raise ContainerError(f"the judge printed no result ({tail})")


def has_image(client, image: str) -> bool:
    try:
        client.images.get(image)
        return True
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound, or the engine went away
        return False


def gpu_problem(client, image: str) -> str | None:
    """Why this engine cannot give ``image``'s containers a GPU (no NVIDIA container toolkit:
    "could not select device driver"), or None; found by starting a throwaway container."""
    import docker

    request = docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])
    probe = client.containers.create(image, entrypoint=["true"], device_requests=[request],
                                     network_mode="none")
    try:
        probe.start()
        probe.wait(timeout=60)
        return None
    except docker.errors.DockerException as exc:
        return (f"the engine cannot give containers a GPU (is the NVIDIA container toolkit "
                f"installed and the engine restarted?): {exc}")
    finally:
        probe.remove(force=True)
