"""Does it install and grade on other people's machines?

- torch 2.13.0+cpu comes from PyTorch's CPU index (``TORCH_INDEX_URL``) with pip's configuration
  and local wheel folders switched off, as on an ordinary machine; a local simple index holding
  the CPU wheel stands in for PyTorch's. With the index pointing nowhere: one clear line.
- The CUDA wheelhouse stages torch's own dependencies once; ``make grade-gpu`` refuses without a
  GPU before any download; the CUDA image grades on the CPU behind the test-only switch.
- A clean venv holding only the students' requirements runs ``otter check`` and
  ``grader.check``, and stock ``otter run`` there (no ``autograder`` package) stops loudly.
"""

from __future__ import annotations

import csv
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest

from autograder.authoring.layout import ASSIGNMENTS
from conftest import engine_problem, image_problem, need, shared_dir
from notebooks import ROOT

sys.path.insert(0, str(ROOT / "docker"))
import torch_wheel

NOWHERE = "file:///nonexistent/torch-index/simple"
# what points pip at a wheel or an index, besides its configuration file
PIP_SOURCES = ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX",
               "PIP_CONSTRAINT", "PIP_REQUIREMENT")


def ordinary_machine(**extra: str) -> dict[str, str]:
    """This environment as on an ordinary machine: no pip configuration file and no local
    wheel folder or extra index (this machine's pip config finds the CPU torch wheel on disk).
    PyPI stays reachable."""
    env = {k: v for k, v in os.environ.items() if k not in PIP_SOURCES}
    return {**env, "PIP_CONFIG_FILE": os.devnull, **extra}


def build_image_module():
    spec = importlib.util.spec_from_file_location("build_image", ROOT / "docker" / "build_image.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engine_or_skip():
    from autograder.running.runners.docker_engine import engine

    need(engine_problem())
    return engine()


def skip_with_nvidia(client) -> None:
    if "nvidia" in client.info().get("Runtimes", {}):
        pytest.skip("this engine has the NVIDIA runtime: the GPU path is tested on GPU machines")


@pytest.fixture(scope="session")
def torch_index(tmp_path_factory) -> str:
    """A simple index (file:// URL) holding only the CPU torch wheel, standing in for
    https://download.pytorch.org/whl/cpu. The wheel is fetched as this machine is set up to
    (PyTorch's index, or pip's configured folders), once per test run: the first xdist worker
    to need it builds it under a lock, the other reuses it (the students' venv and the fresh
    machine's image build are on either worker)."""
    shared = shared_dir(tmp_path_factory)
    root = shared / "torch-index"
    with open(shared / "torch-index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "simple" / "torch" / "index.html").exists():
            shutil.rmtree(root, ignore_errors=True)  # a worker stopped half way
            root.mkdir()
            torch_wheel.download(str(root))
            (wheel,) = root.glob("torch-*.whl")
            page = root / "simple" / "torch"
            page.mkdir(parents=True)
            page.joinpath("index.html").write_text(
                f'<!DOCTYPE html>\n<html><body><a href="../../{quote(wheel.name)}">'
                f"{wheel.name}</a></body></html>\n")
    return (root / "simple").as_uri()


# ---- the CUDA wheelhouse ----------------------------------------------------------------------

def _wheels(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".complete").touch()  # as build_image leaves a finished download
    for name in names:
        (folder / name).write_bytes(f"{folder.name}/{name}".encode())


def test_cuda_wheelhouse_stages_shared_wheels_once(tmp_path, monkeypatch):
    """torch's own dependencies are in the pinned deps and in the CUDA download: is each
    staged once (the lock's copy, even at another version), twice in a row?"""
    build_image = build_image_module()
    monkeypatch.setattr(build_image, "BUILD", tmp_path)
    _wheels(tmp_path / "wheelhouse", "filelock-4.3.1-py3-none-any.whl",
            "Jinja2-3.1.6-py3-none-any.whl", "sympy-1.14.0-py3-none-any.whl",
            "otter_grader-7.0.0-py3-none-any.whl")
    _wheels(tmp_path / f"torch-{build_image.cuda_build()}", "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl",
            "filelock-4.3.1-py3-none-any.whl", "jinja2-3.1.6-py3-none-any.whl",
            "sympy-1.13.3-py3-none-any.whl",
            "nvidia_cublas-13.1.1.3-py3-none-manylinux_2_27_x86_64.whl")
    context = tmp_path / "context-cuda"
    for _ in range(2):  # a second build stages the same folder again
        build_image.link_wheelhouse("cuda", context)
    staged = sorted(p.name for p in (context / "wheelhouse").iterdir())
    assert staged == ["Jinja2-3.1.6-py3-none-any.whl", "filelock-4.3.1-py3-none-any.whl",
                      "nvidia_cublas-13.1.1.3-py3-none-manylinux_2_27_x86_64.whl",
                      "otter_grader-7.0.0-py3-none-any.whl", "sympy-1.14.0-py3-none-any.whl",
                      "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"]
    assert (context / "wheelhouse" / "sympy-1.14.0-py3-none-any.whl").samefile(
        tmp_path / "wheelhouse" / "sympy-1.14.0-py3-none-any.whl")  # a link, not a copy


# ---- the CPU torch wheel: found, or one clear line --------------------------------------------

def _only_the_line(proc: subprocess.CompletedProcess, url: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert torch_wheel.not_found_message(url) in proc.stderr.splitlines(), out
    assert "Traceback" not in out and "No matching distribution" not in out, out


@pytest.mark.slow
def test_make_install_without_the_torch_wheel_says_where_it_looked(tmp_path):
    """``make install`` with the index pointing nowhere: one line naming TORCH_INDEX_URL and
    how to point at a wheel, not pip's traceback."""
    proc = subprocess.run(["make", "install", f"VENV={tmp_path / 'venv'}",
                           f"TORCH_INDEX_URL={NOWHERE}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=ordinary_machine())
    _only_the_line(proc, NOWHERE)
    assert "PIP_FIND_LINKS" in proc.stderr and NOWHERE in proc.stderr
    assert not (tmp_path / "venv" / ".installed").exists()


def test_image_build_without_the_torch_wheel_stops_before_any_download(tmp_path):
    engine_or_skip()
    proc = subprocess.run([sys.executable, "docker/build_image.py", "--variant", "cpu",
                           "--build-dir", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          env=ordinary_machine(TORCH_INDEX_URL=NOWHERE,
                                               AUTOGRADER_IMAGE="autograder-never-built"))
    _only_the_line(proc, NOWHERE)
    assert not (tmp_path / "wheelhouse").exists()  # the deps are not fetched first


@pytest.mark.extended
@pytest.mark.slow
def test_fresh_machine_builds_the_cpu_image_from_the_torch_index(tmp_path, torch_index):
    """pip's configuration and folders off, TORCH_INDEX_URL at the stand-in index, the other
    wheels from PyPI: does the wheelhouse build, and the CPU image with the CPU torch in it?"""
    from autograder.running.runners.docker_engine import IMAGE_REPOSITORY

    client = engine_or_skip()
    repository = f"{IMAGE_REPOSITORY}-fresh-machine-test"
    try:
        proc = subprocess.run([sys.executable, "docker/build_image.py", "--variant", "cpu",
                               "--build-dir", str(tmp_path)], cwd=ROOT, capture_output=True,
                              text=True, timeout=900,
                              env=ordinary_machine(TORCH_INDEX_URL=torch_index,
                                                   AUTOGRADER_IMAGE=repository))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        (wheel,) = (tmp_path / "torch-cpu").glob("*.whl")
        assert wheel.name.startswith("torch-2.13.0+cpu-")
        assert len(list((tmp_path / "wheelhouse").glob("*.whl"))) > 50
        out = client.containers.run(f"{repository}:cpu", ["python", "-c",
                                    "import otter, torch; print(torch.__version__)"],
                                    remove=True, network_mode="none")
        assert out.decode().strip() == "2.13.0+cpu"
    finally:
        try:
            client.images.remove(f"{repository}:cpu")  # untags; the layers stay cached
        except Exception:  # noqa: BLE001 - the build failed before tagging
            pass


# ---- the CUDA image, without a GPU ------------------------------------------------------------

def test_grade_gpu_refuses_without_a_gpu_before_any_download(tmp_path):
    """What ``make grade-gpu`` runs first: a driver that runs the CUDA build (nvidia-smi's test
    double says 550) but no GPU in containers -> the engine's reason, and nothing of the 2.6 GB
    of CUDA wheels fetched. (No driver at all, or too old a one: test_cuda_build.py.)"""
    from test_cuda_build import fake_nvidia_smi

    client = engine_or_skip()
    skip_with_nvidia(client)
    smi = fake_nvidia_smi(tmp_path / "bin", driver="550.54.15")
    build = tmp_path / "build"
    proc = subprocess.run([sys.executable, "docker/build_image.py", "--variant", "cuda",
                           "--require-gpu", "--build-dir", str(build)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{smi}:{os.environ['PATH']}"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error: no GPU grading here" in proc.stderr and "NVIDIA container toolkit" in \
        proc.stderr, proc.stderr
    assert not build.exists() or not any(build.iterdir())


CUDA_IMAGE_PROBLEM = image_problem("cuda")  # 2.6 GB of wheels: CI builds no CUDA image


@pytest.mark.slow
@pytest.mark.skipif(CUDA_IMAGE_PROBLEM is not None, reason=CUDA_IMAGE_PROBLEM or "")
def test_cuda_image_grades_both_solutions_on_the_cpu_behind_the_test_switch(tmp_path):
    from autograder.running.runners import docker_engine, registry

    client = docker_engine.engine()
    skip_with_nvidia(client)
    runner, why = registry.resolve("docker-gpu")
    assert runner is None and "no NVIDIA driver" in why  # never a silent CPU run
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "-p",
                           str(ROOT / "solutions"), "-o", str(tmp_path), "--runner",
                           "docker-gpu", "--jobs", "2", "--no-reports",
                           # a cold start of the CUDA build (5 GB image) on a loaded machine took
                           # minutes: one solution ran past the default limit here
                           "--submission-timeout", "900"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, docker_engine.CUDA_ON_CPU_VARIABLE: "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "ON THE CPU" in proc.stdout + proc.stderr
    for assignment in ASSIGNMENTS:
        with open(tmp_path / assignment / "final_grades.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["file"] != "points-per-question"]
        assert rows and all(float(r["percent_correct"]) == 1.0 and
                            r["grading_status"] == "Completed" for r in rows), rows


# ---- the students' environment ----------------------------------------------------------------



def STUDENT_ENV(func):  # noqa: N802 - used as a mark
    """The marks of the tests that use the students' venv: one xdist group, so one worker
    builds it (a minute of pip) and the other never builds a second; the suite's extended
    part (docs/testing.md)."""
    return pytest.mark.extended(pytest.mark.xdist_group("student-env")(func))


# ipykernel's shutdown on a loaded machine: its IOPub thread sends on a ZMQ socket the kernel
# has already closed, and prints this traceback after the run's result (stop 41: "All tests
# passed!", exit 0, then the traceback). Not the student's run nor ours; any other traceback is.
KERNEL_SHUTDOWN_NOISE = ("zmq", "Socket operation on non-socket")


def tracebacks_besides_kernel_shutdown(out: str) -> list[str]:
    """Each traceback printed in ``out`` that is not ipykernel's ZMQ shutdown race."""
    blocks = out.split("Traceback (most recent call last)")[1:]
    return [block for block in blocks
            if not all(word in block for word in KERNEL_SHUTDOWN_NOISE)]


def test_only_the_kernel_shutdown_race_is_forgiven():
    race = ("All tests passed!\nTraceback (most recent call last):\n  File \".../zmq/sugar/"
            "socket.py\", line 1, in send\nzmq.error.ZMQError: Socket operation on non-socket\n")
    other = "Traceback (most recent call last):\n  File \"x.py\"\nZeroDivisionError: division by zero"
    assert tracebacks_besides_kernel_shutdown(race) == []
    assert len(tracebacks_besides_kernel_shutdown(race + other)) == 1
    assert tracebacks_besides_kernel_shutdown("Traceback in a test name") == []


def students_machine() -> dict[str, str]:
    """This environment as on a student's machine, where Python writes the bytecode of what
    it imports (``PYTHONDONTWRITEBYTECODE``, set on CI machines, would compile torch's modules
    again in every process)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@pytest.fixture(scope="module")
def student_python(tmp_path_factory, torch_index) -> Path:
    """A clean venv holding only student_templates/requirements.txt, installed as on an
    ordinary machine, with the torch index line pointed at the stand-in."""
    root = tmp_path_factory.mktemp("student-env")
    text = (ROOT / "student_templates" / "requirements.txt").read_text()
    line = f"--extra-index-url {torch_wheel.DEFAULT_INDEX}"
    assert line in text.splitlines()
    (root / "requirements.txt").write_text(text.replace(torch_wheel.DEFAULT_INDEX, torch_index))
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    # --no-compile: pip's bytecode of every installed file (half a minute, mostly modules no
    # test here imports) proves nothing about the requirements; the students' processes
    # below write the bytecode of what they import (students_machine)
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile",
                           "--disable-pip-version-check", "-r", str(root / "requirements.txt")],
                          capture_output=True, text=True, timeout=900, env=ordinary_machine())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


@pytest.mark.slow
@STUDENT_ENV
def test_students_get_the_cpu_torch_and_no_autograder(student_python):
    code = ("import importlib.util, torch; "
            "print(torch.__version__, importlib.util.find_spec('autograder'))")
    # cwd: not the checkout, whose autograder/ `python -c` would find
    out = subprocess.run([str(student_python), "-c", code], capture_output=True, text=True,
                         check=True, cwd=student_python.parents[2],
                         env=students_machine()).stdout.split()
    assert out == ["2.13.0+cpu", "None"]
    listed = subprocess.run([str(student_python), "-m", "pip", "list"], capture_output=True,
                            text=True, check=True).stdout
    assert "nvidia" not in listed.lower()


@pytest.mark.slow
@STUDENT_ENV
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_otter_check_and_grader_check_in_the_students_env(student_python, assignment,
                                                          tmp_path):
    """``otter check`` on the template (failures explained) and on the solution (all passed),
    and the solution's ``grader.check`` cells run in the students' own kernel."""
    bin_dir = student_python.parent
    tests = ROOT / "student_templates" / assignment / "tests"
    for notebook, expected in [(ROOT / "student_templates" / assignment / f"{assignment}.ipynb",
                                "❌ Test case failed"),
                               (ROOT / "solutions" / f"{assignment}.ipynb", "All tests passed!")]:
        work = tmp_path / notebook.parent.name
        work.mkdir()
        (work / notebook.name).write_bytes(notebook.read_bytes())
        proc = subprocess.run([str(bin_dir / "otter"), "check", notebook.name, "-t", str(tests)],
                              cwd=work, capture_output=True, text=True, timeout=300,
                              env=students_machine())
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and expected in out, out
        assert not tracebacks_besides_kernel_shutdown(out), out

    folder = tmp_path / "notebook"
    folder.mkdir()
    (folder / "tests").symlink_to(tests)
    nb = nbformat.read(ROOT / "solutions" / f"{assignment}.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.prefix)"))
    nbformat.write(nb, folder / f"{assignment}.ipynb")
    proc = subprocess.run([str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook",
                           "--execute", "--inplace", f"{assignment}.ipynb"], cwd=folder,
                          capture_output=True, text=True, timeout=600, env=students_machine())
    assert proc.returncode == 0, proc.stderr[-3000:]
    ran = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    assert ran.cells[0].outputs[0]["text"].split() == ["KERNEL", str(student_python.parents[1])]
    checks = [c for c in ran.cells if c.cell_type == "code" and "grader.check(" in c.source]
    assert checks
    for cell in checks:
        text = "".join(str(o.get("data", {}).get("text/plain", "")) + o.get("text", "")
                       for o in cell.outputs)
        assert "passed" in text and "failed" not in text, (cell.source, text)


@pytest.mark.slow
@STUDENT_ENV
def test_stock_otter_run_without_the_autograder_package_fails_loudly(student_python, zips,
                                                                    tmp_path):
    """The solution (full marks) through stock ``otter run`` where ``autograder`` is not installed:
    a non-zero exit naming the missing package, and no score, never a quietly low one."""
    assignment = "autograd-exercises"
    zip_path = zips[assignment]
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([str(student_python.parent / "otter"), "run", "-a", str(zip_path),
                           "-o", str(out), str(ROOT / "solutions" / f"{assignment}.ipynb")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=students_machine())
    assert proc.returncode != 0, proc.stdout[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: No module named 'autograder'", proc.stderr[-3000:]
    assert "Total Score" not in proc.stdout and not (out / "results.json").exists()
