"""Build ``build/gpu-bundle/``: the wheels the sealed judge needs on a GPU machine that has
torch, numpy, pytest, PyYAML, attrs and pygments (the lent H200 image, Python 3.12) but not
otter or nbformat, pinned to the versions of docker/requirements.lock, for this Python and
for 3.12 (compiled ones). ``gpu/run.sh`` installs them there with ``pip --no-index``.

The judge imports ``otter.test_files`` only (``entry.startup.skip_inits``: not otter's
API, so no pandas or nbconvert), ``nbformat`` and torch; the workers need torch and numpy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "gpu-bundle"
LOCK = ROOT / "docker" / "requirements.lock"
# what `import otter.test_files` (without otter/__init__) and `import nbformat` need, beyond
# what the GPU image has; found by importing them in a venv holding only torch, numpy, pytest,
# PyYAML, attrs and pygments (checked by hand with this bundle: see the issue note). Not jedi
# and parso (5 of the bundle's 8 MiB): IPython's completer imports jedi only if it is there,
# and the test files load without both (tests/test_gpu_check.py imports them so).
NEEDED = [
    "otter-grader", "nbformat", "fastjsonschema", "jsonschema", "jsonschema-specifications",
    "referencing", "rpds-py", "traitlets", "jupyter-core", "platformdirs", "python-frontmatter",
    "fica", "ipython", "matplotlib-inline", "pexpect",
    "ptyprocess", "prompt-toolkit", "wcwidth", "stack-data", "executing", "asttokens",
    "pure-eval", "typing-extensions", "ipython-pygments-lexers",
]
TARGETS = sorted({f"{sys.version_info.major}.{sys.version_info.minor}", "3.12"})
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]


def pins() -> dict[str, str]:
    found = {}
    for line in LOCK.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            found[name.strip().lower().replace("_", "-")] = version.split(";")[0].strip()
    return found


def main() -> int:
    versions = pins()
    missing = [n for n in NEEDED if n not in versions]
    if missing:
        raise SystemExit(f"not in {LOCK}: {missing}")
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for name in NEEDED:
        spec = f"{name}=={versions[name]}"
        for target in TARGETS:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--disable-pip-version-check", "--only-binary=:all:",
                            "--python-version", target, "--implementation", "cp",
                            *[a for p in PLATFORMS for a in ("--platform", p)],
                            "-d", str(OUT), spec], check=True)
    (OUT / "requirements.txt").write_text(
        "".join(f"{n}=={versions[n]}\n" for n in NEEDED))
    size = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{OUT}: {len(list(OUT.glob('*.whl')))} wheels, {size / 2**20:.1f} MiB "
          f"(Python {', '.join(TARGETS)})")
    if size > 16 * 2**20:
        raise SystemExit("the bundle is over 16 MiB: the device carries 64 MiB in all, with "
                         "the working tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
