"""The blind rounds (tests/files/blind/README.md): notebooks written from the contract by someone
who had not read the checks, each labelled correct or wrong on one question, graded through the
real CLI with the sealed judge. A correct notebook keeps full marks on every auto-graded
question; a wrong one loses points on its labelled question and only there."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "files" / "blind"
ROUNDS = sorted(p.name for p in BLIND.glob("round-*"))

# one xdist worker holds the module, so the rounds are graded once, not once per worker
pytestmark = [pytest.mark.slow, pytest.mark.needs_root, pytest.mark.xdist_group("blind")]


def _labels():
    for name in ROUNDS:
        for notebook, label in json.loads((BLIND / name / "labels.json").read_text()).items():
            yield pytest.param(name, notebook, label, id=f"{name}/{notebook}")


@pytest.fixture(scope="module")
def graded(build_dir, tmp_path_factory) -> dict[str, dict[str, dict]]:
    """Round -> the file as in its labels -> its result document: every round in one batch
    (the folder of rounds, its README and labels listed as not notebooks)."""
    out = tmp_path_factory.mktemp("blind")
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "--build", str(build_dir), "grade", "-p",
         str(BLIND), "-o", str(out), "--seed", "11", "--runner", "sealed", "--jobs", "1",
         "--no-reports"],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found: dict[str, dict[str, dict]] = {name: {} for name in ROUNDS}
    for path in out.glob("*/results/**/*.json"):
        doc = json.loads(path.read_text())
        name, notebook = doc["file"].split("/", 1)
        found[name][notebook] = doc
    return found


@pytest.mark.parametrize("name, notebook, label", _labels())
def test_does_a_blind_answer_lose_points_exactly_where_it_is_wrong(graded, name, notebook,
                                                                  label):
    doc = graded[name][notebook]
    assert doc["status"] == "graded", doc.get("error") or doc["status"]
    lost = {q for q, result in doc["questions"].items()
            if result["points"] < result["possible"]}
    expected = {label["question"]} if label["kind"] == "wrong" else set()
    assert lost == expected, f"{label['mistake']}: lost points on {sorted(lost) or 'nothing'}"
