"""The Gradescope / stock ``otter grade`` zip: otter assign's zip with its environment scripts
replaced so that it grades with the grading image's prebuilt venv and our sealed judge.

otter's own ``setup.sh`` downloads Miniforge and pandoc and builds a conda env from
``environment.yml``; its ``run_autograder`` runs the notebook and the tests in one kernel. Here
``setup.sh`` only checks the prebuilt env, ``run_autograder`` runs ``zip_entry`` (the judge,
student code under a sandbox uid), which writes Gradescope's ``results.json`` and otter's
``results.pkl``. The tests, ``otter_config.json`` and ``run_otter.py`` are kept byte for byte.

    python -m autograder.authoring.gradescope [ASSIGNMENT ...]   # build/<a>/<a>-gradescope.zip
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from .layout import ASSIGNMENTS, Layout, check_assignment

PYTHON = "/opt/autograder-env/bin/python"
SETUP = f"""#!/usr/bin/env bash
# Nothing to install: run on the grading image (make image), whose venv has torch, otter and
# the autograder package. Fails the build when that env is missing.
set -euo pipefail
{PYTHON} -c "import autograder, otter, torch; print('grading env ok: torch', torch.__version__)"
"""
RUN = f"""#!/usr/bin/env bash
# The sealed judge (autograder.running.zip_entry), not otter's single-kernel runner.
exec {PYTHON} -m autograder.running.zip_entry
"""
ENVIRONMENT = "# unused: the grading image's venv is the environment (see setup.sh)\nname: otter-env\n"
REPLACED = {"setup.sh": SETUP, "run_autograder": RUN, "environment.yml": ENVIRONMENT}


def gradescope_zip(src: Path, dst: Path) -> Path:
    """Write ``dst``: ``src`` with ``REPLACED``'s scripts (executable), the rest unchanged."""
    with zipfile.ZipFile(src) as zin:
        missing = set(REPLACED) - set(zin.namelist())
        if missing:
            raise ValueError(f"{src} has no {', '.join(sorted(missing))}: not otter's zip?")
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                if info.filename in REPLACED:
                    new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                    new.external_attr = 0o100755 << 16
                    zout.writestr(new, REPLACED[info.filename])
                else:
                    zout.writestr(info, zin.read(info.filename))
            if not any(n.startswith("files/") for n in zin.namelist()):
                # otter grade's Dockerfile has `ADD files* ...`, which fails on no match
                zout.writestr(zipfile.ZipInfo("files/"), b"")
    return dst


def main(argv: list[str] | None = None) -> int:
    layout = Layout.at(".")
    for name in [check_assignment(a) for a in (argv or ASSIGNMENTS)]:
        src = layout.zip(name)
        if not src.exists():
            print(f"error: {src} is missing: run `make assign` first", file=sys.stderr)
            return 2
        dst = gradescope_zip(src, src.with_name(f"{name}-gradescope.zip"))
        print(f"{name}: {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
