"""The Docker runner: one container of the grading image per submission.

The host side only: it never imports torch and never runs a check. Each container gets the
notebook, the autograder zip, the seed and the limits as one JSON job on stdin; inside, the
trusted judge (``container_entry``) grades it with the notebook's code in a worker under an
unprivileged uid; the result document comes back as one JSON line on stdout, never a pickle,
and is checked against the zip's own points before it is written.

Containers run with no network, a read-only root, tmpfs for the writable paths, memory, process
and CPU limits, ``no-new-privileges`` and every capability dropped except the four the judge
needs to hand the notebook to the student uid:

- ``SETUID``, ``SETGID``: ``setgroups``/``setgid``/``setuid`` to uid 61000 before the worker
  runs (which also clears every capability in the worker);
- ``SETPCAP``: the worker empties its capability bounding set before that (without it the
  set keeps the container's capabilities, and the worker refuses to run student code);
- ``KILL``: the judge (root) kills the worker, a process of another uid, on a timeout.
"""

from __future__ import annotations

import atexit
import base64
import dataclasses
import json
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import uids
from .results import MAX_DOCUMENT_BYTES, Graded, graded, write_document
from .sandbox import Limits
from .submissions import Submission, read_notebook_bytes, seed_of

# AUTOGRADER_IMAGE names the image repository (a course's registry, or one checkout's own
# images beside another's on a shared engine); the variant is the tag.
IMAGE_REPOSITORY = os.environ.get("AUTOGRADER_IMAGE", "autograder-grader")
IMAGES = {"cpu": f"{IMAGE_REPOSITORY}:cpu", "cuda": f"{IMAGE_REPOSITORY}:cuda"}
# TEST-ONLY: "1" lets `--runner docker-gpu` grade in the CUDA image without a GPU (on the CPU,
# with no GPU requested), so tests can check that image on a machine that has none. Never set
# it for real grading: a GPU run must fail without a GPU, never fall back to the CPU.
CUDA_ON_CPU_VARIABLE = "AUTOGRADER_TEST_CUDA_ON_CPU"
RESULT_MARKER = "AUTOGRADER-RESULT-V1 "  # same as container_entry (which imports torch)
CAPABILITIES = ["SETUID", "SETGID", "SETPCAP", "KILL"]
ENTRY = ["/opt/autograder-env/bin/python", "-m", "autograder.running.container_entry"]


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


def host_config(limits: Limits, box: ContainerLimits) -> dict:
    """The ``containers.create`` arguments that confine one grading container (``docker``):
    ``box_config``, with the judge inside as root with three capabilities back."""
    import docker

    config = box_config(limits, box)
    config["tmpfs"]["/judge"] = "size=256m,mode=0700"  # the judge's scratch: zip, notebook
    config.update(
        user="0", cap_add=CAPABILITIES,
        # one intra-op thread: the container has one CPU, more threads only get throttled
        environment={"TMPDIR": "/judge", "HOME": "/judge", "OMP_NUM_THREADS": "1"},
    )
    if box.gpus:
        config["device_requests"] = [docker.types.DeviceRequest(count=-1,
                                                                capabilities=[["gpu"]])]
    return config


class DockerRunner:
    """Grades each submission in its own container; same interface as ``SealedRunner``.

    Containers are started ahead of need (``spares``, up to one per job): a started container
    imports torch and forks its worker zygote while it waits for its job, so a submission
    does not wait for that. A spare holds nothing of any submission until its job arrives.
    ``close()`` removes the spares left at the end of the batch.
    """

    def __init__(self, zip_path: Path, assignment: str, seed: int, results: Path,
                 limits: Limits | None = None, *, image: str = IMAGES["cpu"],
                 box: ContainerLimits | None = None, client=None, spares: int = 0):
        self.client = client or engine()
        if self.client is None:
            raise ContainerError("no Docker engine is reachable")
        self.assignment, self.seed, self.results, self.image = assignment, seed, results, image
        self.limits, self.box = limits or Limits(), box or ContainerLimits()
        self.zip_b64 = base64.b64encode(Path(zip_path).read_bytes()).decode()
        self.questions = zip_points(zip_path)
        self.max_spares, self.spares, self.closed = spares, [], False
        self.pending = 0  # submissions announced (``expect``) and not yet given a container
        self.lock = threading.Lock()
        self.starter = ThreadPoolExecutor(max_workers=1) if spares else None
        results.mkdir(parents=True, exist_ok=True)
        remove_orphans(self.client)

    def _launch(self):
        """Create and start one container waiting for its job; return it with its stdin."""
        container = self.client.containers.create(
            # detach=False with stdin_open sets StdinOnce: closing our stdin is EOF inside
            self.image, ENTRY, stdin_open=True, detach=False,
            labels={"autograder": self.assignment, **owner_label()},
            **host_config(self.limits, self.box))
        try:
            stream = self.client.api.attach_socket(container.id,
                                                   params={"stdin": 1, "stream": 1})
            container.start()
        except BaseException:
            container.remove(force=True)
            raise
        return container, stream

    def expect(self, count: int) -> None:
        """``count`` more submissions are coming: start spares for them (never more)."""
        with self.lock:
            self.pending += count
        if self.starter is not None:
            for _ in range(min(count, self.max_spares)):
                self.starter.submit(self._add_spare)

    def _take(self):
        with self.lock:
            spare = self.spares.pop() if self.spares else None
            self.pending = max(self.pending - 1, 0)
        if self.starter is not None:
            self.starter.submit(self._add_spare)
        return spare if spare is not None else self._launch()

    def _wanted(self) -> bool:  # with ``self.lock`` held
        return (not self.closed and len(self.spares) < self.max_spares
                and len(self.spares) < self.pending)

    def _add_spare(self) -> None:
        with self.lock:
            if not self._wanted():
                return
        try:
            spare = self._launch()
        except Exception:  # noqa: BLE001 - the next submission starts its own
            return
        with self.lock:
            if self._wanted():
                self.spares.append(spare)
                return
        _discard(spare)

    def close(self) -> None:
        """Remove the containers started ahead of need (never given a job)."""
        with self.lock:
            self.closed = True
        if self.starter is not None:
            self.starter.shutdown(wait=True)
        with self.lock:
            spares, self.spares = self.spares, []
        for spare in spares:
            _discard(spare)

    def points(self) -> dict[str, float]:
        return dict(self.questions)

    def __call__(self, sub: Submission) -> Graded:
        try:
            # A host-wide uid, not a fixed one: without user namespaces a container's uid is the
            # host's, so two workers sharing one would share its process limit, and the local
            # sealed runner's cleanup of that uid (kill -1 as it) would kill them.
            with uids.lease() as uid:
                doc = self.checked(self.run(sub, uid), sub.name)
        except Exception as exc:  # noqa: BLE001 - one broken container never stops the batch
            doc = {"file": sub.name, "assignment": self.assignment, "seed": seed_of(sub, self.seed),
                   "status": "grader-error", "error": f"container: {exc}", "questions": {}}
        write_document(self.results, doc)
        return graded(doc)

    def job(self, sub: Submission, uid: int, **extra) -> bytes:
        limits = {k: v for k, v in dataclasses.asdict(self.limits).items()
                  if k not in ("confinement", "join_pid", "join_pidfd")}
        return json.dumps({"name": sub.name, "assignment": self.assignment,
                           "seed": seed_of(sub, self.seed),
                           "uid": uid, "limits": limits, "zip": self.zip_b64,
                           "require_cuda": self.box.gpus, **extra,
                           "notebook": base64.b64encode(read_notebook_bytes(sub.path)).decode()}
                          ).encode()

    def run(self, sub: Submission, uid: int) -> dict:
        """Run one container to the end; return the result document it printed."""
        container, stream = self._take()
        try:
            _send(stream, self.job(sub, uid))
            self._wait(container)
            out = _bounded(container.logs(stdout=True, stderr=False, stream=True))
            err = _bounded(container.logs(stdout=False, stderr=True, stream=True))
        finally:
            container.remove(force=True)
        return _parse(out, err)

    def wall_limit(self) -> float:
        """Seconds after which a submission's container (or the judge's answer) is given up."""
        return self.limits.submission_timeout + self.box.margin

    def _wait(self, container) -> None:
        limit = self.wall_limit()
        try:
            container.wait(timeout=limit)
        except Exception as exc:  # requests' ReadTimeout/ConnectionError: the judge is stuck
            container.kill()
            raise ContainerError(f"the container did not finish within {limit:g} s") from exc

    def checked(self, doc: dict, name: str) -> dict:
        """The container's document with only known questions and points within the zip's
        (a judge that misbehaved cannot award more than the assignment is worth)."""
        doc = {**doc, "file": name}
        questions = doc.get("questions") if isinstance(doc.get("questions"), dict) else {}
        clean = {}
        for q, v in questions.items():
            if q in self.questions and isinstance(v, dict):
                possible = self.questions[q]
                points = min(max(float(v.get("points", 0.0)), 0.0), possible)
                clean[q] = {**v, "points": points, "possible": possible}
        doc["questions"] = clean
        doc["status"] = str(doc.get("status", "grader-error"))
        return doc


class ForkRunner(DockerRunner):
    """``docker-fork``: still a fresh container per submission, but one that only ever holds
    that student's worker. One judge container (``JudgeService``) imports torch once for the
    whole run and forks each worker into the submission's container (its cgroups and
    namespaces), so a submission costs a container's start and stop, not an ``import torch``.

    The submission's container runs ``sleep`` as nobody: no network, read-only root, tmpfs
    ``/tmp`` and ``/student``, the memory, process and CPU limits of ``ContainerLimits``, no
    capability at all. The hidden tests, the zip and the seed stay in the judge container.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.box.gpus:
            raise ContainerError("docker-fork grades on the CPU image: use --runner docker-gpu")
        self.service = JudgeService.shared(self.client, self.image, self.max_spares)
        self.image = self.service.image_id  # the same files as the judge's zygote

    def _launch(self):
        """Create and start one empty container for a submission; return it with its pid."""
        container = self.client.containers.create(
            self.image, ["sleep", str(int(SLEEP_SECONDS))], entrypoint=[],
            labels={"autograder": self.assignment, "autograder-role": "submission",
                    **owner_label()},
            **submission_config(self.limits, self.box))
        try:
            container.start()
            pid = int(self.client.api.inspect_container(container.id)["State"]["Pid"])
            if pid <= 0:
                raise ContainerError("the submission's container stopped at once")
        except BaseException:
            container.remove(force=True)
            raise
        return container, pid

    def run(self, sub: Submission, uid: int) -> dict:
        """Grade in a fresh container; if the judge container itself is gone (killed, out of
        memory), start another and grade the submission once more, in another fresh
        container: nothing of the batch is lost with it."""
        try:
            return self._run_once(sub, uid)
        except ContainerError:
            if self.service.alive():
                raise
        self.service = JudgeService.shared(self.client, self.image, self.max_spares)
        return self._run_once(sub, uid)

    def _run_once(self, sub: Submission, uid: int) -> dict:
        container, pid = self._take()
        try:
            return self.service.grade(self.job(sub, uid, join_pid=pid,
                                               join_container=container.id),
                                      self.wall_limit())
        finally:
            container.remove(force=True)


SLEEP_SECONDS = 4 * 3600  # a submission's container ends by itself if the host never removes it
SERVICE_SOCKET = "/run/autograder-judge/judge.sock"
SERVICE = ["/opt/autograder-env/bin/python", "-m", "autograder.running.judge_service",
           SERVICE_SOCKET]
# what moving a process into another container takes (setns, /proc/PID/ns of another uid's
# process, entering its root), plus the judge's own SETUID/SETGID/SETPCAP/KILL
SERVICE_CAPABILITIES = ["SYS_ADMIN", "SYS_PTRACE", "SYS_CHROOT", *CAPABILITIES]
# The judge container's memory limit (MiB), so that a judge bug costs the jobs it holds, never
# the host: torch, otter, the checks and the zygote (a judge's peak is ~310 MB), then per job
# in flight the worst reply it may parse and decode (~300 MB under worker_client's caps and
# wire.Budget, docs/decoding-budgets.md) and the notebook and zip on its /judge tmpfs.
JUDGE_MEMORY_BASE_MB = 1024
JUDGE_MEMORY_PER_JOB_MB = 768


def judge_memory(jobs: int) -> str:
    """The judge container's ``mem_limit`` for ``jobs`` submissions graded at once."""
    return f"{JUDGE_MEMORY_BASE_MB + JUDGE_MEMORY_PER_JOB_MB * max(jobs, 1)}m"


def submission_config(limits: Limits, box: ContainerLimits) -> dict:
    """The ``containers.create`` arguments of a ``docker-fork`` submission's container:
    ``box_config``, its ``sleep`` as nobody, removed when it stops."""
    return {**box_config(limits, box), "user": "65534:65534", "auto_remove": True}


class JudgeService:
    """The ``docker-fork`` judge container (``judge_service``) and the host's way to it: a
    Unix socket in a folder of this process's own, bound into the container. One per engine
    and image in a process (``shared``), shared by every assignment of a run; it ends when
    this process does (the lifeline connection closes)."""

    START_TIMEOUT = 180.0

    def __init__(self, client, image: str, jobs: int = 1):
        import tempfile
        import time

        import docker

        self.client, self.jobs = client, jobs
        self.image_id = client.images.get(image).id
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-judge-"))  # 0700: ours only
        exposed = self.folder / "socket"
        exposed.mkdir()
        exposed.chmod(0o777)  # the container's root may have no DAC_OVERRIDE
        self.path = exposed / Path(SERVICE_SOCKET).name
        self.container = client.containers.create(
            self.image_id, SERVICE, entrypoint=[],
            labels={"autograder-role": "judge", **owner_label()},
            network_mode="none", pid_mode="host", cgroupns="host", read_only=True,
            mem_limit=judge_memory(jobs), memswap_limit=judge_memory(jobs),
            cap_drop=["ALL"], cap_add=SERVICE_CAPABILITIES,
            volumes={"/sys/fs/cgroup": {"bind": "/sys/fs/cgroup", "mode": "rw"},
                     str(exposed): {"bind": str(Path(SERVICE_SOCKET).parent), "mode": "rw"}},
            tmpfs={"/judge": "size=1g,mode=0700", "/tmp": "size=64m,mode=1777"},
            environment={"TMPDIR": "/judge", "HOME": "/judge", "OMP_NUM_THREADS": "1"},
            auto_remove=True)
        try:
            try:
                self.container.start()
            except docker.errors.DockerException as exc:
                raise ContainerError(
                    f"the engine refused the judge container (docker-fork needs "
                    f"{', '.join(SERVICE_CAPABILITIES[:3])}, the host's pid namespace and "
                    f"its cgroup tree): {exc}") from exc
            end = time.monotonic() + self.START_TIMEOUT
            while not self.path.exists():
                self.container.reload()
                if self.container.status not in ("created", "running"):
                    raise ContainerError(f"the judge container stopped: {self._logs()}")
                if time.monotonic() > end:
                    raise ContainerError(f"the judge container did not start within "
                                         f"{self.START_TIMEOUT:g} s: {self._logs()}")
                time.sleep(0.05)
            self.lifeline = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.lifeline.connect(str(self.path))
        except BaseException:
            self.close()
            raise

    def _logs(self) -> str:
        try:
            text = self.container.logs().decode("utf-8", "replace").strip()
        except Exception:  # noqa: BLE001 - removed already (auto_remove)
            return "no output"
        return (text.splitlines() or ["no output"])[-1][:500]

    def grade(self, job: bytes, timeout: float) -> dict:
        """Send one job, return its result document."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            try:
                conn.connect(str(self.path))
                conn.sendall(job)
                conn.shutdown(socket.SHUT_WR)
                chunks, size = [], 0
                while (chunk := conn.recv(1 << 20)) and size <= MAX_ANSWER_BYTES:
                    chunks.append(chunk)
                    size += len(chunk)
            except socket.timeout as exc:
                raise ContainerError(f"the judge gave no result within {timeout:g} s") from exc
            except OSError as exc:
                raise ContainerError(f"the judge container is gone: {exc}") from exc
        return _parse(b"".join(chunks).decode("utf-8", "replace"), "the judge closed the job")

    def close(self) -> None:
        import shutil

        lifeline = getattr(self, "lifeline", None)
        if lifeline is not None:
            lifeline.close()
        try:
            self.container.remove(force=True)
        except Exception:  # noqa: BLE001 - gone already (auto_remove)
            pass
        shutil.rmtree(self.folder, ignore_errors=True)

    _shared: dict = {}
    _lock = threading.Lock()

    @classmethod
    def shared(cls, client, image: str, jobs: int = 1) -> "JudgeService":
        """This process's judge container for ``image`` (started on first use, and again if
        it stopped), its memory sized for ``jobs`` at once (on first use)."""
        key = (client.api.base_url, client.images.get(image).id)
        with cls._lock:
            service = cls._shared.get(key)
            if service is not None and not service.alive():
                service.close()
                service = None
            if service is None:
                service = cls._shared[key] = cls(client, image, jobs)
            elif jobs > service.jobs:  # started by resolve_runner's probe, or a smaller run
                service.container.update(mem_limit=judge_memory(jobs),
                                         memswap_limit=judge_memory(jobs))
                service.jobs = jobs
            return service

    def alive(self) -> bool:
        try:
            self.container.reload()
            return self.container.status == "running"
        except Exception:  # noqa: BLE001 - removed
            return False

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            services, cls._shared = list(cls._shared.values()), {}
        for service in services:
            service.close()


atexit.register(JudgeService.close_all)


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


def _discard(spare) -> None:
    container, handle = spare
    try:
        if hasattr(handle, "close"):
            handle.close()
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - already gone
        pass


def _send(stream, data: bytes) -> None:
    """Write the job to the container's stdin and close it (``stdin_once``: EOF for the
    judge)."""
    raw = getattr(stream, "_sock", stream)
    try:
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
    finally:
        stream.close()


#: The most of a container's output (or the judge's answer) the host reads: the result
#: document is capped at 1 MiB in the container (results.capped); anything past this is cut
#: and the document then fails to parse, as a grader error, never a grader out of memory.
MAX_ANSWER_BYTES = 4 * MAX_DOCUMENT_BYTES


def _bounded(chunks) -> str:
    """At most ``MAX_ANSWER_BYTES`` of a stream of byte chunks, as text."""
    kept, size = [], 0
    for chunk in chunks:
        kept.append(chunk[: MAX_ANSWER_BYTES - size])
        size += len(kept[-1])
        if size >= MAX_ANSWER_BYTES:
            break
    return b"".join(kept).decode("utf-8", "replace")


def _parse(stdout: str, stderr: str) -> dict:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            doc = json.loads(line[len(RESULT_MARKER):])
            if isinstance(doc, dict):
                return doc
    tail = (stderr.strip().splitlines() or ["no output"])[-1][:500]
    raise ContainerError(f"the judge printed no result ({tail})")


def resolve_runner(requested: str) -> tuple[str | None, str]:
    """``auto`` -> ``docker-fork`` when an engine is reachable, the CPU image is built and the
    engine runs the judge container (started here, kept for the run), else ``docker`` when
    the first two hold, else ``sealed``; ``docker``, ``docker-fork`` and ``docker-gpu`` ->
    themselves or None (an error: never a silent fallback, and never a CPU run for a GPU
    request). Returns the runner and a line saying why, for staff."""
    if requested not in ("auto", "docker", "docker-gpu", "docker-fork"):
        return requested, ""
    image = IMAGES["cuda" if requested == "docker-gpu" else "cpu"]
    client = engine()
    why = None
    if client is None:
        why = "no Docker engine is reachable"
    elif not _has_image(client, image):
        why = f"the grading image {image} is not built (run `make image" + (
            "-gpu`)" if requested == "docker-gpu" else "`)")
    elif requested == "docker-gpu" and cuda_on_cpu():
        return requested, (f"grading in containers of {image} ON THE CPU: "
                           f"{CUDA_ON_CPU_VARIABLE}=1 is set (for tests only)")
    elif requested == "docker-gpu":
        why = gpu_problem(client, image)
    elif requested in ("auto", "docker-fork"):
        try:
            JudgeService.shared(client, image)
            return "docker-fork", (f"grading in containers of {image}: one judge container, "
                                   f"a fresh container per submission")
        except Exception as exc:  # noqa: BLE001 - ContainerError, or the engine's own error
            why = str(exc)
        if requested == "auto":
            return "docker", (f"note: {why}: grading with the judge inside each submission's "
                              f"container instead (slower)")
    if why is None:
        return requested, f"grading in containers of {image}"
    if requested != "auto":
        return None, f"error: --runner {requested}: {why}"
    return "sealed", f"note: {why}: grading with the local sealed runner instead (needs root)"


def _has_image(client, image: str) -> bool:
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
