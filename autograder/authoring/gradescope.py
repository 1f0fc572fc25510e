"""The Gradescope / stock ``otter grade`` zip: otter assign's zip with its environment scripts
replaced so that it grades with our sealed judge, on the grading image or on a plain base.

otter's own ``setup.sh`` downloads Miniforge and pandoc and builds a conda env from
``environment.yml``; its ``run_autograder`` runs the notebook and the tests in one kernel. Here
``setup.sh`` (``gradescope_setup.sh``) keeps the grading image's prebuilt venv when it finds
one, and otherwise builds it: a Python >= 3.11 (apt when the base has none), torch from
``TORCH_INDEX_URL``, the pinned deps from PyPI, and the ``autograder`` wheel that the zip
carries under ``wheels/`` (the package is not on PyPI). ``run_autograder`` runs ``entry.run_autograder``
(the judge, student code under a sandbox uid), which writes Gradescope's ``results.json`` (a
grader error included) and otter's ``results.pkl``. The tests, ``otter_config.json`` and
``run_otter.py`` are kept byte for byte. See docs/gradescope.md.

    python -m autograder.authoring.gradescope [--hidden-visibility V] [ASSIGNMENT ...]
    # -> build/<a>/<a>-gradescope.zip
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from .assign import ensure_zip
from .layout import ASSIGNMENTS, Layout, check_assignment

PYTHON = "/opt/autograder-env/bin/python"
# Gradescope's visibility values (its results.json spec); for the tests of hidden cases, whose
# failures carry the named-mistake messages. "Public Tests" (otter's summary) stays visible.
VISIBILITIES = ("hidden", "after_published", "after_due_date", "visible")
RUN = """#!/usr/bin/env bash
# The sealed judge (autograder.running.entry.run_autograder), not otter's single-kernel
# runner. It writes /autograder/results/results.json, grader errors included; this script
# writes one itself only when the judge cannot start at all (a broken or missing grading env).
PY={python}
RESULTS=/autograder/results/results.json
"$PY" -m autograder.running.entry.run_autograder --hidden-visibility {visibility}
status=$?
if [ "$status" -ne 0 ] && [ ! -s "$RESULTS" ]; then
    mkdir -p /autograder/results
    cat > "$RESULTS" <<'JSON'
{{"score": 0, "output": "Grader error: the autograder could not start (its Python environment at /opt/autograder-env is missing or broken; see the autograder output), so this submission was NOT graded and this 0 is not your score. Please contact the course staff.", "tests": [], "stdout_visibility": "hidden"}}
JSON
fi
exit "$status"
"""
ENVIRONMENT = "# unused: setup.sh builds (or finds) the venv /opt/autograder-env\nname: otter-env\n"
WHEELS = "wheels/"
REPRODUCIBLE = {"SOURCE_DATE_EPOCH": "315532800"}  # same sources -> same wheel bytes -> cache hit


def torch_spec(pyproject: Path) -> str:
    """The pinned torch requirement of the package (``torch==X``), for setup.sh."""
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = [d.replace(" ", "") for d in deps if d.replace(" ", "").startswith("torch==")]
    if len(pins) != 1:
        raise ValueError(f"{pyproject}: expected one pinned torch==X dependency, found {pins}")
    return pins[0]


def build_wheel(root: Path, into: Path) -> Path:
    """The ``autograder`` wheel of the checkout at ``root`` (``make image`` and the zips), from
    clean so that a deleted module cannot linger in setuptools' build/lib; one build of the
    checkout at a time (two at once delete each other's ``root/build/lib``)."""
    (root / "build").mkdir(exist_ok=True)
    with open(root / "build" / ".wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in [root / "build" / "lib", *(root / "build").glob("bdist.*")]:
            shutil.rmtree(stale, ignore_errors=True)
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q",
                        "wheel", "--no-deps", "--no-build-isolation", str(root), "-w",
                        str(into)], check=True, env={**os.environ, **REPRODUCIBLE})
    wheels = sorted(into.glob("autograder-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one autograder wheel in {into}, found {len(wheels)}")
    return wheels[0]


def scripts(visibility: str, spec: str) -> dict[str, str]:
    """The files replaced in otter's zip: setup.sh, run_autograder, environment.yml."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"hidden visibility {visibility!r}: one of {', '.join(VISIBILITIES)}")
    setup = (Path(__file__).with_name("gradescope_setup.sh").read_text(encoding="utf-8")
             .replace("@TORCH_SPEC@", spec))
    return {"setup.sh": setup, "run_autograder": RUN.format(python=PYTHON, visibility=visibility),
            "environment.yml": ENVIRONMENT}


def gradescope_zip(src: Path, dst: Path, *, hidden_visibility: str = "after_published",
                   root: Path | None = None, wheel: Path | None = None) -> Path:
    """Write ``dst``: ``src`` with the replaced scripts (executable), the rest unchanged, and
    ``wheels/`` (the ``autograder`` wheel and the pinned deps' lock) for setup.sh. ``root``:
    the checkout (default: this package's); ``wheel``: a prebuilt wheel (else built here)."""
    root = root or Path(__file__).resolve().parents[2]
    replaced = scripts(hidden_visibility, torch_spec(root / "pyproject.toml"))
    with tempfile.TemporaryDirectory() as tmp:
        wheel = wheel or build_wheel(root, Path(tmp))
        with zipfile.ZipFile(src) as zin:
            missing = set(replaced) - set(zin.namelist())
            if missing:
                raise ValueError(f"{src} has no {', '.join(sorted(missing))}: not otter's zip?")
            with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
                for info in zin.infolist():
                    if info.filename in replaced:
                        new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                        new.external_attr = 0o100755 << 16
                        zout.writestr(new, replaced[info.filename])
                    else:
                        zout.writestr(info, zin.read(info.filename))
                if not any(n.startswith("files/") for n in zin.namelist()):
                    # otter grade's Dockerfile has `ADD files* ...`, which fails on no match
                    zout.writestr(zipfile.ZipInfo("files/"), b"")
                zout.write(wheel, WHEELS + wheel.name)
                zout.write(root / "docker" / "requirements.lock", WHEELS + "requirements.lock")
    return dst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.authoring.gradescope",
                                     description="Write build/<a>/<a>-gradescope.zip.")
    parser.add_argument("assignments", nargs="*", metavar="ASSIGNMENT",
                        help=f"default: {' '.join(ASSIGNMENTS)}")
    parser.add_argument("--hidden-visibility", choices=VISIBILITIES, default="after_published",
                        help="when students see the results (and named-mistake messages) of "
                             "hidden tests on Gradescope (default: after_published)")
    args = parser.parse_args(argv)
    layout = Layout.at(".")
    try:
        names = [check_assignment(a) for a in (args.assignments or ASSIGNMENTS)]
    except ValueError as exc:
        parser.error(str(exc))
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(layout.root, Path(tmp))
        for name in names:
            # as `autograder grade` does: rebuilt when missing or older than its master, so an
            # edit made without `make assign` is never shipped stale
            src = ensure_zip(name, layout)
            dst = gradescope_zip(src, src.with_name(f"{name}-gradescope.zip"),
                                 hidden_visibility=args.hidden_visibility, root=layout.root,
                                 wheel=wheel)
            print(f"{name}: {dst} (hidden tests: {args.hidden_visibility})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
