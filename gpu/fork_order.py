"""Fork order: CUDA cannot be used in a child forked after its parent initialised CUDA. The
zygote (``autograder.worker.zygote``) forks every worker, so its warm-up, and the
judge's entry points it is forked from, must leave CUDA untouched.

Each check runs in a fresh Python process: a parent step under a tracer that records every
call that reaches CUDA's driver (``torch.cuda`` functions that initialise or query it, and
``torch._C._cuda_*``), then a fork; the child reports whether torch marks it a bad fork and,
where the machine has CUDA, whether it can allocate on the GPU.

- ``zygote``: the entry points' imports and ``warm_up()``; expected: nothing traced, CUDA not
  initialised, the child not in a bad fork (and, on a GPU, allocating).
- ``control``: the same warm-up, then what a judge does (``torch.cuda.is_available()``) and
  an initialisation (``torch.cuda.init()``); expected: both traced, and on
  a GPU (or with the CUDA wheel on a CPU machine, where torch marks fork-poisoning before the
  driver fails) the child in a bad fork, unable to allocate. With the CPU wheel torch has no
  CUDA state at all: the child cannot be in a bad fork, and only the tracer half proves
  anything (``control_proves_bad_fork`` says which).

    python gpu/fork_order.py [--cuda]      # prints the two reports as JSON
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARENTS = {
    # the three entry points that fork the zygote from themselves (``zygotes.fork_here``)
    "zygote": ("import autograder.running.entry.container, autograder.running.entry.pod\n"
               "import autograder.running.entry.judge_service\n"
               "from autograder.worker.zygote import warm_up\nwarm_up(rehearse=True)\n"),
    "control": ("from autograder.worker.zygote import warm_up\nwarm_up(rehearse=False)\n"
                "import torch\ntorch.cuda.is_available()\ntry:\n    torch.cuda.init()\n"
                "except Exception as exc:\n    NOTE = f'{type(exc).__name__}: {exc}'[:200]\n"),
}
# torch.cuda's functions that start or query the CUDA driver (a C call of torch._C._cuda_*
# does too, but for _cuda_isInBadFork)
DRIVER_CALLS = ("is_available", "device_count", "init", "_lazy_init", "current_device",
                "get_device_name", "get_device_properties", "get_device_capability",
                "synchronize", "mem_get_info", "set_device", "_raw_device_count_nvml",
                "is_bf16_supported", "is_tf32_supported", "memory_allocated")
SCRIPT = r'''
import json, os, sys
sys.path.insert(0, {root!r})
NOTE, touched = "", []
def trace(frame, event, arg):
    if event == "call" and "/torch/cuda/" in frame.f_code.co_filename \
            and frame.f_code.co_name in {driver!r}:
        touched.append("torch.cuda." + frame.f_code.co_name)
    elif event == "c_call" and getattr(arg, "__name__", "").startswith("_cuda_") \
            and arg.__name__ != "_cuda_isInBadFork":
        touched.append("torch._C." + arg.__name__)
sys.setprofile(trace)
{parent}
sys.setprofile(None)
import torch
report = {{"touched": sorted(set(touched)), "initialized": torch.cuda.is_initialized(),
           "note": NOTE, "torch": torch.__version__, "torch_cuda": torch.version.cuda}}
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    child = {{"bad_fork": bool(torch.cuda._is_in_bad_fork())}}
    if {cuda!r}:
        try:
            child["allocated"] = float(torch.ones(8, device="cuda").sum().item()) == 8.0
        except Exception as exc:
            child["allocated"], child["error"] = False, f"{{type(exc).__name__}}: {{exc}}"[:300]
    os.write(w, json.dumps(child).encode())
    os._exit(0)
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
os.waitpid(pid, 0)
report["child"] = json.loads(data)
print(json.dumps(report))
'''


def run(which: str, cuda: bool) -> dict:
    """One check's report, from a fresh Python process (see the module docstring)."""
    code = SCRIPT.format(root=str(ROOT), driver=DRIVER_CALLS, parent=PARENTS[which],
                         cuda=cuda)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"the {which} fork check failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def problems(zygote: dict, control: dict, cuda: bool) -> list[str]:
    """What contradicts the expectations above (empty: the order is right, and the control
    shows the checks can see a wrong one)."""
    found = []
    if zygote["touched"] or zygote["initialized"]:
        found.append(f"the zygote's warm-up touched CUDA: {zygote['touched']}")
    if zygote["child"]["bad_fork"]:
        found.append("a worker forked from the zygote is in a bad fork")
    if cuda and not zygote["child"].get("allocated"):
        found.append(f"a worker forked from the zygote cannot allocate on the GPU: "
                     f"{zygote['child'].get('error')}")
    if not {"torch.cuda.is_available", "torch.cuda.init"} <= set(control["touched"]):
        found.append(f"control: the tracer missed is_available() or init(): "
                     f"{control['touched']}")
    if cuda and not (control["child"]["bad_fork"] and not control["child"].get("allocated")):
        found.append(f"control: a child forked after CUDA's initialisation was not refused "
                     f"({control['child']})")
    return found


def check(cuda: bool) -> dict:
    """Both checks, what they found wrong, and whether the control proved the bad-fork half
    (a GPU, or the CUDA wheel on a CPU machine) or only the tracer half (the CPU wheel)."""
    zygote, control = run("zygote", cuda), run("control", cuda)
    return {"zygote": zygote, "control": control, "problems": problems(zygote, control, cuda),
            "control_proves_bad_fork": bool(control["child"]["bad_fork"])}


if __name__ == "__main__":
    print(json.dumps(check("--cuda" in sys.argv), indent=2))
