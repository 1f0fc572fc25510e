"""PrairieLearn's external grader: the grading image's entry point for one submission laid out
the PrairieLearn way (docs/beyond-one-machine.md, deploy/prairielearn/).

    /grade/student/            the submitted notebook (the question's pl-file-upload)
    /grade/tests/question.json {"assignment": "...", "questions": [...]} (questions: optional,
                               the otter questions this PrairieLearn question scores)
    /grade/serverFilesCourse/autograder/<assignment>-autograder.zip   (``otter assign``'s zip)
    /grade/data/data.json      PrairieLearn's data (``variant_seed`` and the notebook's bytes
                               seed each attempt's hidden inputs: ``seed_for``)
    /grade/results/results.json   written here: ``score`` in 0..1, ``gradable``, ``message``,
                               ``tests`` (``name``, ``points``, ``max_points``, ``message``),
                               at most 1 MB

A file that is not one readable notebook is ``gradable: false`` with the reason in
``format_errors`` (no attempt used); a failure on our side is ``gradable: false`` too, saying
it is not the student's score. The judge runs as root in the container; the notebook's code in
a worker as an unprivileged uid (``sandbox`` mode ``"container"``) after ``/grade`` is made
root-only, so it can read neither the tests nor the zip and cannot write the results.

    python -m autograder.running.entry.prairielearn     # the question's entrypoint
"""

from __future__ import annotations

import json
import os
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..resultdoc import ResultDoc

ROOT = Path("/grade")
#: PrairieLearn's limit on results.json; we stay under it with room to spare.
MAX_RESULTS_BYTES = 1_000_000
ZIP_FOLDER = "autograder"


class NotGradable(ValueError):
    """The submission is not something we can grade (the student's to fix)."""


def lock_down(root: Path) -> None:
    """``/grade`` and everything in it root-only: the notebook's uid cannot read the tests,
    the zip or the data, nor write a result. A folder that cannot be locked stops grading."""
    (root / "results").mkdir(parents=True, exist_ok=True)
    for name in ("student", "tests", "serverFilesCourse", "data", "results"):
        if (root / name).exists():
            os.chmod(root / name, 0o700)
    os.chmod(root, 0o700)


def question(root: Path) -> tuple[str, Path, list[str] | None]:
    """The assignment, its zip and the questions scored, from ``tests/question.json``."""
    config_path = root / "tests" / "question.json"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
        assignment = config["assignment"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"{config_path}: not a question config with an assignment "
                           f"({type(exc).__name__}: {exc})") from None
    zip_path = root / "serverFilesCourse" / ZIP_FOLDER / f"{assignment}-autograder.zip"
    if not zip_path.is_file():
        raise RuntimeError(f"{zip_path}: no autograder zip (list \"{ZIP_FOLDER}/\" in the "
                           f"question's externalGradingOptions.serverFilesCourse)")
    wanted = config.get("questions")
    return assignment, zip_path, list(wanted) if wanted else None


def notebook(root: Path, assignment: str):
    """The one submitted notebook, vetted (``submissions.vet``), else ``NotGradable``."""
    from ..names import text
    from ..submissions import vet
    from .summary import refused

    student = root / "student"
    files = sorted(p for p in student.rglob("*") if p.is_file()) if student.is_dir() else []
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    if len(notebooks) != 1:
        names = ", ".join(text(p.name) for p in files) or "nothing"
        raise NotGradable(f"Submit exactly one Jupyter notebook (.ipynb); found "
                          f"{len(notebooks)} among: {names}.")
    sub = vet(notebooks[0], text(notebooks[0].name), assignment)  # names.text: printable
    if sub.problem:
        raise NotGradable(refused(sub, assignment, "question", "submit"))
    return sub


def seed_for(root: Path, notebook: bytes) -> int:
    """This attempt's own seed (``seeding.attempt_seed``): the variant's seed (0 without one) and the submitted notebook's
    bytes. With ``singleVariant`` every attempt has the same variant, so the variant's seed
    alone would draw the same hidden inputs each time and the feedback of one attempt would be
    an answer key for the next. ``data.json`` (the ``data`` of a question's ``grade()``) holds
    no id or time of the submission: the bytes tell attempts apart, and the very same file
    again gets the same inputs and feedback. A regrade (the same data and file) draws the
    same inputs."""
    from ...checks.seeding import attempt_seed

    try:
        data = json.loads((root / "data" / "data.json").read_text(encoding="utf-8"))
        base = int(data["variant_seed"]) % 2**31
    except (OSError, ValueError, KeyError, TypeError):
        base = 0
    return attempt_seed(base, notebook)


def grade(root: Path, seed: int | None = None) -> "ResultDoc":
    """Grade the submission with ``seed`` (``None``: this attempt's, ``seed_for``); our result
    document (the questions asked for only)."""
    assignment, zip_path, wanted = question(root)
    sub = notebook(root, assignment)  # before torch is imported: a bad file is told at once
    from ..judge.core import judge
    from ..judge.tests_zip import load_tests
    from ..limits import Limits, disk_from
    from ..submissions import read_notebook_bytes
    from .run_autograder import STUDENT_UID

    tests = [t for t in load_tests(zip_path) if wanted is None or t.question in wanted]
    if not tests:
        raise RuntimeError(f"{root / 'tests' / 'question.json'}: none of the questions "
                           f"{wanted} is in {zip_path.name}")
    seconds = float(os.environ.get("AUTOGRADER_TIMEOUT", "30"))
    limits = Limits.timed(seconds, float(os.environ.get("AUTOGRADER_SUBMISSION_TIMEOUT", "300")),
                          confinement="container", **disk_from(os.environ))
    if seed is None:
        seed = seed_for(root, read_notebook_bytes(sub.path))
    print(f"seed {seed} (AUTOGRADER_SEED={seed} grades this attempt again)")
    return judge(sub.path, sub.name, assignment, tests, seed=seed, uid=STUDENT_UID,
                 limits=limits)


def written_questions(root: Path) -> list[tuple[str, float]]:
    """``(name, points)`` of the written questions this question covers, from the zip's
    listing (``authoring.written.LISTING``; none in a zip made before it listed them): all of
    them, or with ``questions`` in question.json only those it names."""
    import zipfile

    from ...authoring.written import LISTING, listed

    _, zip_path, wanted = question(root)
    with zipfile.ZipFile(zip_path) as zf:
        text = zf.read(LISTING) if LISTING in zf.namelist() else None
    return [(n, p) for n, p in listed(text) if wanted is None or n in wanted]


def results_json(doc: "ResultDoc", written: list[tuple[str, float]] = ()) -> dict:
    """PrairieLearn's results for our document: one test per otter test case, with our
    named-mistake messages, and the score as a fraction of the auto-graded points possible
    (``written``: the questions graded by hand later, which the message names)."""
    from .summary import summary

    if doc.is_grader_error:
        return grader_error(doc.error or "")
    tests, earned, possible = [], 0.0, 0.0
    for name, q in sorted(doc.questions.items()):
        earned, possible = earned + q.points, possible + q.possible
        for t in q.tests:
            tests.append({"name": name if len(q.tests) == 1 else f"{name}: {t.name}",
                          "description": "hidden test" if t.hidden else "public test",
                          "points": t.points, "max_points": t.possible, "message": t.message})
    return {"gradable": True, "score": round(earned / possible, 6) if possible else 0.0,
            "message": "\n".join(summary(doc, list(written))), "output": doc.output or "",
            "tests": tests}


def grader_error(detail: str) -> dict:
    """Our failure: not gradable (no attempt used, no score), saying so."""
    from .run_autograder import grader_error_message

    message = grader_error_message(detail)
    return {"gradable": False, "score": 0.0, "message": message, "format_errors": [message],
            "tests": []}


def within_limit(results: dict) -> str:
    """``results`` as JSON under ``MAX_RESULTS_BYTES``: the output goes first, then every
    message is cut shorter, saying so."""
    text = json.dumps(results, ensure_ascii=False)
    for limit in (None, 4000, 500, 50):
        if len(text.encode()) <= MAX_RESULTS_BYTES:
            return text
        results = {**results, "output": "[output left out: results.json is limited to 1 MB]"}
        if limit is not None:
            results["tests"] = [{**t, "message": _cut(t["message"], limit)}
                                for t in results["tests"]]
        text = json.dumps(results, ensure_ascii=False)
    return text


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} cut]"


def write(root: Path, results: dict) -> None:
    """``results.json``, every string in it ``names.visible`` (what the notebook printed or
    raised cannot rewrite a line or reverse text to pass for the grader's words), within
    PrairieLearn's size limit."""
    from ..names import visible_json

    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(within_limit(visible_json(results)),
                                                   encoding="utf-8")


def main(root: Path = ROOT) -> int:
    """Always leaves a results.json; exit status 0 unless our side failed."""
    from ...seed_env import seed_from

    try:
        lock_down(root)
        # AUTOGRADER_SEED: staff reproducing a recorded grade
        results = results_json(grade(root, seed_from(os.environ)), written_questions(root))
        status = 0
    except NotGradable as exc:
        results = {"gradable": False, "score": 0.0, "message": str(exc),
                   "format_errors": [str(exc)], "tests": []}
        status = 0
    except Exception as exc:  # noqa: BLE001 - never a missing or silent result
        traceback.print_exc()
        results, status = grader_error(f"{type(exc).__name__}: {exc}"), 1
    write(root, results)
    print(f"score {results.get('score')}, gradable {results.get('gradable')}")
    return status


if __name__ == "__main__":
    from .startup import cold_start, exit_now

    cold_start()
    exit_now(main())
