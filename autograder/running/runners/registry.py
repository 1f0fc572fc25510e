"""Every runner the command line accepts, by name: the only place a runner's name is compared.

``RUNNERS`` maps a name to a ``RunnerKind``: how to make it (imported on use: the sealed
runner's modules are never loaded by a Docker run and the other way round), what it can do
(grade one question alone, ``--question``), what it needs (root, a GPU's limits) and a line
for ``--help``. ``auto`` is no runner: ``resolve`` picks one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from ..judge.sandbox import gpu_devices
from ..limits import Limits, with_gpu
from .base import Runner, Setup

AUTO = "auto"


@dataclass(frozen=True)
class RunnerKind:
    """One runner the command line accepts.

    Attributes:
        name: its ``--runner`` name.
        help: one sentence for ``--help``.
        make: the runner for one assignment.
        partial: it grades one question alone (``--question``).
        needs_root: it confines workers itself (namespaces, ``setuid``): root only.
        gpu: whether the worker's limits must leave room for CUDA (``with_gpu``).
        engine: it grades in Docker containers (``resolve`` checks the engine and image).
        command_line: ``--runner`` offers it (``pod`` is only run by the image's ``entry.pod``,
            inside its own container).
    """

    name: str
    help: str
    make: Callable[[Setup], Runner]
    partial: bool = False
    needs_root: bool = False
    gpu: Callable[[], bool] = lambda: False
    engine: bool = False
    command_line: bool = True

    def problem(self, question: str | None) -> str | None:
        """Why this runner cannot run here with these options (one line), or ``None``."""
        if question is not None and not self.partial:
            return f"--question needs the sealed runner ({self.name} runs whole notebooks)"
        if self.needs_root and os.geteuid() != 0:
            return ("the sealed runner confines each notebook with Linux namespaces and an "
                    "unprivileged uid, which needs root: run `sudo make grade`, or grade "
                    "trusted work with --runner otter")
        return None

    def default_jobs(self) -> int:
        """Submissions at once when ``--jobs`` is not given: one per CPU, and on a GPU no
        more than the first GPU's memory holds (``cuda_host.gpu_jobs``)."""
        cpus = os.cpu_count() or 1
        if not self.gpu():
            return cpus
        from . import cuda_host

        try:
            return cuda_host.gpu_jobs(cuda_host.host_gpus(), cpus)
        except cuda_host.CudaHostError:  # no nvidia-smi here (the docker-gpu test double)
            return cpus

    def limits(self, limits: Limits) -> Limits:
        """``limits`` as this runner applies them (no address-space cap under CUDA)."""
        return with_gpu(limits) if self.gpu() else limits


def _sealed(setup: Setup) -> Runner:
    from ..judge import zygotes

    # its imports run beside the judge's own (none where no notebook will run); the rehearsal
    # pays for itself from the second worker on (one notebook's worker pays torch's optimizer
    # imports only if it builds one)
    if setup.batch != 0:
        zygotes.prestart(setup.limits.confinement, rehearse=setup.batch != 1)
    from .sealed import SealedRunner

    return SealedRunner(setup)


def _otter(setup: Setup) -> Runner:
    from .otter import OtterRunner

    return OtterRunner(setup)


def _pod(setup: Setup) -> Runner:
    from .pod import PodRunner

    return PodRunner(setup)


def _docker(gpu: bool) -> Callable[[Setup], Runner]:
    def make(setup: Setup) -> Runner:
        from .docker import DockerRunner
        from .docker_engine import IMAGES, ContainerLimits, cuda_on_cpu

        # containers started ahead of need use cores the running ones do not: with a job per
        # core (the default) they only compete (measured: 28.6 s without, 30.8 s with, for
        # 20 notebooks on 2 cores)
        spares = min(setup.jobs, max(0, (os.cpu_count() or 1) - setup.jobs))
        return DockerRunner(setup, image=IMAGES["cuda" if gpu else "cpu"],
                            box=ContainerLimits(gpus=gpu and not cuda_on_cpu()), spares=spares)
    return make


def _docker_fork(setup: Setup) -> Runner:
    from .docker_fork import ForkRunner

    # a submission's container is cheap to start (no torch in it) but slow: its start waits
    # on the engine (0.3-0.6 s, ~70 ms of the engine's CPU), longer than grading a short
    # notebook takes, so two per job are started at once while the submissions are graded
    return ForkRunner(setup, spares=2 * setup.jobs)


RUNNERS: dict[str, RunnerKind] = {kind.name: kind for kind in (
    RunnerKind("docker-fork", "a fresh container of the grading image per submission, its "
               "workers forked from one judge container", _docker_fork, engine=True),
    RunnerKind("docker", "one container per submission with the judge inside",
               _docker(gpu=False), engine=True),
    RunnerKind("docker-gpu", "the CUDA image with every GPU (an error without the NVIDIA "
               "container toolkit)", _docker(gpu=True), gpu=lambda: True, engine=True),
    RunnerKind("sealed", "the judge here, student code in a local confined worker (root)",
               _sealed, partial=True, needs_root=True, gpu=lambda: bool(gpu_devices())),
    RunnerKind("otter", "stock `otter run`, tests in the student's kernel (trusted work; "
               "--submission-timeout bounds each notebook's run)", _otter),
    RunnerKind("pod", "inside the grading image's own container, a pod or batch job (its "
               "entry point, entry.pod, runs it)", _pod, partial=True, needs_root=True,
               gpu=lambda: bool(gpu_devices()), command_line=False),
)}
#: What ``--runner`` accepts.
CHOICES = (AUTO, *(name for name, kind in RUNNERS.items() if kind.command_line))


def help_text() -> str:
    return "; ".join([f"{AUTO} (default): docker-fork when an engine is reachable and runs it, "
                      "docker when it refuses, else sealed"]
                     + [f"{k.name}: {k.help}" for k in RUNNERS.values() if k.command_line])


def option_problem(name: str, question: str | None) -> str | None:
    """What the command line can tell is wrong before anything starts (``auto`` is judged once
    resolved)."""
    kind = RUNNERS.get(name)
    if kind is not None and question is not None and not kind.partial:
        return kind.problem(question)
    return None


def resolve(requested: str, question: str | None = None) -> tuple[RunnerKind | None, str]:
    """The runner to grade with, and a line saying why, for staff; ``None`` and the error
    line when the requested one cannot run (never a silent fallback, and never a CPU run for
    a GPU request).

    ``auto`` with ``question`` (``--question``) is the sealed runner, the only one that grades
    one question alone. An image built from other sources than this checkout
    (``image_inputs.stale``) is refused, whichever runner was asked for: it would grade with
    the old checks.

    ``auto`` -> ``docker-fork`` when an engine is reachable, the CPU image is built and the
    engine runs the judge container (started here, kept for the run), else ``docker`` when the
    first two hold, else ``sealed``.
    """
    kind = RUNNERS.get(requested)
    if kind is not None and not kind.engine:
        return kind, ""
    if kind is None and requested == AUTO and question is not None:
        # only the sealed runner grades one question alone: `auto` picks it for --question
        # (root; its own problem() says so otherwise) before any container is started
        return RUNNERS["sealed"], (f"--question {question}: grading with the local sealed "
                                   "runner (the container runners grade whole notebooks)")
    if kind is None and requested != AUTO:
        return None, f"error: --runner {requested}: no such runner ({', '.join(CHOICES)})"
    from . import docker_engine, image_inputs

    gpu = kind is not None and kind.gpu()
    image = docker_engine.IMAGES["cuda" if gpu else "cpu"]
    client = docker_engine.engine()
    why = None
    if client is None:
        why = "no Docker engine is reachable"
    elif missing := docker_engine.image_problem(client, image):
        why = missing + (f" (run `make image{'-gpu' if gpu else ''}`)"
                         if missing.endswith("not built") else "")
    elif stale := image_inputs.stale(client, image, "cuda" if gpu else "cpu"):
        return None, f"error: {stale}"  # never graded with old checks, nor another runner
    elif gpu and docker_engine.cuda_on_cpu():
        return kind, (f"grading in containers of {image} ON THE CPU: "
                      f"{docker_engine.CUDA_ON_CPU_VARIABLE}=1 is set (for tests only)")
    elif gpu:
        why = docker_engine.cuda_problem(client, image) or docker_engine.gpu_problem(client,
                                                                                     image)
    elif kind is None or kind is RUNNERS["docker-fork"]:
        from .docker_fork import JudgeContainer

        try:
            JudgeContainer.shared(client, image)
            return RUNNERS["docker-fork"], (f"grading in containers of {image}: one judge "
                                            f"container, a fresh container per submission")
        except Exception as exc:  # noqa: BLE001 - ContainerError, or the engine's own error
            why = str(exc)
        if kind is None:
            return RUNNERS["docker"], (f"note: {why}: grading with the judge inside each "
                                       f"submission's container instead (slower)")
    if why is None:
        return kind, f"grading in containers of {image}"
    if kind is not None:
        return None, f"error: --runner {requested}: {why}"
    return RUNNERS["sealed"], (f"note: {why}: grading with the local sealed runner instead "
                               f"(needs root)")
