"""``run_autograder`` of the Gradescope / ``otter grade`` zip: the sealed judge, inside a
container of the grading image laid out the Gradescope way.

    /autograder/source/      the unpacked zip (tests/, otter_config.json)
    /autograder/submission/  the notebook
    /autograder/results/     results.json (Gradescope's format, made by otter itself),
                             results.pkl (what stock ``otter grade`` loads), autograder.json
                             (our result document)

The judge runs here as root; the notebook's code runs in a worker as a sandbox uid (62000-62999)
(``sandbox`` mode ``"container"``). Before that, the source, submission and results folders are
made root-only, so the notebook can neither read the tests nor write a result. The seed comes
from ``AUTOGRADER_SEED`` when set (to reproduce a grade), else it is fresh.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

ROOT = Path("/autograder")
# Outside 61000-61999, the range our own runners lease host-wide: without user namespaces a
# container's uid is the host's, and a host runner cleaning up its leased uid (kill -1 as that
# uid) would otherwise reach this container's worker. Random, so that concurrent containers
# rarely share a uid's process limit.
STUDENT_UID = 62000 + secrets.randbelow(1000)


def lock_down(root: Path) -> None:
    """Root-only source, submission and results; ``/student`` for the worker's files."""
    for name in ("source", "submission", "results"):
        (root / name).mkdir(parents=True, exist_ok=True)
        os.chmod(root / name, 0o700)
    os.chmod(root, 0o711)
    Path("/student").mkdir(exist_ok=True)
    os.chmod("/student", 0o1777)


def otter_results(tests_dir: Path, doc: dict):
    """Otter's ``GradingResults`` for our document: otter's own test files, each test case
    marked passed or failed with our message, so otter renders Gradescope's JSON itself."""
    from otter.test_files import ExceptionTestFile, GradingResults
    from otter.test_files.abstract_test import TestCaseResult

    outcomes = {(q, t["name"]): t for q, v in doc.get("questions", {}).items()
                for t in v.get("tests", [])}
    files = []
    for path in sorted(tests_dir.glob("*.py")):
        tf = ExceptionTestFile.from_string(path.read_text(encoding="utf-8"), str(path))
        default = {"passed": False, "message": doc.get("error", "not run")}
        tf.test_case_results = [
            TestCaseResult(tc, None if o["passed"] else o["message"], bool(o["passed"]))
            for tc in tf.test_cases for o in [outcomes.get((tf.name, tc.name), default)]]
        files.append(tf)
    return GradingResults(files)


def grade(root: Path, seed: int) -> dict:
    """Grade the one notebook under ``root/submission``; return our result document."""
    from .judge import judge
    from .sandbox import Limits
    from .tests_zip import load_test_folder

    notebooks = sorted((root / "submission").glob("*.ipynb"))
    if len(notebooks) != 1:
        raise RuntimeError(f"expected one notebook in the submission, found {len(notebooks)}")
    config = json.loads((root / "source" / "otter_config.json").read_text())
    return judge(notebooks[0], notebooks[0].name, config.get("assignment_name", ""),
                 load_test_folder(root / "source" / "tests"), seed=seed, uid=STUDENT_UID,
                 limits=Limits(confinement="container"))


def main(root: Path = ROOT) -> int:
    import dill
    from otter.run.run_autograder.autograder_config import AutograderConfig

    from ..harness import SEED_VARIABLE

    lock_down(root)
    seed = int(os.environ.get(SEED_VARIABLE) or secrets.randbelow(2**31))
    doc = grade(root, seed)
    results = otter_results(root / "source" / "tests", doc)
    config = json.loads((root / "source" / "otter_config.json").read_text())
    gradescope = results.to_gradescope_dict(AutograderConfig(config))
    out = root / "results"
    (out / "results.json").write_text(json.dumps(gradescope, indent=2))
    (out / "autograder.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    with open(out / "results.pkl", "wb") as f:  # stock `otter grade` dill-loads this
        dill.dump(results, f)
    total = sum(v["points"] for v in doc.get("questions", {}).values())
    print(f"seed {seed}: {total:g} points ({doc['status']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
