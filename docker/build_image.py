"""Build the grading image (``make image``, ``make image-gpu``) with no registry and no network
inside the build: a wheelhouse made here by pip, our package as a wheel, the classic builder
driven through the Engine API (the Docker SDK; this host's CLI has no buildx).

    python docker/build_image.py [--variant cpu|cuda] [--if-engine] [--require-gpu]
                                 [--build-dir DIR]

torch for the CPU image comes from $TORCH_INDEX_URL (see docker/torch_wheel.py).

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
from autograder.running.runners import image_inputs  # noqa: E402
from autograder.running.runners.docker_engine import IMAGES, engine, gpu_problem  # noqa: E402
from autograder.running.runners.image_inputs import INPUTS_LABEL  # noqa: E402
sys.path.insert(0, str(ROOT / "docker"))
import torch_wheel  # noqa: E402

BUILD = ROOT / "build" / "docker"
LOCK = ROOT / "docker" / "requirements.lock"
# torch: the CPU wheel (the one on the course machines; from $TORCH_INDEX_URL, see
# torch_wheel.py), or PyPI's default Linux wheel, which is the CUDA build and pulls the nvidia-*
# wheels that carry the CUDA libraries.
TORCH = {"cpu": torch_wheel.CPU_SPEC, "cuda": f"torch=={torch_wheel.VERSION}"}
REPRODUCIBLE = {"SOURCE_DATE_EPOCH": "315532800"}  # same sources -> same wheel bytes -> cache hit


def pip(*args: str, env: dict | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                   check=True, env={**os.environ, **(env or {})})


def wheelhouse(variant: str) -> Path:
    """The pinned deps (once) and the variant's torch wheel(s), downloaded on this host."""
    deps, torch_dir = BUILD / "wheelhouse", BUILD / f"torch-{variant}"
    if not (torch_dir / ".complete").exists():  # first: a missing torch wheel stops at once
        if variant == "cpu":  # --no-deps: the lock has torch's deps
            torch_wheel.download(str(torch_dir))
        else:
            # `===`: this exact version string, so a 2.13.0+cpu wheel (which `==2.13.0` also
            # matches, and prefers) in pip's configured find-links or indexes cannot stand in
            # for the CUDA build; with its nvidia-* wheels
            pip("download", "--only-binary", ":all:", f"torch==={torch_wheel.VERSION}",
                "-d", str(torch_dir))
        (torch_dir / ".complete").touch()
    if not (deps / ".complete").exists():
        pip("wheel", "--no-deps", "-r", str(LOCK), "-w", str(deps))
        (deps / ".complete").touch()
    return torch_dir


def our_wheel(into: Path) -> None:
    """``autograder`` as a wheel, rebuilt from clean so a deleted module cannot linger."""
    for stale in [ROOT / "build" / "lib", *(ROOT / "build").glob("bdist.*"), into]:
        shutil.rmtree(stale, ignore_errors=True)
    into.mkdir(parents=True)
    pip("wheel", "--no-deps", "--no-build-isolation", str(ROOT), "-w", str(into),
        env=REPRODUCIBLE)


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


def base_image(client) -> None:
    """``debian:bookworm-slim``, debootstrapped by ``bootstrap-base.sh`` when this engine has
    none (an air-gapped server cannot pull it)."""
    try:
        client.images.get(BASE)
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        subprocess.run([str(ROOT / "docker" / "bootstrap-base.sh")], check=True)


def inputs_digest(variant: str) -> str:
    """The hash this checkout's image of ``variant`` is labelled with (``image_inputs``: the
    same comparison `autograder grade` makes before it grades in a container)."""
    return image_inputs.inputs_digest(variant, ROOT)


def up_to_date(client, variant: str, digest: str) -> bool:
    """Whether ``IMAGES[variant]`` exists and carries ``digest`` as its inputs label."""
    try:
        labels = client.images.get(IMAGES[variant]).labels or {}
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        return False
    return labels.get(INPUTS_LABEL) == digest


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
                                      labels={INPUTS_LABEL: digest or inputs_digest(variant)},
                                      buildargs={"TORCH_SPEC": TORCH[variant]}):
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
