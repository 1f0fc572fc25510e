"""The blind rounds (tests/files/blind/README.md): notebooks written from the contract by someone
who had not read the checks, each labelled correct or wrong on one question. A correct notebook
keeps full marks on every auto-graded question; a wrong one loses points on its labelled
question and only there.

Every notebook is graded as the sealed judge grades it, with the seed the sealed judge gives it
in a run with ``--seed 11`` over the folder of rounds, but in a process forked for it from a
rehearsed parent (``notebooks.Forks``, ``notebooks.graded_here``: the worker's own cell runner,
the zip's test cases run by the judge's ``run_test``). The newest round is also graded through the real CLI with the sealed
judge: its labels are judged on those documents, and each of its notebooks must get the same
points per question both ways.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checks.seeding import submission_seed
from autograder.running.outputs.roster import identity
from notebooks import Forks

ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "files" / "blind"
ROUNDS = sorted(p.name for p in BLIND.glob("round-*"))
SEALED = ROUNDS[-1]  # graded through the CLI as well: a new round is, by the real judge
RUN_SEED = 11
NOTEBOOK_SECONDS = 300  # the sealed judge's whole-submission limit (Limits.submission_timeout)

pytestmark = [pytest.mark.slow, pytest.mark.extended]
# one xdist worker holds the sealed round's tests, so it is graded once, not once per worker
SEALED_MARKS = [pytest.mark.needs_root, pytest.mark.xdist_group("blind")]


def _labels(rounds, marks=()):
    for name in rounds:
        for notebook, label in json.loads((BLIND / name / "labels.json").read_text()).items():
            yield pytest.param(name, notebook, label, id=f"{name}/{notebook}", marks=marks)


def _seed(name: str, notebook: str) -> int:
    """The seed the sealed judge draws this notebook's hidden inputs from in a ``--seed 11``
    run over the folder of rounds (``batch.folder``: the run's seed and the file's path)."""
    return submission_seed(RUN_SEED, identity(f"{name}/{notebook}", None))


def _lost(points: dict[str, tuple[float, float]]) -> set[str]:
    return {q for q, (got, possible) in points.items() if got < possible}


def _expected(label: dict) -> set[str]:
    """The questions a notebook must lose points on here. A label's ``observable_on`` names a
    device the mistake needs (round zm's half precision taken only on CUDA): on a machine
    without it the answer runs the right branch, so it keeps full marks like a correct one."""
    if label["kind"] != "wrong" or not _observable(label.get("observable_on")):
        return set()
    return {label["question"]}


def _observable(device: str | None) -> bool:
    if device is None:
        return True
    import torch  # only for a label that names a device

    return device == "cuda" and torch.cuda.is_available()


@pytest.fixture(scope="session")
def forks(zips):
    """One process per notebook, forked from a parent that has imported and rehearsed once
    per xdist worker: for the session, as xdist may run this module's tests on a worker in
    more than one stretch (the sealed round's group apart from the rest), and a module
    fixture would start and rehearse a parent for each."""
    forks = Forks(zips)
    yield forks
    forks.close()


def _graded_here(forks, name: str, notebook: str, seed: int):
    return forks.grade(BLIND / name / notebook, Path(notebook).parent.name, seed,
                       NOTEBOOK_SECONDS)


@pytest.fixture(scope="module")
def sealed(build_dir, tmp_path_factory) -> dict[str, dict]:
    """The newest round's notebooks (as in its labels) -> their result documents, graded in one
    batch through the CLI with the sealed judge, from a folder holding that round alone under
    its own name (the same paths, so the same seeds, as in a run over every round)."""
    folder = tmp_path_factory.mktemp("blind")
    shutil.copytree(BLIND / SEALED, folder / "rounds" / SEALED)
    out = folder / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "--build", str(build_dir), "grade", "-p",
         str(folder / "rounds"), "-o", str(out), "--seed", str(RUN_SEED), "--runner", "sealed",
         "--jobs", "1", "--no-reports"],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for path in out.glob("*/results/**/*.json"):
        doc = json.loads(path.read_text())
        name, notebook = doc["file"].split("/", 1)
        found[notebook] = doc
    return found


@pytest.mark.parametrize("name, notebook, label", _labels(r for r in ROUNDS if r != SEALED))
def test_does_a_blind_answer_lose_points_exactly_where_it_is_wrong(forks, name, notebook, label):
    lost = _lost(_graded_here(forks, name, notebook, _seed(name, notebook)))
    assert lost == _expected(label), (
        f"{label['mistake']}: lost points on {sorted(lost) or 'nothing'}")


@pytest.mark.parametrize("name, notebook, label", _labels([SEALED], SEALED_MARKS))
def test_does_the_sealed_judge_take_points_exactly_where_the_answer_is_wrong(sealed, name,
                                                                            notebook, label):
    doc = sealed[notebook]
    assert doc["status"] == "graded", doc.get("error") or doc["status"]
    lost = {q for q, result in doc["questions"].items() if result["points"] < result["possible"]}
    assert lost == _expected(label), (
        f"{label['mistake']}: lost points on {sorted(lost) or 'nothing'}")


@pytest.mark.parametrize("name, notebook, label", _labels([SEALED], SEALED_MARKS))
def test_does_the_fork_grade_as_the_sealed_judge_does(sealed, forks, name, notebook,
                                                      label):
    """The same seed and the same points on every question, in a fresh process and through
    the sealed judge (its worker, the wire, the CLI's seeding)."""
    doc = sealed[notebook]
    assert doc["seed"] == _seed(name, notebook)
    here = _graded_here(forks, name, notebook, doc["seed"])
    assert here == {q: (r["points"], r["possible"]) for q, r in doc["questions"].items()}
