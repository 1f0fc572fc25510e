"""The staff command line as staff run it: from any folder, with every argument checked before
any work starts (one line, exit status 2), ``-p`` a folder or one notebook; and a checkout
under a private (0700) folder, where the sandbox uid cannot pass through the folders above the
venv, graded with full marks by the GPU check's container confinement and the sealed runner.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.layout import ASSIGNMENTS, PROJECT_ENV, find_project
from notebooks import ROOT
from points import EXERCISES

CLI = [sys.executable, "-m", "autograder"]
# Run with the private checkout's python: the solution plus a cell importing what no warm-up
# imported (the standard library's, torch's lazily loaded ones), judged with the container
# confinement; prints the result document's points and the worker's output. Its zygote does
# not rehearse, as the CLI's for one notebook: the rehearsal (a second of CPU) would only
# import beforehand some of what the worker must reach after its uid drop.
LAZY_IMPORTS = """
import json, sys
from pathlib import Path
import nbformat
from autograder.running.judge import uids, zygotes
from autograder.running.judge.core import judge
from autograder.running.limits import Limits
from autograder.running.judge.tests_zip import load_tests
root, work = Path(sys.argv[1]), Path(sys.argv[2])
nb = nbformat.read(root / "solutions" / "autograd-exercises.ipynb", as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(
    "import colorsys, wave, torch.utils.benchmark, torch.distributions.von_mises\\n"
    "print('LAZY-IMPORTS-OK', colorsys.__name__, torch.utils.benchmark.__name__)"))
nbformat.write(nb, work / "lazy.ipynb")
tests = load_tests(root / "build" / "autograd-exercises" / "autograd-exercises-autograder.zip")
zygotes.prestart("container", rehearse=False)
with uids.lease() as uid:
    doc = judge(work / "lazy.ipynb", "lazy.ipynb", "autograd-exercises", tests, seed=3,
                uid=uid, limits=Limits(confinement="container"))
print(json.dumps({"points": doc.points, "output": doc.output, "status": doc.status}))
"""
KNOWN = ", ".join(ASSIGNMENTS)
SOLUTION = ROOT / "solutions" / "autograd-exercises.ipynb"


def run(args: list[str], cwd: Path, env: dict | None = None, python: list[str] = CLI,
        timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*python, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})})


def one_line_error(proc: subprocess.CompletedProcess, expected: str) -> None:
    """Exit status 2, nothing on stdout, and exactly ``error: <expected>`` on stderr."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [f"error: {expected}"], proc.stderr


# -- arguments are checked before anything starts (no zip, no container, no zygote) ----------
@pytest.mark.parametrize("runner", ["auto", "sealed", "docker-fork"])
def test_unknown_assignment_is_one_line_before_any_work(tmp_path, runner):
    submissions = tmp_path / "in"
    submissions.mkdir()
    shutil.copy(SOLUTION, submissions / "a.ipynb")
    build, out = tmp_path / "build", tmp_path / "out"
    proc = run(["--build", str(build), "grade", "-p", "in", "-a", "foo", "-o", "out",
                "--runner", runner], cwd=tmp_path)
    one_line_error(proc, f"-a foo: no such assignment ({KNOWN})")
    assert not build.exists() and not out.exists()  # no otter assign, no results folder


def test_missing_path_is_one_line_before_any_container(tmp_path):
    build = tmp_path / "build"
    proc = run(["--build", str(build), "grade", "-p", "nowhere", "-o", "out",
                "--runner", "docker-fork"], cwd=tmp_path)
    one_line_error(proc, "-p nowhere: no such file or folder")
    assert not build.exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, expected", [
    (["-p", "notes.txt"], "-p notes.txt: not a folder of submissions or a .ipynb notebook"),
    (["-p", "in", "-o", "notes.txt"], "-o notes.txt: exists and is not a folder"),
    (["-p", "in", "--roster", "roster.csv"], "--roster roster.csv: no such file"),
    (["-p", "in", "--jobs", "0"], "--jobs 0: must be at least 1"),
    (["-p", "in", "--timeout", "0"], "--timeout 0: must be a positive number of seconds"),
    (["-p", "in", "--question", "q1_accumulation", "--runner", "otter"],
     "--question needs the sealed runner (otter runs whole notebooks)"),
])
def test_bad_grade_arguments_are_one_line(tmp_path, args, expected):
    (tmp_path / "in").mkdir()
    (tmp_path / "notes.txt").write_text("not a notebook\n")
    one_line_error(run(["grade", *args], cwd=tmp_path), expected)


def test_assign_names_an_unknown_assignment(tmp_path):
    one_line_error(run(["assign", "foo", "--check"], cwd=tmp_path),
                   f"assign foo: no such assignment ({KNOWN})")


@pytest.mark.parametrize("how", ["--project", PROJECT_ENV])
def test_a_folder_that_is_no_project_is_one_line(tmp_path, how):
    (tmp_path / "in").mkdir()
    args, env = (["--project", str(tmp_path)], None) if how == "--project" else (
        [], {PROJECT_ENV: str(tmp_path)})
    proc = run([*args, "grade", "-p", "in"], cwd=tmp_path, env=env)
    one_line_error(proc, f"{how} ({tmp_path}): not an autograder project "
                         f"(no assignments/ folder)")


def test_help_says_where_the_project_comes_from(tmp_path):
    proc = run(["--help"], cwd=tmp_path)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "--project" in text and PROJECT_ENV in text and "installed from" in text


def test_find_project_order(tmp_path, monkeypatch):
    """--project, then $AUTOGRADER_PROJECT, then the installed package's checkout."""
    other = tmp_path / "other"
    (other / "assignments").mkdir(parents=True)
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    assert find_project(cwd=tmp_path) == ROOT  # this checkout, wherever the command runs
    monkeypatch.setenv(PROJECT_ENV, str(other))
    assert find_project(cwd=tmp_path) == other.resolve()
    assert find_project(ROOT, cwd=tmp_path) == ROOT


# -- grading from another folder, one notebook ----------------------------------------------
def _totals(out: Path, assignment: str) -> dict[str, tuple[float, float]]:
    """file -> (points earned, points possible) from final_grades.csv."""
    with open(out / assignment / "final_grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    possible = next(float(r["total_points_earned"]) for r in rows
                    if r["file"] == "points-per-question")
    return {r["file"]: (float(r["total_points_earned"]), possible)
            for r in rows if r["file"] != "points-per-question"}


@pytest.mark.slow
@pytest.mark.needs_root
def test_grades_one_notebook_from_another_folder(checkout_zips, tmp_path):
    shutil.copy(SOLUTION, tmp_path / "mine.ipynb")
    proc = run(["grade", "-p", "mine.ipynb", "-o", "out", "--runner", "sealed", "--seed", "7"],
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    earned, possible = _totals(tmp_path / "out", "autograd-exercises")["mine.ipynb"]
    assert earned == possible > 0
    assert (tmp_path / "out" / "autograd-exercises" / "feedback").is_dir()
    assert not (tmp_path / "build").exists()  # build outputs go to the project's build/


# -- a checkout under a private folder ------------------------------------------------------
def _private_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """This checkout's files (what a clone holds: no build outputs) and a copy of its venv
    (hard links, seconds), both under a 0700 folder: the sandbox uid cannot pass through it,
    as with a checkout in a home folder or under ``mktemp -d``."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.chmod(private, 0o700)
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             "-z"], cwd=ROOT, capture_output=True)
    clone = private / "clone"
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            if (ROOT / name).is_file():
                (clone / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, clone / name)
    else:  # not a git checkout: the tree without what .gitignore keeps out
        shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "out", "__pycache__", "*.egg-info", ".pytest_cache"))
    # the package's bytecode, as `make bytecode` writes it before the tests: the suite's
    # PYTHONDONTWRITEBYTECODE (and the sandbox's) would have every process here compile the
    # modules it imports
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(clone / "autograder")],
                   check=True)
    venv = private / "venv"
    if subprocess.run(["cp", "-al", sys.prefix, str(venv)]).returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)  # another file system: a real copy
        subprocess.run(["cp", "-a", sys.prefix, str(venv)], check=True)
    return clone, venv


@pytest.mark.extended
@pytest.mark.slow
@pytest.mark.needs_root
@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="copies the venv the tests run in")
def test_checkout_under_a_private_folder_grades_full_marks(zips, tmp_path):
    clone, venv = _private_checkout(tmp_path)
    for assignment, fresh in zips.items():  # this run's zips: no second otter assign
        (clone / "build" / assignment).mkdir(parents=True)
        shutil.copyfile(fresh, clone / "build" / assignment / fresh.name)
    python = [str(venv / "bin" / "python")]
    # the clone's own code first (the copied venv's editable install points at this checkout)
    env = {"PYTHONPATH": str(clone), PROJECT_ENV: ""}
    # where each resolves, without paying torch's import (seconds) for it
    where = run(["-c", "import importlib.util as u; "
                 "print(*(u.find_spec(m).origin for m in ('autograder', 'torch')))"],
                cwd=tmp_path, env=env, python=python)
    mine, theirs = where.stdout.split()
    assert mine.startswith(f"{clone}/") and theirs.startswith(f"{venv}/"), where.stderr

    # the sealed runner (namespaces) on both solutions, run from outside the checkout, with
    # the clone's build/ (a fresh checkout building its zips: test_assign.py)
    proc = run(["-m", "autograder", "grade", "-p", str(clone / "solutions"), "-o", "out",
                "--runner", "sealed", "--seed", "11", "--no-reports"],
               cwd=tmp_path, env=env, python=python)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for assignment in ASSIGNMENTS:
        [(earned, possible)] = _totals(tmp_path / "out", assignment).values()
        assert earned == possible > 0, assignment
        assert (clone / "build" / assignment / f"{assignment}-autograder.zip").is_file()

    # the GPU check's dry run on the CPU (its one run in the suite; test_gpu_check.py), in its
    # fallback confinement (uid, rlimits, no_new_privs; no jail); --sample: the solutions and
    # one q4_device variant of each kind (every variant: test_variants.py)
    out = tmp_path / "gpu-out"
    out.mkdir()
    proc = run([str(clone / "gpu" / "check.py"), "--allow-cpu", "--confinement", "container",
                "--jobs", "2", "--sample"], cwd=clone, env={**env, "OUT": str(out)},
               python=python)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    summary = json.loads((out / "gpu-check.json").read_text())
    assert summary["confinement"] == "container" and not summary["cuda"]
    kinds = [r["kind"] for r in summary["rows"]]
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

    # what the worker imports only when a student asks, in the same confinement
    proc = run(["-c", LAZY_IMPORTS, str(clone), str(tmp_path)], cwd=tmp_path, env=env,
               python=python)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(proc.stdout.splitlines()[-1])
    assert "LAZY-IMPORTS-OK colorsys torch.utils.benchmark" in doc["output"], doc
    assert doc["points"] == EXERCISES and doc["status"] == "graded", doc

