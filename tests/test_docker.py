"""The Docker runner: the sealed judge inside one container of the grading image per notebook.

The container tests need a Docker engine and the image (``make image``; CI builds both):
``needs_docker``; the comparison with the local sealed runner also needs root. The first tests
need neither: the host side must stay light and fail safe. Hostile notebooks in containers:
test_adversarial.py (the whole hostile batch runs with both Docker runners).
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import image_problem, need, owned_containers, shared_dir
from notebooks import ROOT, grade_rows
from points import ALAN_TURING, EXERCISES

CLI = [sys.executable, "-m", "autograder"]
HOSTILE = ROOT / "tests" / "files" / "hostile"
# the grade Job's seed (deploy/kubernetes/grade-job.yaml): test_kubernetes.py compares its
# pods' grades with this file's one sealed run of the samples (``sealed_graded``)
SEED = 20261130


# kept for the test files that import it from here: the need is conftest's marker
needs_image = pytest.mark.needs_docker


def grade(folder: Path, out: Path, runner: str, *extra: str, build: Path | None = None,
          pids: list[int] | None = None) -> dict[str, dict[str, str]]:
    """Run ``autograder grade`` on ``folder``; return every assignment's CSV rows by file.
    ``build``: the zips' folder (conftest's ``build_dir``); ``pids`` gets the grader's pid
    (its containers carry it in their owner label)."""
    with subprocess.Popen([*CLI, *(["--build", str(build)] if build else []), "grade", "-p", str(folder), "-o", str(out), "--seed",
                           str(SEED), "--runner", runner, "--jobs", "2", "--no-reports", *extra],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        if pids is not None:
            pids.append(proc.pid)
        stdout, stderr = proc.communicate(timeout=1800)
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    return grade_rows(out)


def setup(assignment: str, zip_path: Path):
    """What a runner of ``assignment`` is made from (``zip_path``: conftest's ``zips``)."""
    from autograder.running.limits import Limits
    from autograder.running.runners.base import Setup

    return Setup(zip_path, assignment, SEED, Limits())


def two_samples(tmp_path: Path, assignment: str) -> list:
    """The perfect and one mistaken sample submission (ada-lovelace, alan-turing), as
    submissions."""
    from autograder.running.submissions import find

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("ada-lovelace", "alan-turing"):
        (folder / f"{name}.ipynb").write_bytes(
            (ROOT / "submissions" / assignment / f"{name}.ipynb").read_bytes())
    return find(folder, assignment)


def test_host_side_never_imports_torch():
    """Does importing the Docker runner (and resolving a runner) stay free of torch?"""
    code = ("import sys, autograder.running.runners.docker; "
            "import autograder.running.runners.docker_fork; "
            "from autograder.running.runners import registry; registry.resolve('auto'); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    # the protocol both sides share: no torch, no otter
    code = ("import sys, autograder.running.container_protocol; "
            "assert not {'torch', 'otter'} & set(sys.modules), 'torch or otter was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_no_engine_falls_back_to_sealed_with_a_note(monkeypatch):
    """Without an engine, does auto pick the sealed runner and say why, and docker refuse?"""
    from autograder.running.runners import registry

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    runner, why = registry.resolve("auto")
    assert runner.name == "sealed" and "no Docker engine is reachable" in why
    runner, why = registry.resolve("docker")
    assert runner is None and why.startswith("error: --runner docker")


def test_an_engine_error_is_not_a_missing_image(monkeypatch):
    """The engine busy with another image (an error other than "no such image") must not read
    as "not built": is it asked again, and named as the engine's error when it persists?"""
    import docker
    from autograder.running.runners import docker_engine

    need(image_problem())
    client = docker_engine.engine()
    collection = type(client.images)  # a new collection object at each access
    real, failures = collection.get, []

    def busy(self, name):
        if len(failures) < failing:
            failures.append(name)
            raise docker.errors.APIError("500 Server Error: layer store busy (test)")
        return real(self, name)

    monkeypatch.setattr(collection, "get", busy)
    monkeypatch.setattr(docker_engine.time, "sleep", lambda _: None)
    image = docker_engine.IMAGES["cpu"]
    failing = 2
    assert docker_engine.image_problem(client, image) is None and len(failures) == 2
    failures.clear()
    failing = 3
    said = docker_engine.image_problem(client, image)
    assert "did not say whether" in said and "layer store busy" in said
    assert "not built" not in said
    assert docker_engine.image_problem(client, "autograder-never-built:cpu").endswith(
        "is not built")


def test_docker_fork_refused_by_the_engine_falls_back_or_says_why(monkeypatch):
    """When the engine will not run the judge container (e.g. rootless Docker: no SYS_ADMIN),
    does auto grade with the judge in each container instead, saying so, and does an explicit
    --runner docker-fork stop with the reason?"""
    from autograder.running.runners import docker_fork as fork_runner
    from autograder.running.runners import registry

    need(image_problem())

    def refuse(*_):
        raise fork_runner.ContainerError("the engine refused the judge container (test)")

    monkeypatch.setattr(fork_runner.JudgeContainer, "shared", refuse)
    runner, why = registry.resolve("auto")
    assert runner.name == "docker" and "refused the judge container (test)" in why
    runner, why = registry.resolve("docker-fork")
    assert runner is None and why.startswith("error: --runner docker-fork: the engine refused")


def test_closing_kills_the_containers_in_flight_and_refuses_later_ones():
    """Does ``InFlight.stop`` (a runner closed by a second Ctrl-C) kill the container each
    grading thread holds, tell that thread its container was killed, and refuse a container
    taken after it, while a thread done before it keeps its answer?"""
    import threading

    from autograder.running.runners.in_flight import Abandoned, InFlight

    killed = []
    in_flight = InFlight(killed.append)
    in_flight.hold("done")
    assert in_flight.release()  # graded before the stop: its answer stands
    held, told = threading.Barrier(2), []

    def grading():
        in_flight.hold("busy")
        held.wait()  # held: the stop comes now
        held.wait()
        told.append(in_flight.release())

    thread = threading.Thread(target=grading)
    thread.start()
    held.wait()
    assert in_flight.stop() == 1
    held.wait()
    thread.join()
    assert killed == ["busy"] and told == [False]
    with pytest.raises(Abandoned):
        in_flight.hold("late")
    assert killed == ["busy"]  # the late one is its taker's to discard


@pytest.mark.parametrize("job, said", [
    (b"[1, 2]", "a job is a JSON object"),
    (b"{not json", "JSONDecodeError"),
    (b'{"name": "x.ipynb"}', "KeyError: 'join_pid'"),
    (b'{"name": "x.ipynb", "join_pid": SELF}', "in the judge's own mnt namespace"),
    (b'{"name": "x.ipynb", "join_pid": 1}', "is not a running process"),
], ids=["list", "not-json", "no-pid", "own-pid", "pid-1"])
def test_judge_service_answers_a_bad_job_with_a_grader_error(job, said):
    """Does the docker-fork judge answer a job it cannot use with a result line that says why
    (never silence, and never a worker in its own namespaces or the host's)?"""
    import socket
    import threading

    from autograder.running.container_protocol import RESULT_MARKER
    from autograder.running.entry import judge_service

    ours, theirs = socket.socketpair()
    thread = threading.Thread(target=judge_service.handle, args=(theirs,))
    thread.start()
    ours.sendall(job.replace(b"SELF", str(os.getpid()).encode()))
    ours.shutdown(socket.SHUT_WR)
    reply = ours.makefile("rb").read().decode()
    thread.join(timeout=10)
    ours.close()
    assert reply.startswith(RESULT_MARKER) and reply.endswith("\n")
    doc = json.loads(reply[len(RESULT_MARKER):])
    assert doc["status"] == "grader-error" and said in doc["error"], doc


def test_container_cannot_award_more_than_the_zip():
    """Is a result document from a container clamped to the zip's questions and points?"""
    from autograder.running.resultdoc import DocumentError, Question, ResultDoc
    from autograder.running.runners.docker import DockerRunner

    runner = DockerRunner.__new__(DockerRunner)
    runner.questions = {"q1": 2.0}
    doc = runner.checked(ResultDoc.graded("forged", {
        "q1": Question(99.0, 99.0), "q-invented": Question(5.0, 5.0)}, assignment="a",
        seed=1).to_dict(), "real.ipynb")
    assert doc.file == "real.ipynb"
    assert doc.questions == {"q1": Question(2.0, 2.0)}
    # an image of an older grader answers without this schema: a grader error, never points
    with pytest.raises(DocumentError, match="the judge's answer: not a result document"):
        runner.checked({"file": "x", "status": "graded", "questions": {}}, "real.ipynb")


def test_used_containers_are_removed_off_the_submissions_path_and_never_pile_up():
    """Is a used container removed in the background (the caller does not wait for the
    engine), never more than ``most`` at once (the next caller waits for a slot instead of
    letting them pile up), each once, all of them gone when ``close`` returns, and one handed
    over after ``close`` removed at once?"""
    import threading
    import time

    from autograder.running.runners.container import Removals

    lock, state = threading.Lock(), {"now": 0, "most": 0, "removed": []}

    class Slow:
        def __init__(self, name):
            self.name = name

        def remove(self, force):
            assert force
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.2)
            with lock:
                state["now"] -= 1
                state["removed"].append(self.name)

    removals = Removals(2)
    start = time.monotonic()
    removals.remove(Slow(0))
    assert time.monotonic() - start < 0.1  # not on the caller's path
    for name in range(1, 6):
        removals.remove(Slow(name))
    removals.close()
    assert sorted(state["removed"]) == list(range(6)) and state["most"] == 2
    removals.remove(Slow(6))
    assert state["removed"][-1] == 6


def copy_samples(folder: Path) -> Path:
    """The sample submissions and both solutions, in one folder (``folder``)."""
    for path in [*ROOT.glob("submissions/*/*.ipynb"), *ROOT.glob("solutions/*.ipynb")]:
        (folder / path.parent.name).mkdir(parents=True, exist_ok=True)
        (folder / path.parent.name / path.name).write_bytes(path.read_bytes())
    return folder


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    return copy_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="session")
def sealed_graded(build_dir, tmp_path_factory) -> Path:
    """The samples graded once per test run by the local sealed runner with ``SEED`` (the rows
    the containers here and the Kubernetes Job's pods must give): the first xdist worker to
    need it grades under a lock, the other reuses it."""
    shared = shared_dir(tmp_path_factory)
    out = shared / "sealed-samples"
    with open(shared / "sealed-samples.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "sealed-samples.done").exists():
            import shutil

            shutil.rmtree(out, ignore_errors=True)  # a worker stopped half way
            shutil.rmtree(shared / "sealed-samples-in", ignore_errors=True)
            grade(copy_samples(shared / "sealed-samples-in"), out, "sealed", build=build_dir)
            (shared / "sealed-samples.done").touch()
    return out


DOCKER_SAMPLE = ("solutions/autograd-exercises.ipynb", "solutions/autograd-porting.ipynb",
                 "autograd-exercises/ada-lovelace.ipynb", "autograd-porting/barbara-liskov.ipynb")


@pytest.mark.slow
@pytest.mark.needs_docker
@pytest.mark.needs_root
@pytest.mark.xdist_group("docker-rows")  # both runners on one worker: sealed_graded once
@pytest.mark.parametrize("runner", [
    pytest.param("docker", marks=pytest.mark.extended), "docker-fork"])
def test_containers_give_the_sealed_runners_rows_and_the_solutions_full_marks(
        samples, sealed_graded, build_dir, tmp_path, runner):
    """Does every sample submission get the same row (and messages) in a container as with
    the local sealed runner, for one seed, and do both solutions score 100%? ``docker-fork``
    grades all of them; ``docker`` (a container and a cold torch start per notebook, the same
    judge inside) both solutions and one submission with mistakes per assignment."""
    folder, expected = samples, grade_rows(sealed_graded)
    if runner == "docker":
        folder = tmp_path / "sample"
        for name in DOCKER_SAMPLE:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes((samples / name).read_bytes())
        expected = {a: {f: row for f, row in rows.items()
                        if f in DOCKER_SAMPLE or not f.endswith(".ipynb")}
                    for a, rows in expected.items()}
    docker_rows = grade(folder, tmp_path / "docker", runner, build=build_dir)
    assert docker_rows == expected
    for assignment in ("autograd-exercises", "autograd-porting"):
        row = docker_rows[assignment][f"solutions/{assignment}.ipynb"]
        assert float(row["percent_correct"]) == 1.0 and row["grading_status"] == "Completed", row
    for path in sorted(sealed_graded.glob("*/results/**/*.json")):
        twin = tmp_path / "docker" / path.relative_to(sealed_graded)
        if runner == "docker" and not twin.exists():
            continue  # not in DOCKER_SAMPLE (the rows above say which were graded)
        assert json.loads(twin.read_text())["questions"] == json.loads(path.read_text())[
            "questions"], path.name


@pytest.mark.needs_docker
def test_gpu_request_without_nvidia_toolkit_is_refused_with_the_reason():
    """Without the NVIDIA container toolkit, is a GPU request refused (no silent CPU run)?"""
    from autograder.running.runners.docker_engine import IMAGES, engine, gpu_problem

    client = engine()
    if "nvidia" in client.info().get("Runtimes", {}):
        pytest.skip("this engine has the NVIDIA runtime: the GPU path is tested on GPU machines")
    problem = gpu_problem(client, IMAGES["cpu"])
    assert problem is not None and "NVIDIA container toolkit" in problem, problem


def _gradescope_tar(zip_path: Path, notebook: Path) -> bytes:
    """Gradescope's layout as a tar: the zip unpacked in /autograder/source, run_autograder at
    /autograder/run_autograder, the notebook in /autograder/submission."""
    import io
    import tarfile
    import zipfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar, zipfile.ZipFile(zip_path) as zf:
        def add(name: str, data: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))

        for member in zf.namelist():
            add(f"autograder/source/{member}", zf.read(member), 0o755)
        add("autograder/run_autograder", zf.read("run_autograder"), 0o755)
        add(f"autograder/submission/{notebook.name}", notebook.read_bytes())
    return buf.getvalue()


@pytest.mark.slow
@pytest.mark.needs_docker
@pytest.mark.parametrize("notebook, expected", [
    (ROOT / "solutions" / "autograd-exercises.ipynb", EXERCISES),
    (HOSTILE / "forge-results.ipynb", None),
])
def test_gradescope_zip_in_the_image_with_gradescope_layout(zips, tmp_path, notebook, expected):
    """Does the Gradescope zip's run_autograder, run in the grading image the way Gradescope
    lays it out, write results.json with otter's scores (full for the solution, and not full
    for a notebook that tries to forge its results)?"""
    import io
    import tarfile

    from autograder.authoring.gradescope import gradescope_zip
    from autograder.running.runners.docker_engine import IMAGES, engine

    zip_path = gradescope_zip(zips["autograd-exercises"], tmp_path / "gs.zip")
    client = engine()
    container = client.containers.create(IMAGES["cpu"], ["/autograder/run_autograder"],
                                         network_mode="none",
                                         environment={"AUTOGRADER_SEED": str(SEED)})
    try:
        container.put_archive("/", _gradescope_tar(zip_path, notebook))
        container.start()
        assert container.wait(timeout=600)["StatusCode"] == 0, container.logs()[-3000:]
        stream, _ = container.get_archive("/autograder/results/results.json")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            results = json.load(tar.extractfile("results.json"))
    finally:
        container.remove(force=True)
    # no top-level score: Gradescope adds up the tests' scores, as otter leaves it
    assert {t["name"] for t in results["tests"]} >= {"q1_accumulation", "q5_numpy"}
    score = sum(t.get("score", 0.0) for t in results["tests"])
    if expected is not None:
        assert score == expected, results
    else:
        assert score < EXERCISES, results


@pytest.mark.slow
@pytest.mark.needs_docker
def test_stock_otter_grade_with_the_gradescope_zip_on_the_image(zips, tmp_path):
    """Does stock `otter grade` (through the labelled buildx shim, as this host has no buildx)
    grade with the Gradescope zip on the grading image and give the sealed runner's points?"""
    from autograder.authoring.gradescope import gradescope_zip
    from autograder.running.runners.docker_engine import IMAGES

    folder = tmp_path / "in"
    folder.mkdir()
    for path in (ROOT / "solutions" / "autograd-exercises.ipynb",
                 ROOT / "submissions" / "autograd-exercises" / "alan-turing.ipynb"):
        (folder / path.name).write_bytes(path.read_bytes())
    zip_path = gradescope_zip(zips["autograd-exercises"], tmp_path / "gs.zip")
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docker" / "otter_grade_legacy.py"), "grade",
         "-n", "autograd-exercises", "-a",
         str(zip_path),
         "--image", IMAGES["cpu"], "--containers", "2", "--timeout", "600",
         "-o", str(out), *sorted(str(p) for p in folder.glob("*.ipynb"))],
        cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "final_grades.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert float(rows["autograd-exercises.ipynb"]["percent_correct"]) == 1.0, rows
    # alan-turing's mistakes cost the same points for any seed
    assert float(rows["alan-turing.ipynb"]["total_points_earned"]) == ALAN_TURING, rows


@pytest.mark.slow
@pytest.mark.needs_docker
def test_spare_containers_are_used_then_removed(zips, tmp_path):
    """With spares (more cores than jobs), is each submission graded in a container started
    ahead of need, and is no container left once the runner is closed?"""
    from autograder.running.runners.docker import DockerRunner
    from autograder.running.runners.docker_engine import engine

    assignment = "autograd-exercises"
    subs = two_samples(tmp_path, assignment)
    client = engine()
    before = {c.id for c in owned_containers(os.getpid())}  # this process is the grader
    runner = DockerRunner(setup(assignment, zips[assignment]), client=client, spares=1)
    try:
        runner.expect(len(subs))
        results = [runner.grade(sub).row() for sub in subs]
        assert runner.spares.spares == []  # the spare started for the second one was used
    finally:
        runner.close()
    assert {r.name: sum(s for s, _ in r.scores.values()) for r in results} == {
        "ada-lovelace.ipynb": EXERCISES, "alan-turing.ipynb": ALAN_TURING}
    left = {c.id for c in owned_containers(os.getpid())} - before
    assert left == set()


SLEEP = 100  # seconds the abandoned notebook's last cell sleeps (under the 120 s cell limit)


def _in_the_sleeping_cell() -> bool:
    """Whether the notebook's worker sleeps in the kernel (``hrtimer_nanosleep``), i.e. runs its
    last cell, ``time.sleep``: a Python process of this process's runner that is the worker, in
    a ``docker-fork`` submission container (which holds only the worker, beside its ``sleep``)
    or two forks below a ``docker`` container's judge (judge, zygote, worker); the judges and
    zygotes also sleep at times."""
    for container in owned_containers(os.getpid(), status="running"):
        try:
            rows = container.top()["Processes"]  # UID PID PPID ...
        except Exception:  # noqa: BLE001 - removed meanwhile
            continue
        role, parents = container.labels.get("autograder-role"), {row[1]: row[2] for row in rows}
        if role == "judge":  # docker-fork's: its zygote forks workers into other containers
            continue
        for pid, parent in parents.items():
            worker = role == "submission" or parents.get(parent) in parents
            try:
                if (worker and Path(f"/proc/{pid}/comm").read_text().startswith("python")
                        and Path(f"/proc/{pid}/wchan").read_text() == "hrtimer_nanosleep"):
                    return True
            except OSError:  # ended meanwhile
                continue
    return False


@pytest.mark.slow
@pytest.mark.needs_docker
@pytest.mark.parametrize("runner_name", [
    pytest.param("docker", marks=pytest.mark.extended), "docker-fork"])
def test_closing_a_runner_stops_the_submission_in_flight_at_once(zips, tmp_path, runner_name):
    """When the runner is closed while a notebook is being graded (a second Ctrl-C), is its
    container killed at once, so that the grading thread returns within seconds (not after
    the notebook's 100 s sleep), with a grader error nobody records as graded, and no
    container of it left?"""
    import threading
    import time

    import nbformat

    from autograder.running.runners.docker import DockerRunner
    from autograder.running.runners.docker_engine import engine
    from autograder.running.runners.docker_fork import ForkRunner
    from autograder.running.submissions import find

    assignment = "autograd-exercises"
    folder = tmp_path / "in"
    folder.mkdir()
    nb = nbformat.read(ROOT / "solutions" / f"{assignment}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f"import time\ntime.sleep({SLEEP})"))
    nbformat.write(nb, folder / "sleeper.ipynb")
    [sub] = find(folder, assignment)
    before = {c.id for c in owned_containers(os.getpid())}
    make = ForkRunner if runner_name == "docker-fork" else DockerRunner
    runner = make(setup(assignment, zips[assignment]), client=engine())
    judge = getattr(getattr(runner, "service", None), "container", None)
    got = []
    grading = threading.Thread(target=lambda: got.append(runner.grade(sub)))
    grading.start()
    try:
        end = time.monotonic() + 120
        while not runner.in_flight.held and time.monotonic() < end:
            time.sleep(0.2)
        assert runner.in_flight.held, "the submission never got its container"
        while not _in_the_sleeping_cell() and time.monotonic() < end:
            time.sleep(0.2)
        assert _in_the_sleeping_cell(), "the notebook's worker never reached its sleep"
        assert grading.is_alive()
        closed = time.monotonic()
        runner.close()
        grading.join(timeout=SLEEP)
        took = time.monotonic() - closed
    finally:
        runner.close()
        grading.join()
    assert took < 20, f"the grading thread ended {took:.0f} s after close()"
    [doc] = got
    assert doc.status.startswith("grader-error") and "stopped" in doc.error, doc
    def left() -> set[str]:
        return {c.id for c in owned_containers(os.getpid())} - before - {getattr(judge, "id", None)}

    end = time.monotonic() + 30  # the engine's auto-removal of a killed docker-fork container
    while left() and time.monotonic() < end:
        time.sleep(0.2)
    assert left() == set()


WHERE_AM_I = """
import os
print("CGROUP", [line.split(":", 2)[2] for line in open("/proc/self/cgroup").read().splitlines()
                 if line.split(":", 2)[1] in ("memory", "")][0])
print("HOST", os.uname().nodename, os.getuid(), os.getpid(),
      *sorted(p for p in os.listdir("/proc") if p.isdigit()))
"""


@pytest.mark.slow
@pytest.mark.needs_docker
def test_docker_fork_runs_each_submission_in_a_fresh_container_of_its_own(build_dir, tmp_path):
    """With docker-fork, is each notebook's worker inside its own container (its memory
    cgroup and hostname, and a pid namespace where it sees only that container's ``sleep``
    and itself: not the judge's), as an unprivileged uid under the seccomp filter; and is no
    container left once the grader exits?"""
    import nbformat

    from notebooks import template
    from test_seccomp import EXPECTED, probe_source, refused_calls

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("first", "second"):
        nb = template("autograd-exercises")
        nb.cells.insert(1, nbformat.v4.new_code_cell(WHERE_AM_I + probe_source()))
        nbformat.write(nb, folder / f"{name}.ipynb")
    grader: list[int] = []
    grade(folder, tmp_path / "out", "docker-fork", build=build_dir, pids=grader)
    hosts = []
    for name in ("first", "second"):
        doc = json.loads((tmp_path / "out" / "autograd-exercises" / "results" /
                          f"{name}.ipynb.json").read_text())
        said = {line.split()[0]: line.split()[1:] for line in doc["output"].splitlines()
                if line.startswith(("CGROUP ", "HOST "))}
        host, uid, pid, *pids = said["HOST"]
        container = said["CGROUP"][0].rstrip("/").rsplit("/", 1)[-1]
        assert "docker" in said["CGROUP"][0] and container.startswith(host), said
        assert 61000 <= int(uid) < 62000
        assert sorted(pids) == sorted(["1", pid]), said  # its container's sleep, and itself
        assert refused_calls(doc["output"]) == EXPECTED  # the workers' seccomp filter
        hosts.append(host)
    assert hosts[0] != hosts[1]
    # the judge's container ended with the grader, each submission's too (only this grader's
    # containers count: other graders may share the engine)
    assert owned_containers(grader[0]) == []


@pytest.mark.slow
@pytest.mark.needs_docker
def test_docker_fork_survives_its_judge_container_dying(zips, tmp_path):
    """If the judge container goes away mid-batch (killed, out of memory), is the next
    submission still graded, by a new judge container, with full marks where they are due?"""
    from autograder.running.runners.docker_engine import engine
    from autograder.running.runners.docker_fork import ForkRunner

    assignment = "autograd-exercises"
    first, second = two_samples(tmp_path, assignment)
    runner = ForkRunner(setup(assignment, zips[assignment]), client=engine())
    try:
        assert sum(s for s, _ in runner.grade(first).row().scores.values()) == EXERCISES
        old = runner.service.container.id
        runner.service.container.kill()
        graded = runner.grade(second).row()
        assert graded.status == "Completed", graded.status
        assert sum(s for s, _ in graded.scores.values()) == ALAN_TURING
        assert runner.service.container.id != old
    finally:
        runner.close()


@pytest.mark.slow
@pytest.mark.needs_docker
def test_docker_fork_one_job_starts_the_next_container_while_this_one_is_graded(zips, tmp_path):
    """With one job at a time (``--jobs 1``), is the next submission's container started by
    the spares' thread while this one is graded (so only the first submission waits for a
    container's start), each used container removed off the submissions' path, and none left
    once the runner is closed?"""
    import threading
    import time

    from autograder.running.runners.docker_fork import ForkRunner
    from autograder.running.runners.registry import RUNNERS

    assignment = "autograd-exercises"
    subs = two_samples(tmp_path, assignment)
    before = {c.id for c in owned_containers(os.getpid())}
    runner = RUNNERS["docker-fork"].make(setup(assignment, zips[assignment]))  # --jobs 1
    assert isinstance(runner, ForkRunner) and runner.spares.most == 2
    launched_by, launch = [], runner.spares.launch
    runner.spares.launch = lambda: launched_by.append(threading.current_thread()) or launch()
    try:
        runner.expect(len(subs))
        points = [sum(s for s, _ in runner.grade(subs[0]).row().scores.values())]
        end = time.monotonic() + 120
        while not runner.spares.spares and time.monotonic() < end:
            time.sleep(0.05)
        points.append(sum(s for s, _ in runner.grade(subs[1]).row().scores.values()))
        assert runner.spares.spares == []  # the second one took the spare
    finally:
        runner.close()
    assert points == [21.0, 14.5]
    # at most the first was started on the submission's own thread
    assert sum(t is threading.main_thread() for t in launched_by) <= 1, launched_by
    left = [c for c in owned_containers(os.getpid())
            if c.id not in before and c.labels.get("autograder-role") == "submission"]
    assert left == []


@pytest.mark.needs_docker
def test_docker_fork_judge_container_has_a_memory_limit_sized_for_its_jobs():
    """Is the docker-fork judge container memory-bounded (a judge bug costs its jobs, never
    the host), sized for the jobs it serves, grown when a run needs more than the probe that
    started it, and does the kernel hold a process in it to that limit?"""
    from autograder.running.runners.docker_engine import IMAGES, engine
    from autograder.running.runners.judge_container import JudgeContainer, judge_memory

    client = engine()
    key = (client.api.base_url, client.images.get(IMAGES["cpu"]).id)
    previous = JudgeContainer._shared.get(key)
    service = JudgeContainer(client, IMAGES["cpu"], jobs=1)
    JudgeContainer._shared[key] = service  # as registry.resolve's one-job probe leaves it

    def limit() -> int:
        return client.api.inspect_container(service.container.id)["HostConfig"]["Memory"]

    try:
        assert limit() == int(judge_memory(1)[:-1]) * 2**20
        assert JudgeContainer.shared(client, IMAGES["cpu"], 2) is service
        assert limit() == int(judge_memory(2)[:-1]) * 2**20
        over = limit() + 256 * 2**20
        code, _ = service.container.exec_run(
            ["/opt/autograder-env/bin/python", "-c", f"b = b'x' * {over}; print('ALIVE')"])
        assert code == 137  # SIGKILL from the container's memory cgroup: never past the limit
    finally:
        if previous is None:
            JudgeContainer._shared.pop(key, None)
        else:
            JudgeContainer._shared[key] = previous
        service.close()


@pytest.mark.needs_docker
def test_containers_of_a_killed_grader_are_removed_by_the_next_one():
    """Are containers left by a grader of this host that no longer runs removed when the next
    runner starts, and those of a running grader or another host left alone?"""
    import socket

    from autograder.running.runners.docker_engine import IMAGES, OWNER_LABEL, engine, remove_orphans

    client = engine()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that has ended
    host = socket.gethostname()
    owners = {"dead": f"{host}:{gone.pid}", "alive": f"{host}:{os.getpid()}",
              "elsewhere": f"not-{host}:{gone.pid}"}
    made = {k: client.containers.create(IMAGES["cpu"], ["sleep", "60"], entrypoint=[],
                                        network_mode="none", labels={OWNER_LABEL: v})
            for k, v in owners.items()}
    try:
        removed = remove_orphans(client)
        assert made["dead"].id in removed
        assert made["alive"].id not in removed and made["elsewhere"].id not in removed
        left = {c.id for c in client.containers.list(all=True, filters={"label": OWNER_LABEL})}
        assert made["dead"].id not in left and made["alive"].id in left
    finally:
        for container in made.values():
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - removed by the test
                pass
