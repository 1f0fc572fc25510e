"""Build the grading image (``make image``, ``make image-gpu``) with no registry and no network
inside the build: a wheelhouse made here by pip, our package as a wheel, the classic builder
driven through the Engine API (the Docker SDK; this host's CLI has no buildx).

    python docker/build_image.py [--variant cpu|cuda] [--if-engine] [--require-gpu]
                                 [--build-dir DIR]

torch for the CPU image comes from $TORCH_INDEX_URL (see docker/torch_wheel.py); the CUDA
image's from PyTorch's index for $CUDA_BUILD (cu126, the default, cu128 or cu130: which runs
on which driver, ``autograder/running/runners/cuda_host.py``), checked against this host's
driver before anything is downloaded. Every wheel is downloaded for the image's Python 3.11
and manylinux platform, whatever Python runs this script.

When the image's inputs (Dockerfile, lock, torch spec, the package's sources) hash to the
label the image already carries, it says "up to date" and stops (well under a second: no wheel,
no docker build). Otherwise it builds, showing one line per build step, writes the builder's
full log to build/docker/build-<variant>.log and ends with one summary line (size, times).
Never imports torch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from autograder.authoring.gradescope import build_wheel  # noqa: E402
from autograder.running.runners import cuda_host, image_inputs  # noqa: E402
from autograder.running.runners.docker_engine import CUDA_LABEL, IMAGES, engine, gpu_problem  # noqa: E402
from autograder.running.runners.image_inputs import INPUTS_LABEL  # noqa: E402

sys.path.insert(0, str(ROOT / "docker"))
import torch_wheel  # noqa: E402

BUILD = ROOT / "build" / "docker"
LOCK = ROOT / "docker" / "requirements.lock"


def cuda_build() -> str:
    """``$CUDA_BUILD`` (the Makefile's, default cu126), checked against the known builds."""
    return cuda_host.cuda_build(os.environ.get("CUDA_BUILD", cuda_host.DEFAULT_CUDA_BUILD))


def torch_spec(variant: str) -> str:
    """torch for ``variant``: the CPU wheel (the one on the course machines; from
    $TORCH_INDEX_URL, see torch_wheel.py), or the CUDA build $CUDA_BUILD, which pulls the
    nvidia-* wheels that carry the CUDA libraries (so the base stays plain Debian)."""
    return torch_wheel.CPU_SPEC if variant == "cpu" else torch_wheel.cuda_spec(cuda_build())


def pip(*args: str, env: dict | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                   check=True, env={**os.environ, **(env or {})})


def wheelhouse(variant: str) -> Path:
    """The pinned deps (once) and the variant's torch wheel(s), downloaded on this host."""
    deps = BUILD / "wheelhouse"
    torch_dir = BUILD / ("torch-cpu" if variant == "cpu" else f"torch-{cuda_build()}")
    if not (torch_dir / ".complete").exists():  # first: a missing torch wheel stops at once
        if variant == "cpu":  # --no-deps: the lock has torch's deps
            torch_wheel.download(str(torch_dir))
        else:  # with its nvidia-* wheels
            torch_wheel.download_cuda(cuda_build(), str(torch_dir))
        (torch_dir / ".complete").touch()
    if not (deps / ".complete").exists():
        download_deps(deps)
        (deps / ".complete").touch()
    return torch_dir


def download_deps(into: Path) -> None:
    """The lock's wheels, for the image's interpreter and platform (never this host's)."""
    pip("download", "--no-deps", *torch_wheel.image_target(), "-r", str(LOCK), "-d", str(into))


def our_wheel(into: Path) -> None:
    """``autograder`` as a wheel in ``into`` (emptied first), built as the zips build it."""
    shutil.rmtree(into, ignore_errors=True)
    build_wheel(ROOT, into)


def link_wheelhouse(variant: str, context: Path) -> None:
    """``context/wheelhouse``: hard links to the pinned deps and the variant's torch."""
    stage_wheels([BUILD / "wheelhouse", wheelhouse(variant)], context / "wheelhouse")


def _project(wheel: Path) -> str:
    """A wheel file's project name, normalised (PEP 427 file name, PEP 503 name)."""
    return wheel.name.split("-", 1)[0].replace("_", "-").replace(".", "-").lower()


def stage_wheels(sources: list[Path], into: Path) -> list[Path]:
    """Hard links in ``into`` to the wheels of ``sources``, one per project: the first source
    holding a project wins. The CUDA download brings torch's own dependencies (filelock,
    jinja2, sympy, ...), which the pinned deps already hold, maybe at another version: the
    lock's is kept, and staged once. Returns the staged wheels."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    staged: dict[str, Path] = {}
    for source in sources:
        for wheel in sorted(source.glob("*.whl")):
            if _project(wheel) not in staged:
                os.link(wheel, into / wheel.name)
                staged[_project(wheel)] = into / wheel.name
    return sorted(staged.values())


def stage(variant: str) -> Path:
    """The build context: Dockerfile, lock, wheelhouse (hard links), our wheel."""
    context = BUILD / f"context-{variant}"
    link_wheelhouse(variant, context)
    for name in ("Dockerfile", "requirements.lock"):
        shutil.copy2(ROOT / "docker" / name, context / name)
    our_wheel(context / "app")
    return context


BASE = "debian:bookworm-slim"


def base_image(client, bootstrap: list[str] | None = None) -> str:
    """``debian:bookworm-slim``: this engine's, else pulled by the engine from its registry,
    else (an air-gapped server) debootstrapped by ``bootstrap-base.sh``. Says which, and
    returns it: "present", "pulled" or "debootstrapped" (``bootstrap``: another command
    for that step, which makes the tag ``$TAG``)."""
    try:
        client.images.get(BASE)
        return "present"
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        pass
    repository, tag = BASE.split(":")
    try:
        client.images.pull(repository, tag=tag)
        print(f"base image {BASE}: pulled by the engine", flush=True)
        return "pulled"
    except Exception as exc:  # noqa: BLE001 - no registry reachable, or refused
        print(f"base image {BASE}: the engine could not pull it ({str(exc)[:200]}); "
              "debootstrapping it instead", flush=True)
    subprocess.run(bootstrap or [str(ROOT / "docker" / "bootstrap-base.sh")], check=True,
                   env={**os.environ, "TAG": BASE})
    return "debootstrapped"


def inputs_digest(variant: str) -> str:
    """The hash this checkout's image of ``variant`` is labelled with (``image_inputs``: the
    same comparison `autograder grade` makes before it grades in a container)."""
    return image_inputs.inputs_digest(variant, ROOT)


def up_to_date(client, variant: str, digest: str) -> bool:
    """Whether ``IMAGES[variant]`` exists and carries ``digest`` as its inputs label (and,
    for CUDA, ``$CUDA_BUILD`` as its build: the digest names torch's CUDA build by variant
    only, as `autograder grade` compares it without knowing the build asked for)."""
    try:
        labels = client.images.get(IMAGES[variant]).labels or {}
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        return False
    return labels.get(INPUTS_LABEL) == digest and all(
        labels.get(key) == value for key, value in cuda_labels(variant).items())


def _image_id(client, tag: str) -> str | None:
    try:
        return client.images.get(tag).id
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        return None


def build(client, variant: str, digest: str | None = None) -> None:
    """Build and tag ``IMAGES[variant]`` (labelled with ``digest``): one line per step here,
    the builder's whole output in ``build/docker/build-<variant>.log``."""
    base_image(client)
    previous = _image_id(client, IMAGES[variant])
    start = time.monotonic()
    context = stage(variant)
    staged = time.monotonic()
    log_path = BUILD / f"build-{variant}.log"
    print(f"building {IMAGES[variant]} (full log: {log_path})", flush=True)
    with open(log_path, "w", encoding="utf-8") as log:
        for chunk in client.api.build(path=str(context), tag=IMAGES[variant], rm=True,
                                      forcerm=True, decode=True,
                                      labels={INPUTS_LABEL: digest or inputs_digest(variant),
                                              **cuda_labels(variant)},
                                      buildargs={"TORCH_SPEC": torch_spec(variant)}):
            log.write(chunk.get("stream", "") or (chunk.get("error", "") + "\n"))
            if "error" in chunk:
                raise SystemExit(f"error: image build failed: {chunk['error'].strip()} "
                                 f"(full log: {log_path})")
            line = chunk.get("stream", "").strip()
            if line.startswith("Step "):
                print(f"  {line[:100]}", flush=True)
    size = client.images.get(IMAGES[variant]).attrs["Size"]
    if previous and previous != _image_id(client, IMAGES[variant]):
        try:  # the image this build replaced, now untagged: 1.2 GB each rebuild otherwise
            client.images.remove(previous)
        except Exception:  # noqa: BLE001 - still used by a container or another tag
            pass
    print(f"built {IMAGES[variant]}: {size / 1e9:.2f} GB; wheelhouse + wheel "
          f"{staged - start:.0f} s, docker build {time.monotonic() - staged:.0f} s", flush=True)


def cuda_labels(variant: str) -> dict[str, str]:
    return {} if variant == "cpu" else {CUDA_LABEL: cuda_build()}


def host_problem(variant: str, require_gpu: bool, smi: str | None = None) -> str | None:
    """Why this host's driver cannot run the CUDA build (one line), before any download;
    None for the CPU image. Without a driver here the image is built for another host,
    unless ``require_gpu`` (grading here)."""
    if variant == "cpu":
        return None
    build = cuda_build()
    try:
        gpus = cuda_host.check(build, smi) if require_gpu else cuda_host.host_gpus(smi)
    except cuda_host.CudaHostError as exc:
        if require_gpu:
            return str(exc)
        print(f"note: {exc}: building the {build} image for another host", flush=True)
        return None
    why = cuda_host.driver_problem(build, gpus)
    if why is None:
        print(f"NVIDIA driver {gpus[0].driver}: runs torch's {build} build", flush=True)
    return why


def main(argv: list[str] | None = None) -> int:
    global BUILD  # --build-dir: read by the staging functions above
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=sorted(IMAGES), default="cpu")
    parser.add_argument("--if-engine", action="store_true",
                        help="when no Docker engine is reachable, say so and exit 0")
    parser.add_argument("--require-gpu", action="store_true",
                        help="first check that the engine can give containers a GPU; stop "
                             "with the reason, before any download, when it cannot")
    parser.add_argument("--build-dir", type=Path, default=BUILD,
                        help=f"wheelhouses and build context (default {BUILD.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    BUILD = args.build_dir.resolve()
    try:
        why = host_problem(args.variant, args.require_gpu)
    except cuda_host.CudaHostError as exc:  # an unknown CUDA_BUILD
        why = str(exc)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    client = engine()
    if client is None:
        print("no Docker engine reachable: the grading image was not built", file=sys.stderr)
        return 0 if args.if_engine else 2
    if args.require_gpu:
        base_image(client)  # the probe's image: the CUDA image may not be built yet
        why = gpu_problem(client, BASE)
        if why:
            print(f"error: no GPU grading here: {why}", file=sys.stderr)
            return 2
    start = time.monotonic()
    digest = inputs_digest(args.variant)
    if up_to_date(client, args.variant, digest):
        print(f"{IMAGES[args.variant]}: up to date (inputs {digest[:12]}; checked in "
              f"{time.monotonic() - start:.2f} s)", flush=True)
        return 0
    build(client, args.variant, digest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
