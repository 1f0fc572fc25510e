"""``run_autograder`` of the Gradescope / ``otter grade`` zip: the sealed judge, inside a
container of the grading image laid out the Gradescope way.

    /autograder/source/      the unpacked zip (tests/, otter_config.json)
    /autograder/submission/  the notebook
    /autograder/results/     results.json (Gradescope's format, made by otter itself),
                             results.pkl (what stock ``otter grade`` loads), autograder.json
                             (our result document)

results.json is always written: a failure of our own code becomes a grader error there (score
0, a message that says the submission was not graded, exit status 1), a submission that is not
one readable notebook a message to the student. ``--hidden-visibility`` sets Gradescope's
visibility of the hidden tests' results (default ``after_published``).

The judge runs here as root; the notebook's code runs in a worker as a sandbox uid (the
range ``uids.CONTAINER_UIDS``; ``sandbox`` mode ``"container"``). Before that, the source,
submission and results folders are made root-only, so the notebook can neither read the tests
nor write a result. The seed comes from ``AUTOGRADER_SEED`` when set (to reproduce a grade:
``seed_env.seed_from``, read once in ``main``), else from the submission itself (``seed_for``: its bytes and ``submission_metadata.json``),
so every resubmission draws new hidden inputs and a regrade the same.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import traceback
from pathlib import Path

from ..judge.uids import CONTAINER_UIDS
from ..names import text, visible_json
from ..resultdoc import ResultDoc, TestOutcome

ROOT = Path("/autograder")
#: Gradescope's record of the submission (its id, time, earlier submissions), beside source/.
METADATA = "submission_metadata.json"
# From CONTAINER_UIDS (out of reach of a host runner's cleanup); random, so that concurrent
# containers rarely share a uid's process limit.
STUDENT_UID = CONTAINER_UIDS[secrets.randbelow(len(CONTAINER_UIDS))]


def lock_down(root: Path, scratch: Path = Path("/student")) -> None:
    """Root-only source, submission, results and the submission's metadata (which seeds the
    hidden inputs: ``seed_for``); ``scratch`` (``/student``) for the worker's files."""
    for name in ("source", "submission", "results"):
        (root / name).mkdir(parents=True, exist_ok=True)
        os.chmod(root / name, 0o700)
    if (root / METADATA).is_file():
        os.chmod(root / METADATA, 0o600)
    os.chmod(root, 0o711)
    scratch.mkdir(exist_ok=True)
    os.chmod(scratch, 0o1777)


def seed_for(root: Path, notebook: bytes) -> int:
    """This attempt's own seed (``seeding.attempt_seed``): the notebook's bytes and Gradescope's record of the submission
    in ``submission_metadata.json`` (its ``id`` and ``created_at``). Every resubmission draws
    new hidden inputs, so the feedback of one (shown when hidden results are visible) is no
    answer key for the next; a regrade of a submission draws the same."""
    from ...checks.seeding import attempt_seed

    try:
        metadata = json.loads((root / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        metadata = {}
    record = metadata if isinstance(metadata, dict) else {}
    return attempt_seed(0, notebook, f"{record.get('id')}\0{record.get('created_at')}")


def otter_results(tests_dir: Path, doc: ResultDoc):
    """Otter's ``GradingResults`` for our document: otter's own test files, each test case
    marked passed or failed with our message, so otter renders Gradescope's JSON itself. A
    passing case says so ("passed", with any advice): otter prints each case's message under
    its name, and an empty one reads as missing."""
    from otter.test_files import ExceptionTestFile, GradingResults
    from otter.test_files.abstract_test import TestCaseResult

    outcomes = {(q, t.name): t for q, v in doc.questions.items() for t in v.tests}
    not_run = TestOutcome("", message=doc.error or "not run")
    files = []
    for path in sorted(tests_dir.glob("*.py")):
        tf = ExceptionTestFile.from_string(path.read_text(encoding="utf-8"), str(path))
        tf.test_case_results = [
            TestCaseResult(tc, o.message or ("passed" if o.passed else "failed"), o.passed)
            for tc in tf.test_cases for o in [outcomes.get((tf.name, tc.name), not_run)]]
        files.append(tf)
    return GradingResults(files)


class SubmissionProblem(ValueError):
    """The submission itself cannot be graded (no notebook, several, not a notebook): the
    student's to fix, told to them, not a grader error."""


def submitted_notebook(root: Path) -> Path:
    """The one notebook under ``root/submission``, vetted as the batch and PrairieLearn vet
    theirs (``submissions.find``: a link, FIFO or device is never opened or followed, nothing
    is read past the size cap), else ``SubmissionProblem``, the student's to fix."""
    from ..submissions import find
    from .summary import refused

    config = json.loads((root / "source" / "otter_config.json").read_text(encoding="utf-8"))
    # in any folder (Gradescope unpacks an uploaded zip), but not Jupyter's checkpoints or
    # the resource forks a macOS zip carries
    found = [s for s in find(root / "submission", config.get("assignment_name") or None)
             if not any(part.startswith((".", "__MACOSX")) for part in s.name.split("/"))]
    if len(found) != 1:
        names = ", ".join(s.name for s in found) or "none"
        raise SubmissionProblem(f"Your submission must contain exactly one notebook (.ipynb); "
                                f"found {len(found)} ({names}). Resubmit with one notebook.")
    if found[0].problem:
        raise SubmissionProblem(refused(found[0], config.get("assignment_name") or "",
                                        "assignment", "resubmit"))
    return found[0].path


def grade(root: Path, seed: int | None = None) -> ResultDoc:
    """Grade the one notebook under ``root/submission`` with ``seed`` (None: this attempt's,
    ``seed_for``); return our result document."""
    from ..judge.core import judge
    from ..judge.tests_zip import load_test_folder
    from ..limits import Limits, disk_from
    from ..submissions import read_notebook_bytes

    notebook = submitted_notebook(root)
    if seed is None:
        seed = seed_for(root, read_notebook_bytes(notebook))
    config = json.loads((root / "source" / "otter_config.json").read_text())
    return judge(notebook, text(notebook.name), config.get("assignment_name", ""),
                 load_test_folder(root / "source" / "tests"), seed=seed, uid=STUDENT_UID,
                 limits=Limits(confinement="container", **disk_from(os.environ)))


def grader_error_message(detail: str) -> str:
    """The top-level ``output`` students see when our side failed: never a silent 0."""
    return ("Grader error: the autograder failed on its side, so this submission was NOT graded "
            "and this 0 is not your score. Please contact the course staff (they can see the "
            f"details in the autograder output). Detail: {detail}")


def grader_error_results(detail: str) -> dict:
    """Gradescope's results.json for a grader error, made without otter (which may be what
    failed): score 0 and the message, top-level and as one visible failed test."""
    message = grader_error_message(detail)
    return {"score": 0, "output": message, "stdout_visibility": "hidden",
            "tests": [{"name": "Grader error", "score": 0, "max_score": 0, "status": "failed",
                       "visibility": "visible", "output": message}]}


def gradescope_results(results, config: dict, tests_dir: Path, visibility: str) -> dict:
    """otter's rendering of Gradescope's JSON, with the tests of hidden cases at
    ``visibility`` (otter knows only hidden or after_published, and takes it from the
    assignment's config): they carry the named-mistake messages."""
    from otter.run.run_autograder.autograder_config import AutograderConfig

    gradescope = results.to_gradescope_dict(AutograderConfig(config))
    names = {p.stem for p in tests_dir.glob("*.py")}
    for test in gradescope["tests"]:
        if test.get("name") in names:
            test["visibility"] = visibility
    return gradescope


def written_questions(source: Path) -> list[tuple[str, float]]:
    """``(name, points)`` of the assignment's written questions, from the zip's listing
    (``authoring.written.LISTING``, unpacked in ``source``; none in a zip made before it
    listed them)."""
    from ...authoring.written import LISTING, listed

    path = source / LISTING
    return listed(path.read_bytes()) if path.is_file() else []


def results_json(doc: ResultDoc, config: dict, tests_dir: Path, visibility: str,
                 written: list[tuple[str, float]] = ()):
    """Gradescope's results.json for our document and otter's ``GradingResults`` (for
    results.pkl). A graded submission's top-level ``output`` (shown above the tests) says
    its auto-graded points, the ``written`` questions graded by hand later, the cells that
    raised and what went wrong with the notebook's process (``summary``). Every string is
    ``names.visible``: what the notebook printed or raised cannot rewrite a line or reverse
    text on Gradescope's page."""
    from .summary import summary

    results = otter_results(tests_dir, doc)
    gradescope = gradescope_results(results, config, tests_dir, visibility)
    if doc.status.is_rejected:
        gradescope.update(score=0, output=doc.error)
    elif doc.is_grader_error:
        gradescope.update(score=0, output=grader_error_message(doc.error or ""))
    else:
        gradescope["output"] = "\n".join(summary(doc, list(written)))
    return visible_json(gradescope), results


def write_results(root: Path, seed: int | None, visibility: str) -> int:
    """Grade and write results.json, autograder.json (our document, as the judge made it)
    and results.pkl; 1 on a grader error the judge reported (results.json then says so),
    else 0."""
    import dill

    out, tests_dir = root / "results", root / "source" / "tests"
    config = json.loads((root / "source" / "otter_config.json").read_text())
    try:
        doc = grade(root, seed)
    except SubmissionProblem as exc:
        doc = ResultDoc.rejected("submission", str(exc), assignment=config.get("assignment_name"))
    gradescope, results = results_json(doc, config, tests_dir, visibility,
                                       written_questions(root / "source"))
    (out / "results.json").write_text(json.dumps(gradescope, indent=2))
    (out / "autograder.json").write_text(doc.to_json())
    with open(out / "results.pkl", "wb") as f:  # stock `otter grade` dill-loads this
        dill.dump(results, f)
    print(f"seed {doc.seed}: {doc.points:g} points ({doc.status}; hidden tests {visibility}; "
          f"AUTOGRADER_SEED={doc.seed} grades this submission again)")
    return 1 if doc.is_grader_error else 0


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    """Always leaves a results.json: a failure of our own code (an import, the judge, otter)
    becomes a grader error there, with the traceback on stderr for staff."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder.running.entry.run_autograder")
    parser.add_argument("--hidden-visibility", default="after_published",
                        choices=("hidden", "after_published", "after_due_date", "visible"))
    args = parser.parse_args(argv)
    try:
        from ...seed_env import seed_from

        lock_down(root)
        return write_results(root, seed_from(os.environ), args.hidden_visibility)
    except Exception as exc:  # noqa: BLE001 - never a missing or silent result
        traceback.print_exc()
        (root / "results").mkdir(parents=True, exist_ok=True)
        (root / "results" / "results.json").write_text(json.dumps(
            visible_json(grader_error_results(f"{type(exc).__name__}: {exc}")), indent=2))
        return 1


if __name__ == "__main__":
    from .startup import cold_start, exit_now

    cold_start()
    exit_now(main(sys.argv[1:]))
