"""The Gradescope zip on a plain base image, the way Gradescope builds and runs it: its
``setup.sh`` on bare ``debian:bookworm-slim`` (no Python at all: it apt-installs one, then
builds the venv from package indexes), then ``run_autograder`` in Gradescope's folder layout.

No network for pip: two local PEP 503 indexes stand in for PyPI (the pinned deps, as
``make image`` downloads them) and for PyTorch's CPU index (the CPU torch wheel), mounted into
the container and given to ``setup.sh`` as ``PIP_INDEX_URL`` and ``TORCH_INDEX_URL``. apt in the
container reaches Debian's mirror, as ``make image``'s build does. Needs a Docker engine
(skipped with the reason otherwise); a few minutes, most of them installing torch.
"""

from __future__ import annotations

import html
import importlib.util
import io
import json
import os
import re
import tarfile
import uuid
import zipfile
from pathlib import Path

import pytest

from notebooks import ROOT
from points import ALAN_TURING, EXERCISES

ASSIGNMENT = "autograd-exercises"
SEED = 20261130


@pytest.fixture(scope="module")
def otter_zip(zips) -> Path:
    return zips[ASSIGNMENT]


@pytest.fixture(scope="module")
def gradescope(otter_zip, tmp_path_factory) -> Path:
    from autograder.authoring.gradescope import gradescope_zip

    return gradescope_zip(otter_zip, tmp_path_factory.mktemp("gs") / "gs.zip")


@pytest.mark.slow
def test_zip_carries_what_a_plain_base_needs(gradescope):
    """Does the zip carry the autograder wheel, the pinned deps and torch's pin for setup.sh,
    and does run_autograder ask for after_published hidden tests by default?"""
    with zipfile.ZipFile(gradescope) as zf:
        names = zf.namelist()
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        lock = zf.read("wheels/requirements.lock").decode()
    wheels = [n for n in names if n.startswith("wheels/autograder-") and n.endswith(".whl")]
    assert len(wheels) == 1, names
    assert "otter-grader==7.0.0" in lock.split()
    assert "TORCH_SPEC=torch==2.13.0\n" in setup and "@TORCH_SPEC@" not in setup
    assert "--hidden-visibility after_published" in run
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert {"tests/q1_accumulation.py", "otter_config.json"} <= set(names)


@pytest.mark.slow
def test_hidden_visibility_is_a_choice_and_a_wrong_one_is_refused(otter_zip, tmp_path):
    """Does --hidden-visibility reach run_autograder, and is an unknown value refused?"""
    from autograder.authoring.gradescope import gradescope_zip

    path = gradescope_zip(otter_zip, tmp_path / "gs.zip", hidden_visibility="after_due_date")
    with zipfile.ZipFile(path) as zf:
        assert "--hidden-visibility after_due_date" in zf.read("run_autograder").decode()
    with pytest.raises(ValueError, match="after_published"):
        gradescope_zip(otter_zip, tmp_path / "bad.zip", hidden_visibility="later")


# --- the zip on plain debian:bookworm-slim -------------------------------------------------


def _build_image_module():
    spec = importlib.util.spec_from_file_location("build_image", ROOT / "docker" / "build_image.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def simple_index(wheels: Path, index: Path, mounted_at: str) -> None:
    """A PEP 503 simple index of the wheels in ``wheels`` under ``index``, linking to them
    where the container sees them (``mounted_at``). Written here: ten lines, where a package
    for it (dumb-pypi, simple503) would be one more dependency for one test."""
    from packaging.utils import canonicalize_name, parse_wheel_filename

    projects: dict[str, list[str]] = {}
    for wheel in sorted(wheels.glob("*.whl")):
        projects.setdefault(canonicalize_name(parse_wheel_filename(wheel.name)[0]), []).append(
            wheel.name)
    for project, files in projects.items():
        (index / project).mkdir(parents=True)
        links = "".join(f'<a href="file://{mounted_at}/{html.escape(f)}">{html.escape(f)}</a>\n'
                        for f in files)
        (index / project / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}"
                                                    "</body></html>\n")
    (index / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "".join(
        f'<a href="{p}/">{p}</a>\n' for p in sorted(projects)) + "</body></html>\n")


def _source_tar(zip_path: Path) -> bytes:
    """Gradescope's image build: the zip unpacked in /autograder/source, run_autograder
    copied to /autograder/run_autograder."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar, zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            data = zf.read(info.filename)
            entry = tarfile.TarInfo(f"autograder/source/{info.filename}")
            entry.size, entry.mode = len(data), (info.external_attr >> 16) & 0o777 or 0o644
            tar.addfile(entry, io.BytesIO(data))
            if info.filename == "run_autograder":
                entry = tarfile.TarInfo("autograder/run_autograder")
                entry.size, entry.mode = len(data), 0o755
                tar.addfile(entry, io.BytesIO(data))
    return buf.getvalue()


def _submission_tar(notebook: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = notebook.read_bytes()
        entry = tarfile.TarInfo(f"autograder/submission/{notebook.name}")
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def plain_base_image(gradescope, tmp_path_factory, in_background):
    """bookworm-slim after the zip's setup.sh ran in it (committed as an image; removed at the
    end), with the indexes standing in for PyPI and PyTorch's index."""
    from autograder.running.runners.docker_engine import IMAGE_REPOSITORY, engine

    client = engine(timeout=1800)  # committing the ~1.3 GB layer takes minutes on a busy host
    build_image = _build_image_module()
    build_image.base_image(client)  # debootstrapped when this engine has none
    torch_wheels = build_image.wheelhouse("cpu")  # as `make image`: the lock's deps and torch
    deps_wheels = build_image.BUILD / "wheelhouse"
    indexes = tmp_path_factory.mktemp("indexes")
    simple_index(deps_wheels, indexes / "pypi", "/wheels/pypi")
    simple_index(torch_wheels, indexes / "torch", "/wheels/torch")
    mounts = {str(deps_wheels): {"bind": "/wheels/pypi", "mode": "ro"},
              str(torch_wheels): {"bind": "/wheels/torch", "mode": "ro"},
              str(indexes): {"bind": "/indexes", "mode": "ro"}}
    container = client.containers.create(
        "debian:bookworm-slim", ["bash", "-c", "cd /autograder/source && bash ./setup.sh"],
        volumes=mounts, environment={"PIP_INDEX_URL": "file:///indexes/pypi",
                                     "TORCH_INDEX_URL": "file:///indexes/torch"})
    # a tag of this fixture's own: were it set up again (xdist may tear module fixtures down
    # between two tests of a group), one teardown must not remove the image another one uses
    tag = f"{IMAGE_REPOSITORY}-gradescope-plain-base:test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        container.put_archive("/", _source_tar(gradescope))
        container.start()
        status = container.wait(timeout=1800)["StatusCode"]
        log = container.logs().decode(errors="replace")
        assert status == 0, log[-5000:]
        container.commit(*tag.split(":"))
    except BaseException:
        container.remove(force=True)
        raise
    # the engine deletes the container's ~1.3 GB of files, then the image's, for seconds each
    # (24 s and 32 s measured on a busy host): disk work no test needs to wait for
    in_background(container.remove, force=True)
    yield tag, log
    in_background(_remove_image, client, tag)


def _remove_image(client, tag: str) -> None:
    import docker

    try:
        client.images.remove(tag, force=True)
    except docker.errors.ImageNotFound:
        pass


def _run_autograder(image: str, notebook: Path | None, before: str = "") -> tuple[int, dict, str]:
    """Gradescope's run: /autograder/run_autograder with the submission in place, no
    network; returns the exit status, results.json and the output (stdout for staff)."""
    from autograder.running.runners.docker_engine import engine

    client = engine(timeout=600)
    container = client.containers.create(
        image, ["bash", "-c", f"{before}cd /autograder && exec /autograder/run_autograder"],
        network_mode="none", environment={"AUTOGRADER_SEED": str(SEED)})
    try:
        if notebook is not None:
            container.put_archive("/", _submission_tar(notebook))
        container.start()
        status = container.wait(timeout=600)["StatusCode"]
        log = container.logs().decode(errors="replace")
        stream, _ = container.get_archive("/autograder/results/results.json")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            results = json.load(tar.extractfile("results.json"))
    finally:
        container.remove(force=True)
    return status, results, log


def _apply(func):
    """The plain-base tests' marks; one xdist group, as they share the prepared image (two
    minutes of apt and pip: the suite's extended part)."""
    for mark in (pytest.mark.slow, pytest.mark.extended, pytest.mark.needs_docker(image=False),
                 pytest.mark.xdist_group("gradescope-plain-base")):
        func = mark(func)
    return func


@_apply
def test_setup_on_a_plain_base_installs_python_and_the_grading_env(plain_base_image):
    """On bookworm-slim, with no Python, did setup.sh install one from Debian and build the
    venv from the two indexes: torch's CPU build, otter 7.0.0 and our wheel?"""
    _, log = plain_base_image
    assert "installing python3 python3-venv from the distribution" in log, log[-3000:]
    assert "grading env ok: torch 2.13.0+cpu otter 7.0.0" in log, log[-3000:]


@_apply
def test_solution_gets_full_marks_on_the_plain_base(plain_base_image):
    status, results, log = _run_autograder(plain_base_image[0],
                                           ROOT / "solutions" / f"{ASSIGNMENT}.ipynb")
    assert status == 0, log[-3000:]
    questions = [t for t in results["tests"] if t["name"].startswith("q")]
    assert len(questions) == 5, results
    assert sum(t["score"] for t in questions) == EXERCISES, results
    # the points line alone: no grader error, no submission problem, no cell that raised
    assert results["output"].startswith("21 of 21 auto-graded points; ") \
        and "\n" not in results["output"], results


@_apply
def test_mistakes_cost_their_points_and_their_messages_show_after_publishing(plain_base_image):
    """alan-turing's notebook (the same points for any seed): are the hidden tests' named-mistake
    messages in results.json, at Gradescope's after_published visibility (not hidden)?"""
    status, results, log = _run_autograder(
        plain_base_image[0], ROOT / "submissions" / ASSIGNMENT / "alan-turing.ipynb")
    assert status == 0, log[-3000:]
    tests = {t["name"]: t for t in results["tests"]}
    assert {n: tests[n]["score"] for n in tests if n.startswith("q")} == {
        "q1_accumulation": 2.5, "q2_saved": 4.0, "q3_multipath": 2.5, "q4_vjp": 4.0,
        "q5_numpy": 1.5}, results
    assert {tests[n]["visibility"] for n in tests if n.startswith("q")} == {"after_published"}
    assert tests["Public Tests"]["visibility"] == "visible"
    assert "build the leaf from the p0 argument" in tests["q1_accumulation"][
        "output"]
    assert "Append .copy()" in tests["q5_numpy"]["output"]


@_apply
def test_a_broken_install_gives_a_clear_grader_error(plain_base_image):
    """With part of our package gone (a broken install), does results.json say it is a
    grader error (score 0, contact staff, not the student's score) instead of a silent 0?"""
    site = "$(ls -d /opt/autograder-env/lib/python3*/site-packages)"
    status, results, log = _run_autograder(
        plain_base_image[0], ROOT / "solutions" / f"{ASSIGNMENT}.ipynb",
        before=f"rm -rf {site}/autograder/checks && ")
    assert status == 1, log[-3000:]
    assert results["score"] == 0
    assert results["output"].startswith("Grader error:"), results
    assert "NOT graded" in results["output"] and "contact the course staff" in results["output"]
    assert "ModuleNotFoundError" in results["output"], results
    assert "Traceback" in log  # the details, for staff (Gradescope shows stdout to them)


@_apply
def test_a_missing_grading_env_still_writes_results(plain_base_image):
    """With no venv at all (setup.sh never ran, or a wrong base), does run_autograder still
    write a grader error results.json?"""
    status, results, log = _run_autograder(
        plain_base_image[0], ROOT / "solutions" / f"{ASSIGNMENT}.ipynb",
        before="rm -rf /opt/autograder-env && ")
    assert status != 0
    assert results["score"] == 0 and results["output"].startswith("Grader error:"), results


@_apply
def test_two_notebooks_are_the_students_problem_not_a_grader_error(plain_base_image):
    """A submission with two notebooks: told to the student (resubmit with one), exit 0."""
    status, results, log = _run_autograder(
        plain_base_image[0], ROOT / "solutions" / f"{ASSIGNMENT}.ipynb",
        before="cp /autograder/submission/*.ipynb /autograder/submission/copy.ipynb && ")
    assert status == 0, log[-3000:]
    assert results["score"] == 0
    assert "exactly one notebook" in results["output"] and "Grader error" not in results["output"]


# --- resubmissions: every submission its own hidden inputs, a regrade the same ---------------


def test_each_submission_draws_its_own_seed_and_a_regrade_the_same(tmp_path):
    """Gradescope's submission_metadata.json (id, created_at) and the notebook's bytes seed
    each submission; the metadata is made root-only before the notebook's code runs."""
    from autograder.running.entry.run_autograder import METADATA, lock_down, seed_for

    notebook = (ROOT / "submissions" / ASSIGNMENT / "alan-turing.ipynb").read_bytes()

    def seed(submission_id, created_at="2026-12-01T10:00:00.000000-08:00", data=notebook):
        (tmp_path / METADATA).write_text(json.dumps(
            {"id": submission_id, "created_at": created_at, "previous_submissions": []}))
        return seed_for(tmp_path, data)

    first = seed(123456)
    assert seed(123456) == first  # a regrade of that submission
    assert len({first, seed(123457), seed(123456, "2026-12-01T10:05:00.000000-08:00"),
                seed(123456, data=notebook + b"\n")}) == 4
    lock_down(tmp_path, scratch=tmp_path / "student")
    assert (tmp_path / METADATA).stat().st_mode & 0o777 == 0o600


def _gradescope_run(image: str, gs_zip: Path, notebook: bytes, metadata: dict) -> dict:
    """run_autograder's entry in the grading image, laid out as Gradescope does (the zip in
    /autograder/source, the notebook, submission_metadata.json), no network and no
    AUTOGRADER_SEED; returns our result document (autograder.json) and results.json."""
    from autograder.running.runners.docker_engine import engine

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        files = {"autograder/submission/hw.ipynb": notebook,
                 "autograder/submission_metadata.json": json.dumps(metadata).encode()}
        with zipfile.ZipFile(gs_zip) as zf:
            files.update({f"autograder/source/{i.filename}": zf.read(i.filename)
                          for i in zf.infolist() if not i.is_dir()})
        for name, data in files.items():
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode = len(data), 0o644
            tar.addfile(entry, io.BytesIO(data))
    client = engine(timeout=600)
    container = client.containers.create(
        image, ["/opt/autograder-env/bin/python", "-m", "autograder.running.entry.run_autograder",
                "--hidden-visibility", "visible"], network_mode="none", mem_limit="6g",
        environment={"OMP_NUM_THREADS": "1"})
    try:
        container.put_archive("/", buf.getvalue())
        container.start()
        status = container.wait(timeout=600)["StatusCode"]
        log = container.logs().decode(errors="replace")
        found = {}
        for name in ("autograder.json", "results.json"):
            stream, _ = container.get_archive(f"/autograder/results/{name}")
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
                found[name] = json.load(tar.extractfile(name))
    finally:
        container.remove(force=True)
    assert status == 0, log[-3000:]
    return found


@pytest.mark.slow
@pytest.mark.needs_docker
def test_a_resubmission_draws_new_hidden_inputs_and_a_regrade_reproduces_it(gradescope):
    """Three runs of alan-turing's notebook with hidden results visible: submission 1,
    submission 2 (the same file, resubmitted), and submission 1 again (Gradescope's regrade:
    the same metadata). The first two draw other seeds and other hidden inputs; the regrade
    writes the first one's document again."""
    from autograder.running.runners.docker_engine import IMAGES

    notebook = (ROOT / "submissions" / ASSIGNMENT / "alan-turing.ipynb").read_bytes()
    first_meta = {"id": 1001, "created_at": "2026-12-01T10:00:00.000000-08:00",
                  "previous_submissions": []}
    second_meta = {"id": 1002, "created_at": "2026-12-01T10:07:00.000000-08:00",
                   "previous_submissions": [{"submission_time": first_meta["created_at"],
                                             "score": ALAN_TURING}]}
    first, second, again = (_gradescope_run(IMAGES["cpu"], gradescope, notebook, meta)
                            for meta in (first_meta, second_meta, first_meta))
    one, two = first["autograder.json"], second["autograder.json"]
    assert one["seed"] != two["seed"]
    hidden = lambda doc: {(q, t["name"]): t["message"] for q, v in doc["questions"].items()  # noqa: E731
                          for t in v["tests"] if t["hidden"] and not t["passed"]}
    assert hidden(one) and set(hidden(one)) == set(hidden(two))
    strip = lambda m: re.sub(r"\[grading seed \d+\]", "", m)  # noqa: E731
    assert any(strip(hidden(one)[k]) != strip(hidden(two)[k]) for k in hidden(one))
    total = lambda doc: sum(v["points"] for v in doc["questions"].values())  # noqa: E731
    assert total(one) == total(two) == ALAN_TURING
    assert again["autograder.json"] == one
    assert again["results.json"] == first["results.json"]


# --- the submission vetted as the batch vets it (here, no container) ------------------------

LINKS = {"/proc/self/environ": "the grader's environment",
         "/dev/zero": "endless zeros",
         str(ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"): "a valid notebook"}


@pytest.mark.parametrize("target", sorted(LINKS))
def test_a_linked_notebook_is_the_students_to_fix_and_never_followed(otter_zip, tmp_path,
                                                                     target):
    """``/autograder/submission/hw.ipynb`` as a symbolic link (a GitHub submission can carry
    one): refused without being opened (``submissions.vet``), a message the student can act on,
    exit 0; never a grader error, never a byte of what it points to."""
    from autograder.running.entry.run_autograder import write_results

    with zipfile.ZipFile(otter_zip) as zf:
        zf.extractall(tmp_path / "source")
    for name in ("submission", "results"):
        (tmp_path / name).mkdir()
    (tmp_path / "submission" / "hw.ipynb").symlink_to(target)
    assert write_results(tmp_path, SEED, "after_published") == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    output = results["output"]
    assert results["score"] == 0 and "hw.ipynb: is a symbolic link" in output, output
    assert "not opened or followed" in output and "Grader error" not in output, output
    environ = Path("/proc/self/environ").read_bytes()[:40].split(b"\0")[0].decode(errors="replace")
    assert environ not in output  # what main's error message used to show
    doc = json.loads((tmp_path / "results" / "autograder.json").read_text())
    assert doc["status"] == "rejected", doc
