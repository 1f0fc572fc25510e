"""Stock ``otter grade`` for ``throughput.py``: the offline base of ``benchmarks/stock-otter/``
(Debian python3, torch, otter-grader from our wheelhouse, plus our package: the hidden tests
import it), the zip's setup files rewritten by that recipe, run through the labelled buildx
shim (``docker/otter_grade_legacy.py``)."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from measuring import timed

ROOT = Path(__file__).resolve().parent.parent
STOCK = ROOT / "benchmarks" / "stock-otter"  # the offline stock-otter recipe (its README)
BENCH = ROOT / "build" / "bench"
STOCK_BASE = "bench-otter-offline:7.0.0-torch2.13-cpu"
PY = sys.executable


def stock_base(client) -> None:
    """The offline stock-otter base plus our package. Built once (cached by the engine)."""
    sys.path.insert(0, str(ROOT / "docker"))
    import build_image

    context = BENCH / "stock-base"
    shutil.rmtree(context, ignore_errors=True)
    build_image.link_wheelhouse("cpu", context)
    shutil.copy2(STOCK / "requirements.lock", context / "requirements.lock")
    build_image.our_wheel(context / "app")
    dockerfile = (STOCK / "Dockerfile").read_text()
    dockerfile += ("\n# benchmark only: the hidden tests import our package\n"
                   "COPY app /tmp/app\n"
                   "RUN /opt/otter-env/bin/pip install --no-cache-dir --no-index --no-deps "
                   "/tmp/app/*.whl && rm -rf /tmp/app\n")
    (context / "Dockerfile").write_text(dockerfile)
    build_image.base_image(client)
    for chunk in client.api.build(path=str(context), tag=STOCK_BASE, rm=True, forcerm=True,
                                  decode=True):
        if "error" in chunk:
            raise SystemExit(f"stock base build failed: {chunk['error']}")


def patched_zip(assignment: str) -> Path:
    """The stock-otter recipe's rewrite of our otter zip's setup files (no conda, no downloads)."""
    source = ROOT / "build" / assignment / f"{assignment}-autograder.zip"
    target = BENCH / f"{assignment}-offline.zip"
    subprocess.run([PY, str(STOCK / "patch_autograder_zip.py"), str(source), str(target)],
                   check=True, stdout=subprocess.DEVNULL)
    with zipfile.ZipFile(target, "a") as zf:
        if not any(n.startswith("files/") for n in zf.namelist()):
            # otter's Dockerfile has `ADD files* ...`: the classic builder (no buildx here)
            # fails when nothing matches, BuildKit does not; an empty placeholder either way
            zf.writestr("files/.keep", "")
    return target


def not_completed(grades: Path) -> dict[str, str]:
    """file -> otter's grading status, for every row of its ``final_grades.csv`` that otter
    could not grade (a timeout, a container that failed)."""
    with open(grades, newline="") as f:
        return {row["file"]: row["grading_status"] for row in csv.DictReader(f)
                if row["file"].endswith(".ipynb") and row["grading_status"] != "Completed"}


def run_stock(assignments: tuple[str, ...], batch: Path, out: Path, jobs: int, timeout: int,
              logs: Path, tag: str = "") -> dict:
    """One `otter grade` per assignment (otter grades one zip at a time), times summed, and
    how many notebooks otter could not grade (the endless one: its timeout)."""
    total = {"seconds": 0.0, "peak_extra_memory_mb": 0, "peak_grading_memory_mb": 0}
    for assignment in assignments:
        files = sorted(str(p) for p in (batch / assignment).glob("*.ipynb"))
        (out / assignment).mkdir(parents=True, exist_ok=True)
        log = logs / f"stock-{assignment}{tag}.log"
        result = timed([PY, str(ROOT / "docker" / "otter_grade_legacy.py"), "grade",
                        "-n", f"bench-{assignment}", "-a", str(patched_zip(assignment)),
                        "--image", STOCK_BASE, "--containers", str(jobs),
                        "--timeout", str(timeout), "-o", str(out / assignment), *files],
                       log, check=False)
        if not (out / assignment / "final_grades.csv").exists():
            tail = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"otter grade wrote no final_grades.csv for {assignment}:\n{tail}")
        failed = not_completed(out / assignment / "final_grades.csv")
        if len(failed) == len(files):  # a stock run that failed fast would look fast
            raise SystemExit(f"otter grade failed on every {assignment} notebook: "
                             f"{next(iter(failed.values()))}")
        total["not_completed"] = total.get("not_completed", 0) + len(failed)
        total["seconds"] += result["seconds"]
        for key in ("peak_extra_memory_mb", "peak_grading_memory_mb"):
            total[key] = max(total[key], result[key])
    total["seconds"] = round(total["seconds"], 2)
    return total
