"""What both Docker runners share about the engine, on the host: the engine itself, the images,
what confines a container that holds student code (``ContainerLimits``, ``box_config``), the
label that says which grader made a container and the cleanup of those a killed grader left
behind. The base of both runners is ``container``; the judge's answer is read with
``running.container_protocol``.

The host side only: it never imports torch and never runs a check. The runners are
``runners.docker.DockerRunner`` (``docker``, ``docker-gpu``: the judge inside each
submission's container) and ``runners.docker_fork.ForkRunner`` (``docker-fork``: one judge
container for the run).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass

from ..container_protocol import ContainerError
from ..limits import Limits

# AUTOGRADER_IMAGE names the image repository (a course's registry, or one checkout's own
# images beside another's on a shared engine); the variant is the tag.
IMAGE_REPOSITORY = os.environ.get("AUTOGRADER_IMAGE", "autograder-grader")
IMAGES = {"cpu": f"{IMAGE_REPOSITORY}:cpu", "cuda": f"{IMAGE_REPOSITORY}:cuda"}
# TEST-ONLY: "1" lets `--runner docker-gpu` grade in the CUDA image without a GPU (on the CPU,
# with no GPU requested), so tests can check that image on a machine that has none. Never set
# it for real grading: a GPU run must fail without a GPU, never fall back to the CPU.
CUDA_ON_CPU_VARIABLE = "AUTOGRADER_TEST_CUDA_ON_CPU"
CAPABILITIES = ["SETUID", "SETGID", "SETPCAP", "KILL"]


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


def engine(timeout: float = 120.0, ping_timeout: float = 10.0):
    """A Docker client for a reachable engine (``DOCKER_HOST`` or the local socket), or None.

    Whether one is reachable is asked with ``ping_timeout`` (``/_ping`` answers at once even on
    a busy engine); the client's later calls wait up to ``timeout``: ``/info`` and image
    inspection took over 10 s on a 2-core host busy grading, and a timeout there stopped a run
    that would have graded."""
    try:
        import docker

        client = docker.from_env(timeout=ping_timeout)
        client.ping()
        client.api.timeout = timeout
        return client
    except Exception:  # noqa: BLE001 - no SDK, no socket, no permission: all mean "no engine"
        return None


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


def image_problem(client, image: str, tries: int = 3) -> str | None:
    """Why ``image`` cannot be graded with (one line), or None when the engine has it. Only
    the engine's "no such image" means not built: any other error (the engine busy writing or
    removing another image, a timeout) is asked again, then named as the engine's."""
    import docker

    for attempt in range(tries):
        try:
            client.images.get(image)
            return None
        except docker.errors.ImageNotFound:
            return f"the grading image {image} is not built"
        except Exception as exc:  # noqa: BLE001 - the engine's own error, or it went away
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
            if attempt + 1 < tries:
                time.sleep(0.5 * (attempt + 1))
    return f"the Docker engine did not say whether {image} is built ({error})"


#: The label ``docker/build_image.py`` gives the CUDA image: the CUDA build of its torch.
CUDA_LABEL = "autograder.cuda-build"


def cuda_problem(client, image: str) -> str | None:
    """Why this host's driver cannot run ``image``'s CUDA build, or the GPUs cannot be shared
    by the judge and its workers (one line), or None; asked of ``nvidia-smi``, before any
    container starts."""
    from . import cuda_host

    try:
        build = (client.images.get(image).labels or {}).get(CUDA_LABEL)
        gpus = cuda_host.host_gpus()
        why = cuda_host.driver_problem(build, gpus) if build in cuda_host.CUDA_BUILDS else None
        return why or cuda_host.compute_problem(gpus)
    except cuda_host.CudaHostError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - the engine lost the image meanwhile: the probe says
        return None


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


#: What the warm-up container runs: torch's import and a CUDA matmul read the image's ~3 GB of
#: CUDA libraries (cuBLAS among them) once, into the host's page cache.
WARM_UP = ("import torch; x = torch.ones(64, 64, device='cuda'); "
           "print(float((x @ x).sum().item()))")
WARM_UP_TIMEOUT = 1200.0


def warm_gpu_image(client, image: str, say=print) -> float:
    """Start one throwaway GPU container of ``image`` and wait for it, before any submission's
    clock starts: the first container on a host loads the CUDA libraries from disk (recorded
    cold starts: 219 s, over 480 s), which would otherwise be charged to the first
    submissions' time limits. Returns the seconds it took; raises ``ContainerError`` when
    CUDA does not work in it."""
    import time

    import docker

    start = time.monotonic()
    say(f"warming {image}: one GPU container loads the CUDA libraries before grading starts")
    probe = client.containers.create(
        image, ["/opt/autograder-env/bin/python", "-c", WARM_UP], network_mode="none",
        device_requests=[docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])])
    try:
        probe.start()
        code = probe.wait(timeout=WARM_UP_TIMEOUT).get("StatusCode")
        if code != 0:
            tail = probe.logs(stdout=False, stderr=True).decode(errors="replace").strip()
            raise ContainerError(f"CUDA does not work in {image} (exit {code}): "
                                 f"{(tail.splitlines() or ['no output'])[-1][:300]}")
    except docker.errors.DockerException as exc:
        raise ContainerError(f"the warm-up container of {image} failed: {exc}") from exc
    finally:
        probe.remove(force=True)
    return time.monotonic() - start
