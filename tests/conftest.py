"""Shared test machinery: the markers that say what a test needs, and the fixtures that build
what many tests grade with. New test files should use these rather than their own copies.

Markers (registered in pyproject.toml; one mechanism for every file):

- ``@pytest.mark.needs_root``: the sealed judge's sandbox (namespaces, setuid) needs root.
- ``@pytest.mark.needs_docker``: a Docker engine and the CPU grading image (``make image``);
  ``@pytest.mark.needs_docker(image=False)``: the engine only.
- ``@pytest.mark.slow``: starts otter, graders or containers (``make test-fast`` skips them).
- ``@pytest.mark.extended``: the suite's second part, which ``make test`` leaves to
  ``make test-extended`` (CI runs both): corpora graded in full (the blind rounds, the variant
  catalogue, the seed sweep) and repeats of a path ``make test`` already takes once (the
  ``docker`` runner beside ``docker-fork``, fresh-machine installs, Ctrl-C, shards).

A test whose need is missing is skipped with the reason; with ``AUTOGRADER_TESTS_REQUIRE_ALL=1``
(``.ci/run`` sets it: CI has root and Docker) it fails instead, so nothing skips silently in CI.

Fixtures (session-wide; built once per ``pytest`` run, shared by the xdist workers):

- ``assigned``: one ``autograder assign`` per assignment, into a scratch folder (never the
  checkout's ``build/``): its zip, fresh student template folder, solution notebook and what
  the CLI printed.
- ``zips``: ``{assignment: autograder zip}`` from ``assigned``; ``build_dir``: the folder
  holding them, for ``autograder --build``.
- ``shared_dir(tmp_path_factory)``: the folder every xdist worker of this run sees, for what
  one worker builds under a lock and the other reuses (``assigned``, the stand-in torch index).
- ``in_background``: runs a clean-up beside the tests (the engine deleting a container or an
  image of a gigabyte: seconds of disk work); the session waits for each at its end, and
  fails on its error.

Helpers for containers (a test counts only what its own grader made, never another grader's
on a shared engine): ``owned_containers(pid)``; for pages: ``browser()`` (headless Chromium).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The property tests draw the same examples in every run (CI's included): a suite that passes
# on a commit passes on it again. Random draws found, and will find, the rare input where a
# name is not given (an L1 penalty on b unnamed in ~3% of draws); those are searched for on
# purpose (HYPOTHESIS_PROFILE=explore, or more seeds in a script), not met by chance in CI.
settings.register_profile("suite", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

REQUIRE_ALL = "AUTOGRADER_TESTS_REQUIRE_ALL"

# One torch (OpenMP) thread in every test process and in what it starts, as the judge gives
# student code (sandbox.py, the container runners). Torch's default, a thread per core, has its
# threads spin while they wait: two xdist workers on 2 cores, each with two threads, ran
# tests/test_variants.py in 102 s instead of 13 s. Set before any test module imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# pytest keeps each test module's assert-rewritten bytecode in tests/__pycache__ and reads it
# back in the next run, but writes none where Python may not write bytecode
# (PYTHONDONTWRITEBYTECODE, set on CI machines and on this one): each xdist worker then
# rewrote the ~50 test modules' asserts in every run, about a third of its collection's CPU.
# This process only: the processes the tests start keep the environment's setting.
sys.dont_write_bytecode = False


def pytest_addoption(parser):
    # tests/test_reports_slow.py: rewrite tests/files/golden/ from the current feedback.
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="regenerate the golden feedback files instead of comparing")


@lru_cache(maxsize=None)
def engine_problem() -> str | None:
    """Why no Docker engine can be used here, or ``None``."""
    from autograder.running.runners.docker_engine import engine

    if engine() is None:
        return "no Docker engine reachable (start dockerd, or set DOCKER_HOST)"
    return None


@lru_cache(maxsize=None)
def image_problem(variant: str = "cpu") -> str | None:
    """Why the tests cannot use the ``variant`` grading image here, or ``None``."""
    from autograder.running.runners.docker_engine import IMAGES, engine

    if engine_problem():
        return engine_problem()
    try:
        engine().images.get(IMAGES[variant])
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound, or the engine went away
        make = {"cpu": "make image", "cuda": "make image-gpu"}[variant]
        return f"the grading image {IMAGES[variant]} is not built: run `{make}`"
    from autograder.running.runners.image_inputs import stale

    return stale(engine(), IMAGES[variant], variant)  # graders refuse an image of other sources


def root_problem() -> str | None:
    return None if os.geteuid() == 0 else "needs root (the sealed judge's sandbox: namespaces, setuid)"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` every test of an ``xdist_group`` must run on one worker (the
    hostile batch listens on fixed ports; a group's module fixture grades once): xdist marks
    them by a ``@group`` suffix on the node id. Stop, rather than run the groups split."""
    if not getattr(config.option, "loadgroup", False):
        return
    split = [item.nodeid for item in items
             if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if split:
        raise pytest.UsageError(f"pytest-xdist did not group {split[0]} (and {len(split) - 1} "
                                "more) by its xdist_group: this pytest/xdist pair cannot "
                                "--dist loadgroup (see the pin in pyproject.toml)")


def need(*problems: str | None) -> None:
    """Skip the running test (or, with ``AUTOGRADER_TESTS_REQUIRE_ALL=1``, fail it) for each
    problem that is not ``None``: the one way a test says that this machine lacks something,
    whether a marker found it or the test itself (``need(image_problem())``)."""
    found = [p for p in problems if p]
    if found:
        if os.environ.get(REQUIRE_ALL) == "1":
            pytest.fail(f"{REQUIRE_ALL}=1 but {'; '.join(found)}", pytrace=False)
        pytest.skip("; ".join(found))


def browser():
    """A headless Chromium driven by selenium, or a skip that says what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver")
    binary = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    need(None if binary and driver else "chromium and chromium-driver are not installed "
         "(apt-get install -y chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--window-size=1200,3000"):
        options.add_argument(arg)
    return webdriver, options, driver


def pytest_runtest_setup(item):
    problems = []
    if item.get_closest_marker("needs_root"):
        problems.append(root_problem())
    docker = item.get_closest_marker("needs_docker")
    if docker:
        problems.append(image_problem() if docker.kwargs.get("image", True) else engine_problem())
    need(*problems)


# --- what many tests grade with -------------------------------------------------------------

@dataclass(frozen=True)
class Assigned:
    """One assignment after a fresh ``otter assign`` (see ``assigned``)."""

    zip: Path
    templates: Path
    solution: Path
    output: str  # what ``autograder assign`` printed building it


def shared_dir(tmp_path_factory) -> Path:
    """A folder all xdist workers of this run share (their base temps' parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True)
def torch_modes_kept():
    """A notebook's cells run in this process (``notebooks.namespace``) may leave torch's
    global modes changed (autograd off, another default dtype): put back for the next test."""
    if "torch" not in sys.modules:
        yield
        return
    from autograder.worker.modes import apply_modes, current_modes

    kept = current_modes()
    yield
    apply_modes(kept)


@pytest.fixture(scope="session")
def assigned(tmp_path_factory) -> dict[str, Assigned]:
    """``autograder assign`` (the CLI, hence ``otter assign``) run once per assignment for the
    whole test run, on a copy of its master in a scratch project: each assignment under a lock
    of its own, the first worker to get there builds it, the others wait and reuse it. Each
    worker starts with another assignment, so two workers build the two side by side instead
    of one building both while the other waits. What the CLI printed is kept (``output``):
    the test of its closing lines reads it instead of a second ``otter assign``."""
    from autograder.authoring.layout import ASSIGNMENTS, Layout
    from notebooks import ROOT

    shared = shared_dir(tmp_path_factory) / "assigned"
    shared.mkdir(exist_ok=True)
    project = shared / "project"
    layout = Layout.at(project, shared / "build")
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    start = worker % len(ASSIGNMENTS)
    found = {}
    for assignment in ASSIGNMENTS[start:] + ASSIGNMENTS[:start]:
        with open(shared / f"{assignment}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = shared / f"{assignment}.done"
            if not done.exists():
                masters = project / "assignments" / assignment
                shutil.rmtree(masters, ignore_errors=True)  # a worker stopped half way
                shutil.copytree(ROOT / "assignments" / assignment, masters)
                proc = subprocess.run(
                    [sys.executable, "-m", "autograder", "--project", str(project), "--build",
                     str(layout.build), "assign", assignment],
                    capture_output=True, text=True, timeout=900, check=False)
                assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
                done.write_text(proc.stdout)
            found[assignment] = Assigned(layout.zip(assignment), layout.templates(assignment),
                                         layout.solution(assignment), done.read_text())
    return {a: found[a] for a in ASSIGNMENTS}


@pytest.fixture(scope="session")
def zips(assigned) -> dict[str, Path]:
    """``{assignment: autograder zip}``, built fresh from the masters for this run."""
    return {a: got.zip for a, got in assigned.items()}


@pytest.fixture(scope="session")
def build_dir(zips) -> Path:
    """The build folder holding ``zips`` (``autograder --build`` takes it)."""
    return next(iter(zips.values())).parent.parent


@pytest.fixture(scope="session")
def in_background():
    """``in_background(function, *args, **kwargs)``: called in a thread of the session's, which
    ends after every test (a session fixture's teardown), raising what any of them raised."""
    with ThreadPoolExecutor(2) as pool:
        started = []
        yield lambda function, *args, **kwargs: started.append(
            pool.submit(function, *args, **kwargs))
        for future in started:
            future.result()


def owned_containers(pid: int, **filters) -> list:
    """Containers (running or not) made by the grader with this pid on this host: the owner
    label docker_runner puts on each of its containers. Others' graders on the same engine
    never count."""
    import docker
    from autograder.running.runners.docker_engine import OWNER_LABEL, engine

    label = f"{OWNER_LABEL}={socket.gethostname()}:{pid}"
    for _ in range(20):
        try:
            return engine().containers.list(all=True, filters={"label": label, **filters})
        except docker.errors.NotFound:  # the SDK inspects each listed container: one removed
            continue  # between the list and its inspection (the engine's auto-removal) is gone
    return engine().containers.list(all=True, filters={"label": label, **filters})


@pytest.fixture(autouse=True)
def _fresh_checkout_zips(request) -> None:
    """Every slow test finds the checkout's ``build/`` zips fresh (``checkout_zips``): what
    grades with the checkout's layout (the CLI without ``--build``, ``ensure_zip``) would
    otherwise run a second ``otter assign`` on a fresh or just-merged checkout."""
    if request.node.get_closest_marker("slow"):
        request.getfixturevalue("checkout_zips")


@pytest.fixture(scope="session")
def checkout_zips(zips) -> dict[str, Path]:
    """The zips under the checkout's own ``build/``, for what reads them there (gpu/check.py,
    ``make grade``): a missing or stale one (older than its master, as ensure_zip judges) is
    replaced, atomically, by this run's fresh build instead of a second ``otter assign``."""
    from autograder.authoring.layout import Layout
    from notebooks import ROOT

    layout = Layout.at(ROOT)
    for assignment, fresh in zips.items():
        target, master = layout.zip(assignment), layout.master(assignment)
        if not target.exists() or target.stat().st_mtime < master.stat().st_mtime:
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(f".zip.{os.getpid()}.partial")
            shutil.copyfile(fresh, partial)
            os.replace(partial, target)
    return {a: layout.zip(a) for a in zips}
