"""Where the CPU torch wheel comes from: PyTorch's CPU wheel index, or what ``TORCH_INDEX_URL``
names. One setting for the host venv (``make install``) and the CPU grading image's wheelhouse
(``docker/build_image.py``); the Gradescope zip's setup.sh reads the same variable.

    python docker/torch_wheel.py install     # torch 2.13.0+cpu into this interpreter's env

Why a script and not a line of pip in the Makefile: ``torch==2.13.0+cpu`` is not on PyPI, and
PyPI's ``torch==2.13.0`` for Linux is the CUDA build (~2.5 GB of nvidia-* wheels), so torch alone
is fetched with ``--index-url $TORCH_INDEX_URL --no-deps``: everything else still comes from
PyPI (or pip's own configured index), and pip's configuration (find-links, extra indexes,
certificates) is still read. When the wheel is nowhere to be found, pip's page of output is
replaced by one line saying where it looked and how to point at a wheel instead.

``TORCH_INDEX_URL=`` (empty) asks no index for torch: pip's own configuration must then hold it,
e.g. ``PIP_FIND_LINKS=/path/to/wheelhouse`` on an air-gapped server. Stdlib only: it runs before
anything else is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys

VERSION = "2.13.0"
CPU_SPEC = f"torch=={VERSION}+cpu"
DEFAULT_INDEX = "https://download.pytorch.org/whl/cpu"
# The grading image's interpreter and platform (Debian bookworm: CPython 3.11, glibc 2.36).
# Every wheel for the image is downloaded for it, whatever Python runs the download: a
# Python 3.12 host (Ubuntu 24.04) would otherwise fetch cp312 wheels the image cannot install.
IMAGE_PYTHON = "3.11"
IMAGE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                   "manylinux_2_5_x86_64", "manylinux1_x86_64")


def image_target(python: str | None = None) -> list[str]:
    """pip's options that download binary wheels for the image's interpreter and platform
    (``python``: another interpreter version, for tests)."""
    python = python or IMAGE_PYTHON
    abi = "cp" + python.replace(".", "")
    return ["--only-binary", ":all:", "--implementation", "cp", "--python-version", python,
            "--abi", abi, "--abi", "abi3", "--abi", "none",
            *[a for p in IMAGE_PLATFORMS for a in ("--platform", p)]]


def cuda_spec(build: str) -> str:
    """The exact CUDA build of torch (``===``: a +cpu wheel in pip's find-links or indexes,
    which ``==2.13.0`` also matches, cannot stand in for it)."""
    return f"torch==={VERSION}+{build}"


def cuda_index(build: str) -> str:
    """PyTorch's index for ``build`` (cu126, cu128, cu130), or ``$TORCH_CUDA_INDEX_URL``."""
    return os.environ.get("TORCH_CUDA_INDEX_URL", f"https://download.pytorch.org/whl/{build}")
# what pip says when no index or folder has a matching wheel
_NOT_FOUND = ("No matching distribution found for torch",
              "Could not find a version that satisfies the requirement torch")


class TorchNotFound(SystemExit):
    """The CPU wheel is on no index or folder pip looked at; the message is one line."""


def index_url() -> str:
    """``$TORCH_INDEX_URL``; unset means PyTorch's CPU index, empty means none."""
    return os.environ.get("TORCH_INDEX_URL", DEFAULT_INDEX).strip()


def not_found_message(url: str) -> str:
    where = f"TORCH_INDEX_URL={url}" if url else "no torch index (TORCH_INDEX_URL is empty)"
    return (f"error: {CPU_SPEC} (the CPU wheel) was not found: pip looked at {where} and at "
            f"pip's own index and find-links; set TORCH_INDEX_URL to an index that holds it "
            f"(default {DEFAULT_INDEX}), or, offline, put "
            f"torch-{VERSION}+cpu-cp311-cp311-manylinux_2_28_x86_64.whl in a folder and set "
            f"PIP_FIND_LINKS=/that/folder TORCH_INDEX_URL=")


def pip_torch(verb: str, *args: str, python: str = sys.executable) -> None:
    """``pip <verb> torch==2.13.0+cpu --no-deps`` with torch's index; raise ``TorchNotFound``
    with one line when no index or folder has the wheel (other pip failures: pip's own
    output, then ``CalledProcessError``)."""
    url = index_url()
    cmd = [python, "-m", "pip", verb, "--disable-pip-version-check", "-q", "--no-deps",
           "--only-binary", ":all:", *(["--index-url", url] if url else []), *args, CPU_SPEC]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 0:
        return
    if any(marker in proc.stderr for marker in _NOT_FOUND):
        raise TorchNotFound(not_found_message(url))
    sys.stderr.write(proc.stderr)
    raise subprocess.CalledProcessError(proc.returncode, cmd)


def download(dest: str) -> None:
    """The CPU wheel into ``dest`` (the grading image's wheelhouse), for the image's Python."""
    pip_torch("download", "-d", dest, *image_target())


def download_cuda(build: str, dest: str) -> None:
    """torch's ``build`` wheel and its nvidia-* wheels into ``dest``, for the image's Python:
    torch from PyTorch's index for that build, its dependencies from there or pip's own."""
    url = cuda_index(build)
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
           *image_target(), "--extra-index-url", url, "-d", dest, cuda_spec(build)]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 0:
        return
    if any(marker in proc.stderr for marker in _NOT_FOUND):
        raise TorchNotFound(f"error: {cuda_spec(build)} (the {build} build) was not found at "
                            f"{url} nor in pip's own index and find-links: pick another "
                            f"CUDA_BUILD, or set TORCH_CUDA_INDEX_URL to an index that holds it")
    sys.stderr.write(proc.stderr)
    raise subprocess.CalledProcessError(proc.returncode, cmd)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["install"]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        pip_torch("install")
    except subprocess.CalledProcessError as exc:
        return exc.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
