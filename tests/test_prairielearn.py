"""PrairieLearn's external grader: the grading image run with PrairieLearn's /grade layout and
the example question's own externalGradingOptions (deploy/prairielearn/), results.json as
PrairieLearn reads it."""

from __future__ import annotations

import io
import json
import re
import tarfile

import pytest

from notebooks import ROOT
from points import ALAN_TURING, EXERCISES

QUESTION = ROOT / "deploy" / "prairielearn" / "questions" / "autograd-exercises"
needs_image = pytest.mark.needs_docker  # the engine and the CPU image


def grade_layout(student: dict[str, bytes], variant_seed: int = 3) -> dict[str, bytes]:
    """``/grade`` as PrairieLearn assembles it for the example question."""
    from autograder.authoring.layout import Layout
    from autograder.running.batch.folder import ensure_zip

    zip_path = ensure_zip("autograd-exercises", Layout.at(ROOT))
    files = {f"grade/student/{name}": data for name, data in student.items()}
    for path in (QUESTION / "tests").rglob("*"):
        if path.is_file():
            files[f"grade/tests/{path.relative_to(QUESTION / 'tests')}"] = path.read_bytes()
    files["grade/serverFilesCourse/autograder/autograd-exercises-autograder.zip"] = \
        zip_path.read_bytes()
    files["grade/data/data.json"] = json.dumps({
        "params": {}, "correct_answers": {}, "submitted_answers": {}, "format_errors": {},
        "variant_seed": variant_seed, "options": {}}).encode()
    return files


def run_question(student: dict[str, bytes], environment: dict | None = None
                 ) -> tuple[dict, int]:
    """Run the image the way PrairieLearn's grader host does: the question's image,
    entrypoint, environment (with ``environment`` added) and timeout, no network
    (enableNetworking false)."""
    from autograder.running.runners.docker_engine import IMAGES, engine

    options = json.loads((QUESTION / "info.json").read_text())["externalGradingOptions"]
    assert options["image"] == "autograder-grader:cpu" and options["timeout"] <= 600
    client = engine()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in grade_layout(student).items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    container = client.containers.create(IMAGES["cpu"], options["entrypoint"],
                                         environment={**options["environment"],
                                                      **(environment or {})},
                                         network_mode="none", mem_limit="6g")
    try:
        container.put_archive("/", buf.getvalue())
        container.start()
        code = container.wait(timeout=options["timeout"])["StatusCode"]
        stream, _ = container.get_archive("/grade/results/results.json")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            raw = tar.extractfile("results.json").read()
    finally:
        container.remove(force=True)
    assert len(raw) <= 1_000_000
    return json.loads(raw), code


@pytest.mark.slow
@needs_image
def test_solution_gets_full_marks():
    results, code = run_question(
        {"autograd-exercises.ipynb": (ROOT / "solutions" / "autograd-exercises.ipynb")
         .read_bytes()})
    assert code == 0
    assert results["gradable"] is True and results["score"] == 1.0, results["message"]
    assert results["tests"] and all(t["points"] == t["max_points"] > 0
                                    for t in results["tests"])
    assert {"name", "points", "max_points", "message"} <= set(results["tests"][0])


@pytest.mark.slow
@needs_image
def test_the_notebook_finds_neither_the_judges_environment_nor_a_seed_in_its_memory():
    """The notebook's worker is forked (through the zygote) from the judge, so it holds a copy
    of the environment block the judge started with (what ``/proc/self/environ`` shows, there
    to read in its own memory): the entry point zeroes it before it forks. With a regrade's
    ``AUTOGRADER_SEED`` it does not fork: the zygote is a new process with its own
    environment, so no copy of the seed's bytes is in the worker's memory either."""
    import nbformat

    from notebooks import solution

    nb = solution("autograd-exercises")
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        "import ctypes, os\n"
        "_f = open('/proc/self/stat').read().rpartition(')')[2].split()\n"
        "_block = ctypes.string_at(int(_f[47]), int(_f[48]) - int(_f[47]))\n"
        "print('ENVIRON-BLOCK', repr(_block.replace(b'\\0', b' ').decode().strip()))\n"
        "print('ENVIRON', sorted(os.environ))"))
    student = {"autograd-exercises.ipynb": nbformat.writes(nb).encode()}
    for environment in ({"AG_PROBE": "918273645"}, {"AUTOGRADER_SEED": "918273645"}):
        results, code = run_question(student, environment=environment)
        assert code == 0 and results["score"] == 1.0, results["message"]
        block = next(ln for ln in results["output"].splitlines() if "ENVIRON-BLOCK" in ln)
        if "AG_PROBE" in environment:
            assert block == "ENVIRON-BLOCK ''", block  # forked: zeroed
        assert "918273645" not in results["output"] and "AG_PROBE" not in results["output"]
        assert "AUTOGRADER_SEED" not in results["output"]


@pytest.mark.slow
@needs_image
def test_notebook_with_mistakes_gets_its_points_and_named_mistakes():
    """alan-turing scores its golden's points for any seed (the variant's, 3 here, and the
    notebook's own bytes draw it), and the failed hidden test says which mistake it found, as
    in the sealed runner's feedback."""
    results, code = run_question(
        {"autograd-exercises.ipynb": (ROOT / "submissions" / "autograd-exercises" /
                                      "alan-turing.ipynb").read_bytes()})
    assert code == 0 and results["gradable"] is True
    assert results["score"] == round(ALAN_TURING / EXERCISES, 6), results["message"]
    assert sum(t["points"] for t in results["tests"]) == ALAN_TURING
    assert sum(t["max_points"] for t in results["tests"]) == EXERCISES
    failed = {t["name"]: t for t in results["tests"] if t["points"] < t["max_points"]}
    test = failed["q1_accumulation: q1_accumulation - 3"]
    assert test["points"] == 0 and test["max_points"] == 1.25
    assert "build the leaf from the p0 argument" in test["message"]
    assert re.search(r"\[grading seed \d+\]", test["message"])  # this attempt's own seed


@pytest.mark.slow
@needs_image
def test_a_file_that_is_not_a_notebook_is_not_gradable_and_says_why():
    results, code = run_question({"autograd-exercises.ipynb": b"print('hello')\n"})
    assert code == 0
    assert results["gradable"] is False
    assert "not a notebook" in results["format_errors"][0], results
    assert "autograd-exercises.ipynb" in results["message"]


# --- resubmissions: every attempt its own hidden inputs, a regrade the same ------------------


def test_each_attempt_draws_its_own_seed_and_a_regrade_the_same(tmp_path):
    """With ``singleVariant`` every attempt has the variant's seed: the notebook's bytes make
    each attempt's seed its own; the same data and file (a regrade) give the same seed."""
    from autograder.running.entry.prairielearn import seed_for

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "data.json").write_text(json.dumps({"variant_seed": 3}))
    notebook = (ROOT / "submissions" / "autograd-exercises" / "alan-turing.ipynb").read_bytes()
    first = seed_for(tmp_path, notebook)
    assert seed_for(tmp_path, notebook) == first
    assert seed_for(tmp_path, notebook.replace(b'"cells"', b'"cells" ', 1)) != first
    (tmp_path / "data" / "data.json").write_text(json.dumps({"variant_seed": 4}))
    assert seed_for(tmp_path, notebook) != first


def _hidden_messages(results: dict) -> dict[str, str]:
    return {t["name"]: t["message"] for t in results["tests"]
            if t["description"] == "hidden test" and t["points"] < t["max_points"]}


@pytest.mark.slow
@needs_image
def test_a_resubmission_draws_new_hidden_inputs_and_a_regrade_reproduces_it():
    """Three attempts on the shipped question (singleVariant: one variant seed): alan-turing's
    notebook, the same notebook saved again (a changed byte), then the first again (what a
    regrade runs). The failing hidden tests' inputs and seeds differ between the first two;
    the third is the first, results.json byte for byte."""
    notebook = (ROOT / "submissions" / "autograd-exercises" / "alan-turing.ipynb").read_bytes()
    resaved = notebook.replace(b'"cells"', b'"cells" ', 1)
    first, second, again = (run_question({"autograd-exercises.ipynb": data})
                            for data in (notebook, resaved, notebook))
    assert first[1] == second[1] == again[1] == 0
    one, two = _hidden_messages(first[0]), _hidden_messages(second[0])
    assert one and set(one) == set(two)  # the same mistakes, found again
    seed = re.compile(r"\[grading seed (\d+)\]")
    assert {seed.search(m).group(1) for m in one.values()} != {
        seed.search(m).group(1) for m in two.values()}
    # other inputs, other expected values (not only another seed in the tag)
    assert any(seed.sub("", one[name]) != seed.sub("", two[name]) for name in one)
    assert first[0]["score"] == second[0]["score"] == round(ALAN_TURING / EXERCISES, 6)
    assert again[0] == first[0]
