"""The prepared GPU check (gpu/check.py) on this CPU machine (``--allow-cpu``): the same
verdicts and device report (host, a worker in each confinement mode, fork order, TF32 error: a
dry run on the CPU) it uses on a GPU machine, with ``meta`` for the device, on the solutions and
one q4_device variant of each kind (``--sample``; tests/test_variants.py grades them all). What only
CUDA can show is left to a machine that has one (docs/runners.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from notebooks import ROOT

pytestmark = pytest.mark.slow


# gpu/check.py grades with the zips under build/ (it carries build/, never builds it):
# conftest's checkout_zips puts this run's there when missing, not left to another test.
# Its other mode, ``--confinement container``, runs in test_cli.py's private checkout (where
# a worker without the judge's uid must still reach its imports).
@pytest.mark.needs_root
@pytest.mark.parametrize("confinement", ["namespaces"])
def test_gpu_check_passes_on_cpu(tmp_path, confinement, checkout_zips):
    proc = subprocess.run([sys.executable, str(ROOT / "gpu" / "check.py"), "--allow-cpu",
                           "--confinement", confinement, "--jobs", "2", "--sample"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "OUT": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    summary = json.loads((tmp_path / "gpu-check.json").read_text())
    assert summary["confinement"] == confinement and not summary["cuda"]
    # --sample: the solutions and one notebook of each kind (every variant: test_variants.py)
    kinds = [row["kind"] for row in summary["rows"]]
    assert sorted(kinds) == ["correct", "solution", "solution", "tf32", "wrong"], kinds
    assert summary["failed"] == []
    # the device report's sections ran, each with its problems (none here)
    assert summary["host"]["image_build"] == "cu126" and summary["host"]["image_needs_driver"]
    for mode in ("namespaces", "container"):  # a real confined worker in each mode
        used = summary[f"worker_{mode}"]["used"]
        assert used["device"] == "cpu" and used["Threads"] and used["open_files"] > 0, used
    assert summary["fork_order"]["zygote"]["touched"] == []
    assert "torch.cuda.init" in summary["fork_order"]["control"]["touched"]
    assert summary["tf32_error"]["tf32_off"] == 0.0  # the CPU against itself: a dry run


def test_gpu_check_refuses_without_cuda_unless_asked():
    proc = subprocess.run([sys.executable, str(ROOT / "gpu" / "check.py")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2
    assert "no CUDA device" in proc.stderr
