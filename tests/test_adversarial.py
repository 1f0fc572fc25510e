"""Hostile submissions against the sealed judge (after PrairieLearn's hostile samples).

Each notebook under ``tests/files/hostile`` is the autograd-exercises solution with one attack
added, usually a wrong answer for the attacked question plus the attack. All of them are graded
in one ``autograder grade`` run together with two copies of the perfect solution (first and last
in the batch); each must get a row, zero on the question it attacks and a message saying what
happened, and the solutions must keep full marks. A second, one-slot run grades a notebook that
leaves a process behind to kill the workers of later submissions, then the solution.

The sealed runner (workers forked from the zygote, each in its own namespaces) grades every
notebook: what an attack earns is the judge's own logic, the same code whichever runner starts
the worker, so it is proven once there. Each container runner (``docker``: a container per
notebook; ``docker-fork``: a judge container and a worker container per notebook) grades the
notebooks whose outcome depends on where the worker runs (``CONTAINED``). Needs root (the
sealed judge's sandbox) and, for the container runners, an engine and the image.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autograder.running.judge import uids
from notebooks import ROOT
from points import EXERCISES, question_points

# one xdist worker holds the whole module: its batch fixture listens on fixed host ports
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("adversarial"), pytest.mark.needs_root]
# the container runners' batches are the whole suite's (make test-all), the sealed one every run's
_DOCKER = [pytest.mark.needs_docker, pytest.mark.extended]
RUNNER_MARKS = {"sealed": [], "docker": _DOCKER, "docker-fork": _DOCKER}
RUNNERS = [pytest.param(runner, marks=marks, id=runner) for runner, marks in RUNNER_MARKS.items()]
# the per-call time limit of a runner's hostile batch (a cell gets four times as much): what
# an endless call costs, so no more than it takes to prove that one is stopped; generous
# enough that a right answer on a loaded machine (other graders beside this one) is never
# stopped by it. The solutions' calls take milliseconds in a worker forked from a rehearsed
# zygote (sealed, docker-fork's judge service); `docker`'s zygote is not rehearsed, so a
# worker's first calls pay torch's lazy imports (up to a second, quiet). The top-level memory
# hog fills the 4 GiB address-space limit in 7-12 s (more under load): the cell limit may
# stop it first, also a right answer (``_memory_hog_stopped``); the worker's read-back of its
# rlimits proves the limit is set in any case (test_confinement.py)
CALL_TIMEOUT = {"sealed": 2, "docker": 5, "docker-fork": 3}
LIMIT = "@LIMIT@"  # in a phrase below: the batch's CALL_TIMEOUT

ASSIGNMENT = "autograd-exercises"
HOSTILE = ROOT / "tests" / "files" / "hostile"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
# the CLI's process entry (``python -m autograder``), printing the process's peak RSS at exit:
# with the sealed runner the judge runs in it (workers are other processes)
CLI = [sys.executable, "-c", "import atexit, resource; from autograder.cli import run; "
       "atexit.register(lambda: print('PEAK-RSS-MB', resource.getrusage("
       "resource.RUSAGE_SELF).ru_maxrss // 1024)); run()"]
PORT = 47613  # the network notebook connects here (127.0.0.1 and ::1)
ABSTRACT = b"\0autograder-hostile-probe"  # and to this abstract unix socket
POSSIBLE = question_points(ASSIGNMENT)
FORGED = [Path(p) for p in ("/tmp/PWNED-forge-results",
                            "/PWNED-forge-results", "/etc/PWNED-forge-results",
                            "/usr/PWNED-forge-results", "/dev/shm/PWNED-forge-results",
                            "/tmp/results.json", "/tmp/final_grades.csv",
                            "/autograder/results/results.json")] + [
    Path(sys.prefix) / "PWNED-forge-results", ROOT / "PWNED-forge-results",
    ROOT / "build" / ASSIGNMENT / "PWNED-forge-results", ROOT / "results.json"]
# what the hostile notebooks' @PROJECT@ and @PREFIX@ stand for: this checkout and its venv,
# wherever they are (the notebooks aim at them; no path of one machine is written in them)
PLACES = {"@PROJECT@": str(ROOT), "@PREFIX@": os.path.realpath(sys.prefix)}


def place_hostile(path: Path, target: Path) -> None:
    """Copy a hostile notebook to ``target`` with this checkout's paths filled in."""
    text = path.read_text(encoding="utf-8")
    for mark, value in PLACES.items():
        text = text.replace(mark, json.dumps(value)[1:-1])  # a JSON string's inside
    target.write_text(text, encoding="utf-8")

# (notebook, attacked question, a phrase the attacked question's messages or the notebook's
# cell report must contain)
CASES = [
    ("allclose-always-true", "q3_multipath", "multipath_grads(3.0, 4.0) gave (0.5, 0.25)"),
    ("always-equal-float", "q3_multipath", "gave (0.5, 0.5)"),
    ("always-equal-list", "q1_accumulation", "gave [-1.0, -1.0, -1.0, -1.0]"),
    ("always-equal-ndarray", "q5_numpy", "changed t itself"),
    ("always-equal-tensor", "q4_vjp", "got shape (3,)"),
    ("backward-replaced", "q4_vjp", "got shape (1,)"),
    ("class-spoof", "q3_multipath", "returned a value the grader cannot read"),
    ("forge-results", "q2_saved", "untracked is (7, 7)"),
    ("fork-bomb", "q2_saved", "untracked is (7, 7)"),
    ("grader-modules-patched", "q1_accumulation", "square_grads must return a list; got str"),
    ("hidden-tests-search", "q5_numpy", "float64"),
    ("huge-output", "q1_accumulation", "gave [0.0, 0.0, 0.0]"),
    ("infinite-loop-in-function", "q5_numpy", f"stopped after {LIMIT} s"),
    ("infinite-loop-toplevel", "q1_accumulation", "stopped after"),
    ("memory-hog-in-function", "q5_numpy", "export_numpy("),
    ("memory-hog-toplevel", "q2_saved", "MemoryError"),
    ("meta-giant-module", "q2_saved", "a module declaring 3.6e9 parameters; the grader accepts "
                                      "at most 1,000,000 elements in one value"),
    ("network", "q4_vjp", "got shape (3,)"),
    ("os-exit-in-function", "q5_numpy", "exited with status 0"),
    ("os-exit-toplevel", "q2_saved", "exited with status 0"),
    ("sleep-in-function", "q5_numpy", f"stopped after {LIMIT} s"),
    ("sleep-toplevel", "q3_multipath", "stopped after"),
    ("subprocess-loop", "q3_multipath", "gave (0.5, 0.25)"),
    ("sys-exit-in-function", "q4_vjp", "SystemExit"),
    ("sys-exit-toplevel", "q1_accumulation", "SystemExit"),
]
SOLUTIONS = ("aaa-perfect-solution", "zzz-perfect-solution")
# What a container runner changes: the filesystem the worker sees and may write (in `docker`
# beside the judge and the hidden tests), its process and memory limits (in `docker` shared
# with the judge), how its output comes back, how a worker that dies in a call is replaced.
# The notebooks that test those; the rest (forged equality, a replaced backward, a cell
# report) are graded once, by the sealed runner.
CONTAINED = {"forge-results", "fork-bomb", "hidden-tests-search", "huge-output",
             "memory-hog-toplevel", "os-exit-in-function"}
# docker-fork only (the default runner; docker shares these paths with it or with sealed): the
# judge container stopping a hung worker in another container, the worker containers' network
# and the processes a worker leaves behind in its container
FORK_ONLY = {"infinite-loop-in-function", "network", "subprocess-loop"}


def cases(runner: str) -> list[tuple[str, str, str]]:
    """The hostile notebooks ``runner``'s batch grades."""
    chosen = CONTAINED | (FORK_ONLY if runner == "docker-fork" else set())
    return [c for c in CASES if runner == "sealed" or c[0] in chosen]


def grading(name: str) -> list:
    """The runners (params for ``batch``) whose batch grades the notebook ``name``."""
    return [r for r in RUNNERS if any(c[0] == name for c in cases(r.values[0]))]


def per_runner(cases_of) -> list:
    """``(runner, *case)`` params for a test that reads ``batch`` (indirectly parametrized),
    one per runner and case that runner's batch grades."""
    return [pytest.param(runner, *case, marks=marks, id=f"{runner}-{case[0]}")
            for runner, marks in RUNNER_MARKS.items() for case in cases_of(runner)]

# autograd-porting: the porting solution with one wrong answer and a cell that forges what the
# worker observes about it (docs/security.md). The forgery must change no points: the attacked
# checks fail as the same wrong answer does without it. (notebook, question, attacked checks,
# a phrase their messages must contain)
PORTING = "autograd-porting"
PORTING_HOSTILE = HOSTILE / PORTING
PORTING_CASES = [
    ("forged-saved-count", "q4_device", {"predict_values", "predict_after_move",
                                         "predict_no_graph"}, "recorded a graph"),
    ("forged-dtypes", "q3_gradcheck", {"check_my_op", "check_my_op_at_x"},
     "with a correct my_op returned False"),
    ("forged-devices", "q4_device", {"pick_device"}, "pick_device() with cuda"),
    # reads the judge's choice of op from frames, gc, the request and the op's closure
    # instead of running gradcheck: nothing there names it, so it guesses and fails
    ("judge-request-snooping", "q3_gradcheck", {"check_my_op", "check_my_op_at_x"},
     "whose backward is wrong returned True"),
]


def test_every_hostile_notebook_is_in_the_table():
    on_disk = {p.stem for p in HOSTILE.glob("*.ipynb")}
    assert on_disk == {name for name, _, _ in CASES} | {"survivor-process"}
    assert {p.stem for p in PORTING_HOSTILE.glob("*.ipynb")} == {c[0] for c in PORTING_CASES}


class _Listener:
    """Host-side sockets the network notebook tries to reach; counts what arrives."""

    def __init__(self):
        self.hits: list[str] = []
        self.socks = []
        for family, address in ((socket.AF_INET, ("127.0.0.1", PORT)),
                                (socket.AF_INET6, ("::1", PORT)), (socket.AF_UNIX, ABSTRACT)):
            try:
                s = socket.socket(family, socket.SOCK_STREAM)
                if family != socket.AF_UNIX:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(address)
                s.listen(8)
                s.settimeout(0.2)
            except OSError:
                continue
            self.socks.append(s)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            for s in self.socks:
                try:
                    conn, peer = s.accept()
                except OSError:
                    continue
                self.hits.append(repr(peer))
                conn.close()

    def close(self):
        self.stop.set()
        self.thread.join(timeout=2)
        for s in self.socks:
            s.close()


def _grade(folder: Path, out: Path, jobs: int, build: Path, runner: str = "sealed",
           timeout: int | None = None, submission_timeout: int = 120
           ) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + ["--build", str(build), "grade", "-p", str(folder), "-o", str(out), "--seed", "7",
                                 "--runner", runner, "--no-reports",
                                 "--timeout", str(timeout or CALL_TIMEOUT[runner]),
                                 "--submission-timeout", str(submission_timeout),
                                 "--jobs", str(jobs)],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)


def _idle_uids() -> set[int]:
    """Sandbox uids no grader holds right now (another test may be grading concurrently:
    its live workers are not leftovers)."""
    idle = set()
    folder = uids.lock_dir()
    for uid in range(uids.FIRST_UID, uids.FIRST_UID + 100):
        fd = os.open(folder / f"{uid}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            idle.add(uid)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
    return idle


def _sandbox_processes() -> list[str]:
    """Live (not zombie) processes of sandbox uids that no grader holds."""
    found = []
    idle = _idle_uids()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields.get("Uid", "0").split()[0])
        if uid in idle and not fields.get("State", "").strip().startswith("Z"):
            found.append(f"{entry} uid {uid} {fields.get('Name', '').strip()}")
    return found


_BATCHES: dict[str, dict] = {}  # runner -> its batch (this module runs on one xdist worker)


@pytest.fixture(params=RUNNERS)
def batch(request, build_dir, tmp_path_factory):
    """The runner's batch, graded once per test run (kept here rather than by a module-scoped
    fixture: pytest groups a module fixture's tests by parameter index, and the tests that
    choose their runner's cases give ``batch`` other indices, so it would regrade)."""
    if request.param not in _BATCHES:
        _BATCHES[request.param] = _grade_batch(request.param, build_dir, tmp_path_factory)
    return _BATCHES[request.param]


def _grade_batch(runner: str, build_dir: Path, tmp_path_factory) -> dict:
    """Grade ``runner``'s hostile notebooks plus the solution twice, two at a time, in one run."""
    folder = tmp_path_factory.mktemp("hostile-in")
    out = tmp_path_factory.mktemp("hostile-out")
    for name, _, _ in cases(runner):
        place_hostile(HOSTILE / f"{name}.ipynb", folder / f"{name}.ipynb")
    for name in SOLUTIONS:
        shutil.copy(SOLUTION, folder / f"{name}.ipynb")
    for path in FORGED:
        path.unlink(missing_ok=True)
    listener = _Listener()
    try:
        proc = _grade(folder, out, jobs=2, build=build_dir, runner=runner)
    finally:
        listener.close()
    results = out / ASSIGNMENT / "results"
    docs = {p.name.removesuffix(".ipynb.json"): json.loads(p.read_text())
            for p in results.glob("*.json")}
    with open(out / ASSIGNMENT / "final_grades.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    return {"proc": proc, "out": out, "docs": docs, "rows": rows, "listener": listener.hits,
            "leftover": _sandbox_processes(), "runner": runner}


def _memory_hog_stopped(batch, name: str) -> bool:
    """Every worker has at most one core (a container's CPU limit, or locally a CPU cgroup of
    its own), and other graders run beside it: filling memory can take longer than the cell's
    time limit, and stopping it there is also a right answer (it earns nothing either way)."""
    cells = batch["docs"][name]["notebook"]["cells"]
    return any("stopped after" in c.get("reason", "") for c in cells)


def test_batch_completes(batch):
    proc = batch["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    expected = {name for name, _, _ in cases(batch["runner"])} | set(SOLUTIONS)
    assert set(batch["docs"]) == expected
    assert {name.removesuffix(".ipynb") for name in batch["rows"]} >= expected


@pytest.mark.parametrize("name", SOLUTIONS)
def test_solutions_in_the_same_batch_keep_full_marks(batch, name):
    doc = batch["docs"][name]
    assert doc["status"] == "graded"
    assert {q: v["points"] for q, v in doc["questions"].items()} == POSSIBLE
    row = batch["rows"][f"{name}.ipynb"]
    assert float(row["total_points_earned"]) == EXERCISES and row["grading_status"] == "Completed"


@pytest.mark.parametrize("batch,name,question,phrase", per_runner(cases), indirect=["batch"])
def test_attack_earns_nothing_on_its_question(batch, name, question, phrase):
    doc = batch["docs"][name]
    assert doc["status"].startswith("graded"), doc.get("error")
    attacked = doc["questions"][question]
    assert attacked["points"] == 0.0, [t["message"][:300] for t in attacked["tests"]]
    assert not any(t["passed"] for t in attacked["tests"])
    total = sum(v["points"] for v in doc["questions"].values())
    assert total < EXERCISES
    row = batch["rows"][f"{name}.ipynb"]
    assert float(row[question]) == 0.0 and row["grading_status"].startswith("Completed")
    assert abs(float(row["total_points_earned"]) - total) < 1e-9
    said = [t["message"] for t in attacked["tests"]]
    said += [json.dumps(c) for c in doc.get("notebook", {}).get("cells", [])]
    phrase = phrase.replace(LIMIT, str(CALL_TIMEOUT[batch["runner"]]))
    if name == "memory-hog-toplevel" and _memory_hog_stopped(batch, name):
        phrase = "stopped after"
    assert any(phrase in text for text in said), said


@pytest.mark.parametrize("batch", ["sealed"], indirect=True)
def test_cell_reports_say_what_happened(batch):
    cells = {name: batch["docs"][name]["notebook"]["cells"] for name in
             ("os-exit-toplevel", "infinite-loop-toplevel", "sleep-toplevel",
              "sys-exit-toplevel", "memory-hog-toplevel")}
    reason = lambda name: " ".join(c.get("reason", "") for c in cells[name])  # noqa: E731
    assert "exited with status 0" in reason("os-exit-toplevel")
    assert "stopped after" in reason("infinite-loop-toplevel")
    assert "stopped after" in reason("sleep-toplevel")
    errors = lambda name: [c["error"]["type"] for c in cells[name] if "error" in c]  # noqa: E731
    assert errors("sys-exit-toplevel") == ["SystemExit"]
    assert errors("memory-hog-toplevel") == ["MemoryError"] \
        or _memory_hog_stopped(batch, "memory-hog-toplevel")


TIME_LIMIT = re.compile(r"stopped after [\d.]+ s|used up its time limit")


def test_functions_that_hang_or_exit_cost_only_their_question(batch):
    """The attacked question loses; another question may lose points only to a time limit
    (on a loaded machine a replaced worker's replay can be slow), never to a wrong answer:
    the worker was replaced and the other answers were graded as they are."""
    for name, question, _ in cases(batch["runner"]):
        if name not in ("infinite-loop-in-function", "sleep-in-function", "os-exit-in-function",
                        "memory-hog-in-function", "sys-exit-in-function", "class-spoof"):
            continue
        doc = batch["docs"][name]
        assert doc["questions"][question]["points"] == 0.0, name
        for q, v in doc["questions"].items():
            if q == question or v["points"] == POSSIBLE[q]:
                continue
            failed = [t["message"] for t in v["tests"] if not t["passed"]]
            assert failed and all(TIME_LIMIT.search(m) for m in failed), (name, q, failed)


def test_output_is_capped_and_fake_otter_output_is_ignored(batch):
    doc = batch["docs"]["huge-output"]
    assert "more bytes of output were dropped" in doc["output"]
    assert len(doc["output"]) < 100_000
    path = batch["out"] / ASSIGNMENT / "results" / "huge-output.ipynb.json"
    assert path.stat().st_size < 200_000
    assert "All test cases passed!" in doc["output"]  # printed, and it changed nothing
    assert doc["questions"]["q1_accumulation"]["points"] == 0.0


# In a container the worker also sees the image's /var (apt's folders) and, with no hidepid
# there, its parent's command line: the judge's entry point. Neither holds a secret.
CONTAINER_VISIBLE = re.compile(r"LEAK (/var: |/proc/\d+/cmdline: b'/opt/autograder-env/bin/"
                               r"python\\x00-m\\x00autograder\.running\.entry\.container)")


def test_hidden_tests_and_host_are_invisible(batch):
    output = batch["docs"]["hidden-tests-search"]["output"]
    assert "PROBE-DONE" in output, output[-3000:]
    leaks = [line for line in output.splitlines() if line.startswith("LEAK")]
    if batch["runner"] != "sealed":
        leaks = [line for line in leaks if not CONTAINER_VISIBLE.match(line)]
    else:
        assert "PROBE-DONE 0 hits" in output, output[-3000:]
    assert leaks == [], output[-3000:]
    assert "AUTOGRADER_SEED" not in output


def test_no_file_written_outside_the_worker(batch):
    assert [p for p in FORGED if p.exists()] == []
    out = batch["out"]
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    expected = {f"{ASSIGNMENT}/results/{name}.ipynb.json" for name in batch["docs"]}
    assert files == expected | {f"{ASSIGNMENT}/final_grades.csv", f"{ASSIGNMENT}/timings.json",
                                f"{ASSIGNMENT}/written/questions.json", "grading.json"}
    output = batch["docs"]["forge-results"]["output"]
    assert f"WROTE {ROOT}/PWNED-forge-results" not in output
    assert f"DENIED {ROOT}/PWNED-forge-results" in output
    assert "@PROJECT@" not in output and "@PREFIX@" not in output


@pytest.mark.parametrize("batch", grading("network"), indirect=True)
def test_network_is_unreachable(batch):
    assert batch["listener"] == []
    output = batch["docs"]["network"]["output"]
    assert "CONNECTED" not in output
    assert "BLOCKED 127.0.0.1" in output and "BLOCKED 1.1.1.1" in output


def test_no_sandbox_process_outlives_the_batch(batch):
    assert batch["leftover"] == []


def test_fork_bomb_hits_the_process_limit(batch):
    assert "fork stopped after" in batch["docs"]["fork-bomb"]["output"]


def test_a_process_left_behind_cannot_touch_the_next_submission(build_dir, tmp_path):
    """One slot: the survivor's relay (a process that keeps changing pid and kills every other
    process of its uid) must die with its submission; the solution after it keeps full marks."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(HOSTILE / "survivor-process.ipynb", folder / "a-survivor-process.ipynb")
    shutil.copy(SOLUTION, folder / "b-perfect-solution.ipynb")
    proc = _grade(folder, tmp_path / "out", jobs=1, build=build_dir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = tmp_path / "out" / ASSIGNMENT / "results"
    survivor = json.loads((results / "a-survivor-process.ipynb.json").read_text())
    assert survivor["questions"]["q2_saved"]["points"] == 0.0
    solution = json.loads((results / "b-perfect-solution.ipynb.json").read_text())
    assert solution["status"] == "graded"
    assert {q: v["points"] for q, v in solution["questions"].items()} == POSSIBLE
    assert _sandbox_processes() == []


# The grader's own peak RSS grading the sealed batch (the judge runs in it, two at a time; the
# workers are other processes), which holds the giant meta module: 266 MB measured 2026-12-02
# (torch, the checks). Without the decoding budgets the judge builds one 30000 x 30000 layer
# (3,433 MB) for every layer the notebook declares, and is OOM-killed.
JUDGE_PEAK_MB = 800


@pytest.mark.parametrize("batch", ["sealed"], indirect=True)
def test_a_giant_meta_module_costs_the_judge_no_memory(batch):
    peak = int(re.search(r"PEAK-RSS-MB (\d+)", batch["proc"].stdout).group(1))
    assert peak < JUDGE_PEAK_MB, peak
    attacked = batch["docs"]["meta-giant-module"]
    assert attacked["questions"]["q2_saved"]["points"] == 0.0
    messages = " ".join(t["message"] for t in attacked["questions"]["q2_saved"]["tests"])
    assert "a module declaring 3.6e9 parameters" in messages, messages
    for name in SOLUTIONS:
        solution = batch["docs"][name]
        assert {q: v["points"] for q, v in solution["questions"].items()} == POSSIBLE


@pytest.fixture(scope="module", params=[r for r in RUNNERS if r.values[0] != "docker"])
def porting_batch(request, build_dir, tmp_path_factory):
    """The porting hostiles and the porting solution, graded in one run. What a forged
    observation earns is decided by the judge; the sealed runner proves it, and ``docker-fork``
    (the default in containers) that its worker image reports the same."""
    folder = tmp_path_factory.mktemp("porting-in")
    out = tmp_path_factory.mktemp("porting-out")
    for path in PORTING_HOSTILE.glob("*.ipynb"):
        shutil.copy(path, folder / path.name)
    shutil.copy(ROOT / "solutions" / f"{PORTING}.ipynb", folder / "perfect-solution.ipynb")
    # porting trains models and runs gradcheck: limits for a loaded machine, not for attacks
    proc = _grade(folder, out, jobs=2, build=build_dir, runner=request.param, timeout=60,
                  submission_timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {name: json.loads((out / PORTING / "results" / f"{name}.ipynb.json").read_text())
            for name in [c[0] for c in PORTING_CASES] + ["perfect-solution"]}


def test_nothing_in_the_worker_names_the_swapped_op(porting_batch):
    """The snooping check_my_op walked the stack, gc, the request line and the stand-in's
    names and closure on every call, and found nothing that names the op (on the grader before
    the fix it found the request in a frame on every call and earned the point)."""
    output = porting_batch["judge-request-snooping"]["output"]
    said = {line for line in output.splitlines() if line.startswith("SNOOPED")}
    assert said == {"SNOOPED nothing"}, output[-3000:]


def _check_outcomes(doc: dict, question: str) -> dict[str, bool]:
    return {c["check"]: c["passed"] for t in doc["questions"][question]["tests"]
            for c in t.get("checks", [])}


def test_porting_solution_keeps_full_marks_beside_the_forgers(porting_batch):
    doc = porting_batch["perfect-solution"]
    assert doc["status"] == "graded"
    assert all(v["points"] == v["possible"] for v in doc["questions"].values()), \
        {q: (v["points"], v["possible"]) for q, v in doc["questions"].items()}


@pytest.mark.parametrize("name,question,attacked,phrase", PORTING_CASES,
                         ids=[c[0] for c in PORTING_CASES])
def test_a_forged_observation_earns_nothing(porting_batch, name, question, attacked, phrase):
    """The attacked checks fail, as the wrong answer fails without the forging cell; every
    other check of the notebook passes (the solution's answers)."""
    doc = porting_batch[name]
    assert doc["status"].startswith("graded"), doc.get("error")
    outcomes = _check_outcomes(doc, question)
    assert attacked <= set(outcomes), outcomes
    assert not any(outcomes[c] for c in attacked), outcomes
    assert all(ok for c, ok in outcomes.items() if c not in attacked), outcomes
    points = {q: (v["points"], v["possible"]) for q, v in doc["questions"].items()}
    assert points[question][0] < points[question][1]
    assert all(p == possible for q, (p, possible) in points.items() if q != question), points
    said = [c["message"] for t in doc["questions"][question]["tests"] for c in t.get("checks", [])
            if c["check"] in attacked]
    assert any(phrase in text for text in said), said
