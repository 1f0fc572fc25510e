"""The workers' seccomp filter: refuses new namespaces, mounts and the keyring, and nothing a
notebook needs (threads, fork, subprocesses, torch)."""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path

import nbformat
import pytest

from autograder.worker import seccomp
from notebooks import template

# what a notebook would try; each line prints NAME and the errno name, or "allowed"
PROBE = """
import ctypes, errno, os
_libc = ctypes.CDLL(None, use_errno=True)
def _try(name, *call):
    rc = _libc.syscall(*call)
    print("SYSCALL", name, "allowed" if rc >= 0 else errno.errorcode[ctypes.get_errno()])
_try("unshare-user", {unshare}, 0x10000000)
_try("unshare-net", {unshare}, 0x40000000)
_try("clone-newuser", {clone}, 0x10000000 | 17, 0, 0, 0, 0)
_try("keyctl", {keyctl}, 0, 0, 0, 0, 0)
_try("bpf", {bpf}, 0, 0, 0)
_try("shmget", {shmget}, 0, 1 << 30, 0o1600)
_try("msgget", {msgget}, 0, 0o1600)
"""


def probe_source() -> str:
    _, _, clone, _, refused = seccomp.TABLES[platform.machine()]
    return PROBE.format(unshare=refused["unshare"], clone=clone, keyctl=refused["keyctl"],
                        bpf=refused["bpf"], shmget=refused["shmget"], msgget=refused["msgget"])


def refused_calls(output: str) -> dict[str, str]:
    return dict(re.findall(r"^SYSCALL (\S+) (\S+)$", output, re.M))


EXPECTED = {"unshare-user": "EPERM", "unshare-net": "EPERM", "clone-newuser": "EPERM",
            "keyctl": "EPERM", "bpf": "EPERM", "shmget": "EPERM", "msgget": "EPERM"}
pytestmark = pytest.mark.skipif(platform.machine() not in seccomp.TABLES,
                                reason=f"no seccomp table for {platform.machine()}")


@pytest.mark.parametrize("machine", sorted(seccomp.TABLES))
def test_program_is_well_formed(machine):
    """Does every jump land inside the program, and does it end by allowing?"""
    code = seccomp.program(machine)
    assert len(code) < 4096 and code[-1] == (seccomp.RET, 0, 0, seccomp.RET_ALLOW)
    for i, (op, jt, jf, _) in enumerate(code):
        if op in (seccomp.JEQ, seccomp.JGE, seccomp.JSET):
            assert i + 1 + max(jt, jf) < len(code)


def test_syscall_numbers_match_this_machines_headers():
    """Are the numbers of the refused calls this kernel ABI's (from the C headers)?"""
    header = Path(f"/usr/include/{platform.machine()}-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        header = Path("/usr/include/asm-generic/unistd.h")
    if not header.exists():
        pytest.skip("no kernel headers here")
    numbers = {m[0]: int(m[1]) for m in re.findall(r"#define __NR_(\w+)\s+(\d+)\b",
                                                   header.read_text())}
    _, _, clone, clone3, refused = seccomp.TABLES[platform.machine()]
    assert numbers["clone"] == clone and numbers["clone3"] == clone3
    assert {k: numbers[k] for k in refused} == refused


def test_filter_refuses_namespaces_and_keyring_but_not_what_notebooks_use():
    """In a process with the filter: new namespaces and the keyring are refused with EPERM;
    threads, fork, subprocesses and torch work."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through the pipe
        import contextlib
        import io
        import subprocess
        import threading

        report = {}
        try:
            import ctypes

            ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # no_new_privs: no root needed then
            report["installed"] = seccomp.install()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(probe_source(), {})
            report["calls"] = refused_calls(out.getvalue())
            box = []
            thread = threading.Thread(target=lambda: box.append(1))
            thread.start()
            thread.join()
            report["thread"] = box == [1]
            child = os.fork()
            if child == 0:
                os._exit(7)
            report["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
            report["subprocess"] = subprocess.run(["echo", "hi"], capture_output=True,
                                                  text=True).stdout.strip()
            import torch

            report["torch"] = float(torch.ones(3, requires_grad=True).sum().detach())
        except BaseException as exc:  # noqa: BLE001
            report["error"] = repr(exc)
        os.write(write, json.dumps(report).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        report = json.loads(f.read())
    os.waitpid(pid, 0)
    assert report.get("error") is None, report
    assert report["installed"] is True
    assert report["calls"] == EXPECTED
    assert report["thread"] and report["fork"] == 7 and report["subprocess"] == "hi"
    assert report["torch"] == 3.0


@pytest.mark.slow
@pytest.mark.needs_root
def test_sealed_worker_runs_under_the_filter(zips, tmp_path):
    """Does a notebook graded by the local sealed runner meet the filter (and still score)?"""
    from autograder.running.judge import uids
    from autograder.running.judge.core import judge
    from autograder.running.judge.tests_zip import load_tests
    from autograder.running.limits import Limits

    assignment = "autograd-exercises"
    nb = template(assignment)
    nb.cells.insert(1, nbformat.v4.new_code_cell(probe_source()))
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    zip_path = zips[assignment]
    with uids.lease() as uid:
        doc = judge(path, path.name, assignment, load_tests(zip_path), seed=1, uid=uid,
                    limits=Limits(call_timeout=20, submission_timeout=120))
    assert doc.status.is_clean
    assert refused_calls(doc.output) == EXPECTED, doc.output[-2000:]
