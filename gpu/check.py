"""The prepared GPU check: one run, on a machine that has a GPU, torch and pytest but no Docker
and no otter, of everything about CUDA a CPU machine cannot prove.

    make gpu-bundle          # here: build/gpu-bundle/ and the two autograder zips (docs/runners.md)
    bash gpu/run.sh          # there, as root, from a copy carrying those three paths

What it reports (``gpu/device_report.py``, ``gpu/fork_order.py``), each with its problems:
- the host: the driver (``nvidia-smi``) against the CUDA build the image's wheel needs
  (``CUDA_BUILD``, default cu126), the GPUs' compute and MIG modes, the device files' modes
  (a worker's own uid must open them);
- the fork order: the zygote's warm-up leaves CUDA untouched and its child allocates on the
  GPU; the control (a parent that initialised CUDA) gives a child in a bad fork that cannot;
- a confined worker in each mode (``namespaces``, ``container``) that reports CUDA at start
  (one allocation) and runs a CUDA matmul as student code, with its address space, open files
  and threads;
- predict's reference on the GPU against the CPU, in units of the check's tolerance, with TF32
  off (must be under 1) and on;
- both solutions score full marks through the sealed judge (zygote-forked workers in their own
  namespaces with the GPU's device files bound in, no address-space rlimit): the public test
  ``test_pick_device_here`` passes only if the worker itself sees CUDA;
- every wrong q4_device variant loses points on q4_device only, with the feedback sentence
  pinned in its header (the device-change checks move models CPU -> CUDA here, not to the
  simulated ``meta`` device); every correct variant keeps them, and so does an ``advised`` one
  (a mistake the judge only hears of), with its sentence as advice;
- the solution with TF32 turned on in q4_device's cell: full marks, or q4_device's loss named
  ``tf32-enabled`` (on the CPU: full marks, TF32 changes nothing there).

``--allow-cpu`` runs the same on a machine without CUDA (the checks then simulate the device
change with ``meta``): that is how the script itself is tested where no GPU is lent, with
``--sample`` (one notebook per kind besides the solutions).
Writes ``$OUT/gpu-check.json`` when ``OUT`` is set. Exit 0 when every expectation holds.
"""
# ruff: noqa: E402 - the repository goes on sys.path before the imports that need it

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "gpu")]

import device_report
import fork_order

QUESTION = "q4_device"
TF32_SENTENCE = "Your notebook turned on TF32 matmuls"


def cases(sample: bool = False) -> list[tuple[str, str, object, str, str]]:
    """(name, assignment, notebook, kind, feedback sentence) for every notebook graded;
    ``sample``: the solutions and the first notebook of each other kind."""
    import notebooks

    found = []
    for assignment in ("autograd-exercises", "autograd-porting"):
        found.append((f"{assignment}-solution", assignment, notebooks.solution(assignment),
                      "solution", ""))
    porting = notebooks.solution("autograd-porting")
    for v in notebooks.variants():
        if v.assignment == "autograd-porting" and v.question == QUESTION:
            found.append((f"{QUESTION}-{v.name}", v.assignment,
                          notebooks.with_answer(porting, QUESTION, v.source), v.kind, v.feedback))
    answer = porting.cells[notebooks.answer_cells(porting)[QUESTION]].source
    found.append((f"{QUESTION}-tf32-on", "autograd-porting", notebooks.with_answer(
        porting, QUESTION, "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n" +
        answer), "tf32", TF32_SENTENCE))
    return sampled(found) if sample else found


def sampled(found: list) -> list:
    """The solutions and the first case of each other kind, in ``found``'s order."""
    seen = set()
    kept = []
    for case in found:
        if case[3] == "solution" or case[3] not in seen:
            seen.add(case[3])
            kept.append(case)
    return kept


def verdict(doc, kind: str, feedback: str) -> list[str]:
    """What is wrong with this result (a ``ResultDoc``), in words (empty when it is as
    expected)."""
    problems = []
    questions = doc.questions
    if not doc.status.is_clean:
        problems.append(f"status {doc.status}: {doc.error or list(doc.problems)}")
    for q, v in questions.items():
        full = v.points == v.possible
        said = any(feedback in t.message for t in v.tests)
        if kind == "tf32":  # full marks (TF32 within the tolerance, or the CPU), or named
            if not full and (q != QUESTION or not said):
                problems.append(f"{q}: {v.points}/{v.possible} without naming TF32")
        elif kind in ("solution", "correct", "advised") or q != QUESTION:
            if not full:
                failed = [t.message[:300] for t in v.tests if not t.passed]
                problems.append(f"{q}: {v.points}/{v.possible}: {failed}")
            elif kind == "advised" and q == QUESTION and not said:
                problems.append(f"{q}: no test advises {feedback!r}")  # full marks, advice
        elif full:
            problems.append(f"{q}: full marks for a wrong variant")
        elif feedback and not said:
            problems.append(f"{q}: no test says {feedback!r}")
    if not questions:
        problems.append("no questions graded")
    return problems


def confinement(limits, wanted: str):
    """``limits`` with the confinement this machine allows (``auto``: try namespaces)."""
    import dataclasses

    from autograder.running.judge.sandbox import SandboxError
    from autograder.running.judge.zygotes import shared

    if wanted != "auto":
        return dataclasses.replace(limits, confinement=wanted)
    try:
        shared("namespaces")
        return dataclasses.replace(limits, confinement="namespaces")
    except SandboxError as exc:
        print(f"note: no namespace jail here ({exc}); workers run with the container mode's "
              "confinement (own uid, rlimits, no_new_privs)", flush=True)
        return dataclasses.replace(limits, confinement="container")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--allow-cpu", action="store_true",
                        help="run without CUDA (to test this script where no GPU is lent)")
    parser.add_argument("--confinement", choices=("auto", "namespaces", "container"),
                        default="auto",
                        help="the worker's jail: namespaces (the local sealed runner's), "
                             "container (uid, rlimits and no_new_privs only, for runtimes "
                             "without namespaces), auto: namespaces, else container")
    parser.add_argument("--sample", action="store_true",
                        help="grade the solutions and one notebook of each other kind: a dry "
                             "run of the script (tests/test_variants.py grades every variant "
                             "on the CPU); gpu/run.sh grades them all")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 8))
    args = parser.parse_args(argv)
    start = time.monotonic()

    import torch

    from autograder.running.entry.startup import skip_inits

    skip_inits()  # otter's test files only: no pandas/nbconvert needed on the GPU machine
    from autograder.checks.porting.device import changed_device
    from autograder.running.judge.sandbox import gpu_devices
    from autograder.running.judge.tests_zip import load_tests
    from autograder.running.limits import Limits, with_gpu

    cuda = torch.cuda.is_available()
    if not cuda and not args.allow_cpu:
        print("error: torch sees no CUDA device here (use --allow-cpu to test the script)",
              file=sys.stderr)
        return 2
    limits = with_gpu(Limits()) if cuda else Limits()
    limits = confinement(limits, args.confinement)
    zips = {a: ROOT / "build" / a / f"{a}-autograder.zip"
            for a in ("autograd-exercises", "autograd-porting")}
    missing = [str(z) for z in zips.values() if not z.exists()]
    if missing:
        print(f"error: missing {missing}: run `make assign` (or carry build/)", file=sys.stderr)
        return 2
    tests = {a: load_tests(z) for a, z in zips.items()}
    info = {"torch": torch.__version__, "cuda": cuda, "confinement": limits.confinement,
            "device": torch.cuda.get_device_name(0) if cuda else None,
            "moved_to": str(changed_device()), "gpu_device_files": gpu_devices()}
    print(json.dumps(info), flush=True)
    with ThreadPoolExecutor(max_workers=1) as side:  # fresh processes, beside the grading
        forks = side.submit(fork_order.check, cuda)
        sections = report_sections(cuda, limits.confinement)
        rows = grade_all(args, tests, limits)
        sections["fork_order"] = forks.result()
    for name, section in sections.items():
        mark = "ok  " if not section["problems"] else "FAIL"
        print(f"{mark} {name:<22} {json.dumps(section)[:600]}", flush=True)
    for row in rows:
        mark = "ok  " if not row["problems"] else "FAIL"
        print(f"{mark} {row['name']:<45} {row['kind']:<8} {row['points']:>5g} pts "
              f"{row['seconds']:>6.2f} s  {'; '.join(row['problems'])[:400]}")
    failed = [r["name"] for r in rows if r["problems"]]
    failed += [name for name, section in sections.items() if section["problems"]]
    summary = {**info, "graded": len(rows), "failed": failed,
               "seconds": round(time.monotonic() - start, 1), **sections, "rows": rows}
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu-check.json").write_text(json.dumps(summary, indent=2))
    print(f"{len(rows) + len(sections) - len(failed)}/{len(rows) + len(sections)} as expected on "
          f"{'CUDA' if cuda else 'CPU (meta stands in for the device)'} in {summary['seconds']} s")
    return 1 if failed else 0


def report_sections(cuda: bool, confinement: str) -> dict:
    """The host, a worker in each confinement mode, the TF32 error (``device_report``). Where
    no namespace jail can be built (the grading fell back to ``container``), that mode's
    failure is a note, not a problem."""
    sections = {"host": device_report.host(cuda)}
    for mode in ("namespaces", "container"):
        section = device_report.worker(mode, cuda)
        if mode != confinement and confinement != "namespaces" and section["problems"]:
            section["notes"], section["problems"] = section["problems"], []
        sections[f"worker_{mode}"] = section
    sections["tf32_error"] = device_report.tf32_error(cuda)
    return sections


def grade_all(args, tests: dict, limits) -> list[dict]:
    """Every case of ``cases()`` through the sealed judge; a row per case."""
    import nbformat

    from autograder.running.judge import uids
    from autograder.running.judge.core import judge

    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))

    def grade(case) -> dict:
        name, assignment, nb, kind, feedback = case
        path = work / f"{name}.ipynb"
        nbformat.write(nb, path)
        began = time.monotonic()
        with uids.lease() as uid:
            doc = judge(path, path.name, assignment, tests[assignment], seed=args.seed,
                        uid=uid, limits=limits)
        problems = verdict(doc, kind, feedback)
        return {"name": name, "kind": kind, "seconds": round(time.monotonic() - began, 2),
                "points": doc.points,
                "problems": problems}

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(grade, cases(args.sample)))


if __name__ == "__main__":
    sys.exit(main())
