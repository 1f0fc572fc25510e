"""The prepared GPU check (gpu/check.py) on this CPU machine: without CUDA it refuses unless
asked (``--allow-cpu``). Its dry run on the CPU (the same verdicts and device report it uses on
a GPU machine: host, a worker in each confinement mode, fork order, TF32 error, with ``meta``
for the device) runs once, from test_cli.py's private checkout in its fallback confinement
(``container``), where a worker without the judge's uid must still reach its imports. What only
CUDA can show is left to a machine that has one (docs/runners.md)."""

from __future__ import annotations

import subprocess
import sys

from notebooks import ROOT


def test_gpu_check_refuses_without_cuda_unless_asked():
    proc = subprocess.run([sys.executable, str(ROOT / "gpu" / "check.py")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2
    assert "no CUDA device" in proc.stderr
