"""Do the numbers feedback prints hold on any CPU? torch and MKL pick their float32 kernels by
the CPU (AVX-512, AVX2 or none; Intel or AMD), and the goldens (``test_reports_slow.py``) are
written on one machine. Every hidden check of every sample submission, run in-process (the
student's code and the judge's reference in one process, as ``test_variants.py`` runs them) in
a fresh process for each choice of kernels, must give the messages the machine's own kernels
give, up to what the goldens allow (``same_up_to_float32``).

The whole suite runs under other kernels too, the variables of ``KERNELS`` before ``make test``
(docs/testing.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from notebooks import ROOT, same_up_to_float32

# one xdist worker holds the module: the machine's own messages are computed once
pytestmark = pytest.mark.xdist_group("cpu-kernels")
SAMPLES = sorted((ROOT / "submissions").rglob("*.ipynb"))
SEED = 3
# torch's own dispatch, MKL's (matrix products) and oneDNN's
KERNELS = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "none": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
             "ONEDNN_MAX_CPU_ISA": "SSE41"},
}
MESSAGES = """
import json, sys
import torch
from autograder.checks import all_checks
from autograder.harness import run_check
from notebooks import namespace, read
found = {"capability": torch.backends.cpu.get_cpu_capability(), "messages": {}}
for path in sys.argv[2:]:
    assignment = path.split("/")[-2]
    env = namespace(read(path))
    for key in all_checks()[assignment]:
        result = run_check(env, assignment, key, int(sys.argv[1]))
        found["messages"][f"{assignment}/{path.split('/')[-1]} {key}"] = result.message
print(json.dumps(found))
"""


def messages(kernels: dict[str, str]) -> dict:
    """Every sample's every check message, computed in a fresh process under ``kernels``."""
    env = {k: v for k, v in os.environ.items() if k not in KERNELS["none"]}
    env.update(kernels, PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    proc = subprocess.run([sys.executable, "-c", MESSAGES, str(SEED), *map(str, SAMPLES)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def own() -> dict:
    return messages({})


@pytest.mark.parametrize("kernels", KERNELS)
def test_do_check_messages_agree_under_other_kernels(own, kernels):
    other = messages(KERNELS[kernels])
    asked = KERNELS[kernels]["ATEN_CPU_CAPABILITY"]
    if other["capability"].lower() != asked:
        pytest.skip(f"this CPU cannot run torch's {asked} kernels")
    assert other["messages"].keys() == own["messages"].keys()
    differ = {key: (text, own["messages"][key]) for key, text in other["messages"].items()
              if not same_up_to_float32(text, own["messages"][key])}
    assert not differ, differ
