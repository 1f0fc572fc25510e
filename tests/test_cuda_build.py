"""The CUDA image's build, chosen for the host's driver, and wheels for the image's Python.

No GPU here: ``nvidia-smi`` is a test double on ``PATH`` (a shell script answering the query
the way the real tool does), and ``docker/build_image.py`` runs as staff run it. Every refusal
must come before any download, in one line. The wheelhouse is downloaded for the image's
Python 3.11 and manylinux platform, never this host's: a real download proves it by asking for
another Python's wheels (3.12) from this 3.11 host.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.running.runners import cuda_host
from notebooks import ROOT

sys.path.insert(0, str(ROOT / "docker"))
import torch_wheel  # noqa: E402


def fake_nvidia_smi(folder: Path, driver: str = "550.54.15", mode: str = "Default",
                    memory: int = 40960, gpus: int = 1, fails: str = "") -> Path:
    """A folder holding an ``nvidia-smi`` that answers ``--query-gpu`` as the real one does
    (``fails``: print it and exit 9 instead, as with the driver not loaded)."""
    folder.mkdir(parents=True, exist_ok=True)
    if fails:
        body = f'echo "{fails}"\nexit 9\n'
    else:
        body = "".join(f'echo "{i}, NVIDIA A100-SXM4-40GB, {driver}, {mode}, {memory}, '
                       'Disabled"\n' for i in range(gpus))
    script = folder / "nvidia-smi"
    script.write_text("#!/bin/sh\n" + 'case "$1" in --query-gpu=*) ;; *) exit 2 ;; esac\n' + body)
    script.chmod(0o755)
    return folder


def build_cuda(tmp_path: Path, smi: Path | None, *extra: str, **env: str):
    """``build_image.py --variant cuda`` with this PATH (``smi`` first, or none holding
    nvidia-smi) and no reachable engine: a run that passes the driver check stops at the
    engine, before any download."""
    path = os.pathsep.join([str(smi)] if smi else []) or "/nonexistent"
    proc = subprocess.run([sys.executable, "docker/build_image.py", "--variant", "cuda",
                           "--build-dir", str(tmp_path / "build"), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{path}:/usr/bin:/bin",
                               "DOCKER_HOST": "unix:///nonexistent/docker.sock", **env})
    assert not (tmp_path / "build").exists(), "downloaded before the checks"
    return proc


@pytest.mark.parametrize("build, driver, refused", [
    ("cu130", "550.54.15", "needs 580 or newer: build with CUDA_BUILD=cu128"),
    ("cu126", "470.82.01", "needs 525 or newer: upgrade the driver to 525 or newer"),
    ("cu126", "550.54.15", None), ("cu128", "570.86.10", None), ("cu130", "580.65.06", None),
])
def test_the_driver_is_checked_against_the_build_before_any_download(tmp_path, build, driver,
                                                                     refused):
    proc = build_cuda(tmp_path, fake_nvidia_smi(tmp_path / "bin", driver=driver),
                      CUDA_BUILD=build)
    assert proc.returncode == 2
    if refused:
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(f"error: the NVIDIA driver here is {driver}") and refused in line
    else:
        assert f"NVIDIA driver {driver}: runs torch's {build} build" in proc.stdout
        assert "no Docker engine reachable" in proc.stderr  # past the check


def test_without_a_driver_grading_refuses_and_building_for_elsewhere_goes_on(tmp_path):
    proc = build_cuda(tmp_path, None, "--require-gpu")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: no NVIDIA driver on this host (nvidia-smi is not "
                                   "on PATH)")
    proc = build_cuda(tmp_path, None)  # make image-gpu on a build machine without a GPU
    assert "building the cu126 image for another host" in proc.stdout
    assert "no Docker engine reachable" in proc.stderr


def test_a_gpu_in_exclusive_process_mode_or_a_broken_driver_refuses_grading(tmp_path):
    proc = build_cuda(tmp_path, fake_nvidia_smi(tmp_path / "x", mode="Exclusive_Process"),
                      "--require-gpu")
    assert proc.returncode == 2 and "compute mode Exclusive_Process" in proc.stderr
    assert "nvidia-smi -i 0 -c DEFAULT" in proc.stderr
    failed = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    proc = build_cuda(tmp_path, fake_nvidia_smi(tmp_path / "y", fails=failed), "--require-gpu")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: nvidia-smi found no usable GPU (exit 9): {failed}"


def test_an_unknown_cuda_build_is_one_line_naming_the_choices(tmp_path):
    proc = build_cuda(tmp_path, fake_nvidia_smi(tmp_path / "bin"), CUDA_BUILD="cu999")
    (line,) = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and line.startswith("error: CUDA_BUILD=cu999: not a CUDA build")
    assert "cu126: CUDA 12.6, driver >= 525" in line and "cu130: CUDA 13.0, driver >= 580" in line


@given(memory=st.lists(st.integers(0, 200_000), min_size=1, max_size=8),
       cpus=st.integers(1, 256))
def test_gpu_jobs_fit_the_gpus_memory_and_the_cpus(memory, cpus):
    gpus = [cuda_host.Gpu(i, "g", "550.1", "Default", m, "Disabled")
            for i, m in enumerate(memory)]
    jobs = cuda_host.gpu_jobs(gpus, cpus)
    assert 1 <= jobs <= cpus
    assert jobs <= max(1, memory[0] // cuda_host.MEMORY_PER_JOB_MIB)


def test_the_sealed_runner_defaults_to_what_the_gpu_holds(tmp_path, monkeypatch):
    """Workers all use the first GPU: two 4 GiB GPUs hold two, whatever the CPU count."""
    from autograder.running.runners import registry

    monkeypatch.setenv("PATH", f"{fake_nvidia_smi(tmp_path, memory=4096, gpus=2)}:"
                               f"{os.environ['PATH']}")
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    kind = registry.RunnerKind("gpu-test", "", lambda setup: None, gpu=lambda: True)
    assert kind.default_jobs() == 2
    assert registry.RUNNERS["otter"].default_jobs() == 64


# ---- wheels for the image's interpreter, not this host's ----------------------------------------

def test_every_image_download_pins_the_image_python_and_platform():
    target = torch_wheel.image_target()
    pairs = list(zip(target, target[1:]))
    assert ("--python-version", "3.11") in pairs and ("--implementation", "cp") in pairs
    assert ("--only-binary", ":all:") in pairs and ("--abi", "cp311") in pairs
    assert ("--platform", "manylinux_2_28_x86_64") in pairs
    assert ("--python-version", "3.12") in list(zip(torch_wheel.image_target("3.12"),
                                                    torch_wheel.image_target("3.12")[1:]))


@pytest.mark.slow
@pytest.mark.parametrize("python, tag", [("3.11", "cp311"), ("3.12", "cp312")])
def test_the_wheelhouse_step_downloads_for_the_image_python_not_this_host(tmp_path,
                                                                        monkeypatch, python,
                                                                        tag):
    """build_image's real download step (``download_deps``), on a lock of one compiled
    package, with the image's Python set to 3.11 and then 3.12, from this 3.11 host: the wheel
    follows the pin, and is a manylinux one."""
    from test_install import build_image_module

    assert sys.version_info[:2] == (3, 11)
    build_image = build_image_module()
    lock = tmp_path / "requirements.lock"
    lock.write_text("pyyaml==6.0.4\n")
    monkeypatch.setattr(build_image, "LOCK", lock)
    monkeypatch.setattr(build_image.torch_wheel, "IMAGE_PYTHON", python)
    build_image.download_deps(tmp_path / "wheels")
    (wheel,) = (tmp_path / "wheels").glob("*.whl")
    assert f"-{tag}-{tag}-" in wheel.name and "manylinux" in wheel.name, wheel.name


# ---- the base image: the engine's pull before debootstrap ---------------------------------------

@pytest.mark.needs_docker(image=False)
def test_a_missing_base_image_is_pulled_by_the_engine_before_debootstrap(tmp_path, monkeypatch,
                                                                       capsys):
    """A tag no registry holds: the engine's pull is tried (and fails, said in a line), then
    the bootstrap step runs with TAG set (here a stand-in that tags the present base, instead
    of 30 s of debootstrap from a mirror)."""
    from autograder.running.runners.docker_engine import engine
    from test_install import build_image_module

    build_image, client = build_image_module(), engine()
    assert build_image.base_image(client) == "present"
    tag = f"autograder-test-missing-base:{os.getpid()}"
    monkeypatch.setattr(build_image, "BASE", tag)
    try:
        how = build_image.base_image(client, bootstrap=[
            "sh", "-c", 'docker tag debian:bookworm-slim "$TAG"'])
        assert how == "debootstrapped" and client.images.get(tag)
        out = capsys.readouterr().out
        assert f"base image {tag}: the engine could not pull it" in out and \
            "debootstrapping it instead" in out
    finally:
        try:
            client.images.remove(tag)
        except Exception:  # noqa: BLE001 - the step failed before tagging
            pass


@pytest.mark.needs_docker
def test_the_gpu_warm_up_without_the_toolkit_fails_in_one_line_and_leaves_nothing():
    """The warm-up that ``docker-gpu`` runs before any submission's clock: where the engine
    cannot give a GPU, a ``ContainerError`` with the engine's reason (the runner prints it as
    a warning and each submission's worker says it again), and no container left behind."""
    from autograder.running.container_protocol import ContainerError
    from autograder.running.runners.docker_engine import IMAGES, WARM_UP, engine, warm_gpu_image

    client = engine()
    if "nvidia" in client.info().get("Runtimes", {}):
        pytest.skip("this engine has the NVIDIA runtime: the warm-up runs on GPU machines")
    said = []
    with pytest.raises(ContainerError, match="warm-up container of .* failed"):
        warm_gpu_image(client, IMAGES["cpu"], say=said.append)
    assert said and "loads the CUDA libraries before grading starts" in said[0]
    assert not [c for c in client.containers.list(all=True)
                if WARM_UP in (c.attrs["Config"].get("Cmd") or [])]
