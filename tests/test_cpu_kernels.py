"""Do the goldens hold on any CPU? torch, MKL and oneDNN pick their float32 kernels by the CPU
(AVX-512, AVX2 or none; Intel or AMD), and the goldens (``test_reports_slow.py``) are written on
one machine. Every hidden check of every sample submission, run in-process with the seed its
golden names (the student's code and the judge's reference in one process, as
``test_variants.py`` runs them) in a fresh process for each choice of kernels, must say what
its golden pins, up to ``same_up_to_float32``: the golden comparison, without a grader.

The whole suite runs under other kernels too, the variables of ``KERNELS`` before ``make test``
(docs/testing.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from notebooks import ROOT, same_up_to_float32

SAMPLES = sorted((ROOT / "submissions").rglob("*.ipynb"))
GOLDEN = ROOT / "tests" / "files" / "golden"
MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+.!|<>~-])")  # feedback escapes what Markdown reads
# torch's own dispatch, MKL's (matrix products) and oneDNN's; "own": what this CPU picks
KERNELS = {
    "own": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "none": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
             "ONEDNN_MAX_CPU_ISA": "SSE41"},
}
# argv: pairs of (notebook, seed); prints {notebook: {check: first line of its failure}}
FAILURES = """
import json, sys
import torch
from autograder.checks import all_checks
from autograder.harness import run_check
from notebooks import namespace, read
found = {"capability": torch.backends.cpu.get_cpu_capability(), "failures": {}}
for path, seed in zip(sys.argv[1::2], sys.argv[2::2]):
    assignment = path.split("/")[-2]
    env = namespace(read(path))
    failures = found["failures"][path] = {}
    for key in all_checks()[assignment]:
        result = run_check(env, assignment, key, int(seed))
        if not result.passed:
            failures[key] = result.message.splitlines()[0]
print(json.dumps(found))
"""


def golden(notebook) -> str:
    return (GOLDEN / notebook.parent.name / f"{notebook.stem}.md").read_text(encoding="utf-8")


def failures(kernels: dict[str, str]) -> dict:
    """Each sample's failing checks under ``kernels``, with its golden's seed, in a fresh
    process (the variables are read once, when torch first computes)."""
    env = {k: v for k, v in os.environ.items() if k not in KERNELS["none"]}
    env.update(kernels, PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    args = [str(a) for path in SAMPLES
            for a in (path, re.search(r"your own seed (\d+)", golden(path)).group(1))]
    proc = subprocess.run([sys.executable, "-c", FAILURES, *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.extended
@pytest.mark.parametrize("kernels", KERNELS)
def test_does_every_failing_check_say_what_its_golden_pins(kernels):
    found = failures(KERNELS[kernels])
    asked = KERNELS[kernels].get("ATEN_CPU_CAPABILITY")
    if asked and found["capability"].lower() != asked:
        pytest.skip(f"this CPU cannot run torch's {asked} kernels")
    assert any(found["failures"].values())  # the samples' mistakes, at least
    for path in SAMPLES:
        pinned = [MARKDOWN_ESCAPE.sub(r"\1", line[2:]) for line in golden(path).splitlines()
                  if line.startswith("- ")]
        for key, said in found["failures"][str(path)].items():
            assert any(same_up_to_float32(said, line) for line in pinned), (
                f"{path.parent.name}/{path.name} {key} under {kernels} kernels: {said!r} "
                "is in no line of its golden")
