"""The host's NVIDIA GPUs as ``nvidia-smi`` reports them, and whether a CUDA build of torch can
run on them: asked before the CUDA image is built (``docker/build_image.py``), before a
``docker-gpu`` run, and by the prepared GPU check (``gpu/check.py``). Host side only: never
imports torch, never creates a CUDA context (a process that later forks workers must not).

Which CUDA build runs on which driver (NVIDIA, "CUDA Compatibility", minor version
compatibility, table 1: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html):
CUDA 12.x applications run on any driver >= 525 (the 12.x family's minimum; newer drivers by
backward compatibility), CUDA 13.x applications need >= 580. PyTorch's wheels load their own
CUDA runtime (the ``nvidia-*`` wheels), so the host driver is the only constraint.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

#: PyTorch's per-CUDA wheel indexes (https://download.pytorch.org/whl/<build>): the CUDA
#: version of each and the oldest Linux driver branch that runs it (see above).
CUDA_BUILDS = {"cu126": ("12.6", 525), "cu128": ("12.8", 525), "cu130": ("13.0", 580)}
#: The default: runs on the 525-570 drivers course and cluster hosts commonly have; cu128 is
#: needed for Blackwell GPUs (sm_100/sm_120), cu130 only with driver 580 or newer.
DEFAULT_CUDA_BUILD = "cu126"
QUERY = "index,name,driver_version,compute_mode,memory.total,mig.mode.current"
#: A worker's share of GPU memory when ``--jobs`` is not given: its CUDA context (~0.5 GB)
#: plus what q4_device's small models and the student's cells may take.
MEMORY_PER_JOB_MIB = 2048


class CudaHostError(RuntimeError):
    """This host cannot run the chosen CUDA build; the message is one line."""


@dataclass(frozen=True)
class Gpu:
    """One GPU as ``nvidia-smi --query-gpu`` reports it."""

    index: int
    name: str
    driver: str
    compute_mode: str
    memory_mib: int
    mig: str

    @property
    def driver_major(self) -> int:
        return int(self.driver.split(".")[0])


def parse_query(text: str) -> list[Gpu]:
    """``nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits`` lines into ``Gpu``s."""
    gpus = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 6 or not fields[0].isdigit():
            continue
        memory = int(fields[4]) if fields[4].isdigit() else 0
        gpus.append(Gpu(int(fields[0]), fields[1], fields[2], fields[3], memory, fields[5]))
    return gpus


def host_gpus(smi: str | None = None) -> list[Gpu]:
    """The GPUs ``nvidia-smi`` (on ``PATH`` unless named) reports; ``CudaHostError`` when
    there is no ``nvidia-smi`` (no NVIDIA driver) or it fails (driver not loaded)."""
    smi = smi or shutil.which("nvidia-smi")
    if smi is None:
        raise CudaHostError("no NVIDIA driver on this host (nvidia-smi is not on PATH)")
    try:
        proc = subprocess.run([smi, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CudaHostError(f"nvidia-smi did not answer: {exc}") from exc
    gpus = parse_query(proc.stdout)
    if proc.returncode != 0 or not gpus:
        said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise CudaHostError(f"nvidia-smi found no usable GPU (exit {proc.returncode}): "
                            f"{said[:200]}")
    return gpus


def cuda_build(name: str) -> str:
    """``name`` if it is a CUDA build we know, else ``CudaHostError`` naming the choices."""
    if name not in CUDA_BUILDS:
        raise CudaHostError(f"CUDA_BUILD={name}: not a CUDA build of torch we know; pick one "
                            f"of {', '.join(CUDA_BUILDS)} ({table()})")
    return name


def table() -> str:
    return "; ".join(f"{b}: CUDA {v}, driver >= {d}" for b, (v, d) in CUDA_BUILDS.items())


def driver_problem(build: str, gpus: list[Gpu]) -> str | None:
    """Why ``build`` cannot run on these GPUs' driver (one line), or None."""
    version, oldest = CUDA_BUILDS[cuda_build(build)]
    driver = gpus[0]
    if driver.driver_major >= oldest:
        return None
    fits = [b for b, (_, d) in CUDA_BUILDS.items() if driver.driver_major >= d]
    advice = (f"build with CUDA_BUILD={fits[-1]}" if fits
              else "upgrade the driver to 525 or newer")
    return (f"the NVIDIA driver here is {driver.driver}, and torch's {build} build (CUDA "
            f"{version}) needs {oldest} or newer: {advice}")


def compute_problem(gpus: list[Gpu]) -> str | None:
    """Why grading cannot share these GPUs (one line), or None. The judge and each worker
    each hold a CUDA context on the same GPU, which ``Exclusive_Process`` forbids."""
    for gpu in gpus:
        if gpu.compute_mode not in ("Default", "[N/A]"):
            return (f"GPU {gpu.index} ({gpu.name}) is in compute mode {gpu.compute_mode}: the "
                    "judge and every worker need a CUDA context on it; set it to Default "
                    f"(`nvidia-smi -i {gpu.index} -c DEFAULT`)")
    return None


def check(build: str, smi: str | None = None) -> list[Gpu]:
    """The host's GPUs when ``build`` runs on them and grading can share them, else
    ``CudaHostError`` with one line."""
    gpus = host_gpus(smi)
    why = driver_problem(build, gpus) or compute_problem(gpus)
    if why:
        raise CudaHostError(why)
    return gpus


def gpu_jobs(gpus: list[Gpu], cpus: int) -> int:
    """How many submissions to grade at once when ``--jobs`` is not given: no more than the
    CPUs, nor than the first GPU's memory holds at ``MEMORY_PER_JOB_MIB`` a worker (at least
    one). The first: every worker's ``torch.device("cuda")`` is that one."""
    return max(1, min(cpus, gpus[0].memory_mib // MEMORY_PER_JOB_MIB))
