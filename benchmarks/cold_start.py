"""Cold single-submission latency of the grading image's PrairieLearn and Gradescope entry
points: a fresh container per submission, laid out the platform's way (``/grade``, or
``/autograder`` with the Gradescope zip's ``run_autograder``), the solution notebook graded,
timed from ``docker create`` to the container's exit (results.json is written just before).

    python benchmarks/cold_start.py [--entry prairielearn,gradescope] [--runs 5]
                                    [--assignment autograd-exercises,autograd-porting]
                                    [--image autograder-grader:cpu] [--no-trace]

``measure(entry, runs, image)`` returns ``median_s``, ``worst_s``, ``samples`` (seconds, each
run), ``cpu_s`` (the container's CPU seconds, each run), ``score`` and ``phases``: medians of
the engine's steps (``create``, ``copy_in``, ``start``: the API calls; ``run``: the engine's
StartedAt to FinishedAt; ``exit``: FinishedAt to the wait returning) and, from two extra
traced runs (not counted in the samples): ``traced``, the entry point's own steps in order
(``interpreter``, ``entry_imports``, ``cold_start``: torch and the zygote's fork,
``judge_imports``, ``load_tests``: otter's test files from the zip, ``judge``: the notebook's
cells and the tests, ``results``, ``exit``), each one's wall seconds (the engine's timestamps
on its lines) and the judge process's CPU seconds, with ``zygote_and_workers_cpu``; and
``imports``, the import time of the entry's process by package (``python -X importtime``,
exclusive; wall clock, its own bookkeeping included).
Each container gets 2 CPUs (``nano_cpus``), no network and 6 GB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import statistics
import sys
import tarfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
#: the course's PrairieLearn question: its grading options (entry point, environment) are the
#: same for every assignment; ``tests/question.json`` names the assignment
QUESTION = ROOT / "deploy" / "prairielearn" / "questions" / "autograd-exercises"
ENTRIES = ("prairielearn", "gradescope")
CPUS = 2
PACKAGES = ("torch", "numpy", "otter", "pandas", "nbconvert", "nbformat", "jupyter_client",
            "dill", "sympy", "autograder")


def default_image() -> str:
    from autograder.running.runners.docker_engine import IMAGES

    return IMAGES["cpu"]


def _zip_path(assignment: str) -> Path:
    from autograder.authoring.layout import Layout
    from autograder.running.batch.folder import ensure_zip

    return ensure_zip(assignment, Layout.at(ROOT))


def layout(entry: str, assignment: str = ASSIGNMENTS[0]
           ) -> tuple[dict[str, tuple[bytes, int]], list[str], dict, str, str]:
    """The files (path -> bytes, mode), command, environment, working folder and results
    path of one submission of ``assignment``'s solution on ``entry``'s platform."""
    notebook = (ROOT / "solutions" / f"{assignment}.ipynb").read_bytes()
    zip_bytes = _zip_path(assignment).read_bytes()
    if entry == "prairielearn":
        options = json.loads((QUESTION / "info.json").read_text())["externalGradingOptions"]
        question = json.loads((QUESTION / "tests" / "question.json").read_text())
        question["assignment"] = assignment
        files = {f"grade/student/{assignment}.ipynb": (notebook, 0o644),
                 "grade/tests/question.json": (json.dumps(question).encode(), 0o644),
                 f"grade/serverFilesCourse/autograder/{assignment}-autograder.zip":
                     (zip_bytes, 0o644),
                 "grade/data/data.json": (json.dumps({"variant_seed": 3}).encode(), 0o644)}
        return (files, options["entrypoint"], dict(options["environment"]), "/",
                "/grade/results/results.json")
    if entry != "gradescope":
        raise ValueError(f"entry {entry!r}: one of {', '.join(ENTRIES)}")
    from autograder.authoring.gradescope import scripts, torch_spec

    run = scripts("after_published", torch_spec(ROOT / "pyproject.toml"))["run_autograder"]
    files = {f"autograder/submission/{assignment}.ipynb": (notebook, 0o644),
             "autograder/submission_metadata.json":
                 (json.dumps({"id": 123456, "created_at": "2026-12-01T10:00:00"}).encode(),
                  0o644),
             "autograder/run_autograder": (run.encode(), 0o755)}
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
        for info in zf.infolist():
            if not info.is_dir():
                files[f"autograder/source/{info.filename}"] = (zf.read(info), 0o644)
    files["autograder/source/run_autograder"] = (run.encode(), 0o755)
    return files, ["/autograder/run_autograder"], {}, "/autograder", \
        "/autograder/results/results.json"


def _tar(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _engine_time(stamp: str) -> float:
    """The engine's RFC 3339 time (nanoseconds) as seconds since the epoch."""
    head, _, frac = stamp.rstrip("Z").partition(".")
    return dt.datetime.fromisoformat(head).replace(tzinfo=dt.timezone.utc).timestamp() + \
        float(f"0.{frac or 0}")


class CpuWatch(threading.Thread):
    """The container's CPU seconds (cgroup v1 ``cpuacct.usage``, read every 20 ms until it
    exits: the last reading, so up to 20 ms short); None where the engine's cgroups are not
    there to read."""

    def __init__(self, container_id: str):
        super().__init__(daemon=True)
        self.path = Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage")
        self.seconds: float | None = None
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.seconds = int(self.path.read_text()) / 1e9
            except (OSError, ValueError):
                pass
            self.done.wait(0.02)


PYTHON = "/opt/autograder-env/bin/python"
# The phase trace: the entry point run under marks of (process CPU seconds) at each step, one
# line each on stderr; the engine's timestamp on each line gives the wall clock.
DRIVER = """
import importlib, sys, time
def mark(name):
    print(f"PHASE {name} {time.process_time():.4f}", file=sys.stderr, flush=True)
def timed(module, name, label):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        mark("before_" + label)
        out = inner(*args, **kwargs)
        mark(label)
        return out
    setattr(module, name, wrapper)
mark("interpreter")
pl = sys.argv[1] == "prairielearn"
entry = importlib.import_module("autograder.running.entry." + ("prairielearn" if pl
                                                                else "run_autograder"))
mark("entry_imports")
try:
    from autograder.running.entry import startup
except ImportError:
    startup = None
if startup:
    startup.cold_start()
    mark("cold_start")
from autograder.running.judge import core, tests_zip
mark("judge_imports")
timed(tests_zip, "load_tests" if pl else "load_test_folder", "load_tests")
timed(core, "judge", "judge")
status = entry.main() if pl else entry.main([])
mark("results")
startup.exit_now(status) if startup else sys.exit(status)
"""


def run_once(client, image: str, entry: str, trace: str = "",
             assignment: str = ASSIGNMENTS[0]) -> dict:
    """One fresh container, create to exit: the seconds of each step, the container's CPU
    seconds, its results.json and (``trace``: "imports" or "phases") its timestamped log."""
    files, command, environment, workdir, results_path = layout(entry, assignment)
    archive = _tar(files)
    if trace:
        environment = {**environment, "PYTHONUNBUFFERED": "1"}
    if trace == "imports":
        environment["PYTHONPROFILEIMPORTTIME"] = "1"
    elif trace == "phases":
        command = [PYTHON, "-c", DRIVER, entry]
    t0 = time.time()
    container = client.containers.create(image, command, environment=environment,
                                         working_dir=workdir, network_mode="none",
                                         mem_limit="6g", nano_cpus=CPUS * 10**9)
    try:
        t_create = time.time()
        container.put_archive("/", archive)
        t_copy = time.time()
        watch = CpuWatch(container.id)
        watch.start()
        container.start()
        t_start = time.time()
        status = container.wait(timeout=600)["StatusCode"]
        t_exit = time.time()
        watch.done.set()
        watch.join()
        container.reload()
        state = container.attrs["State"]
        started, finished = _engine_time(state["StartedAt"]), _engine_time(state["FinishedAt"])
        stream, _ = container.get_archive(results_path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            results = json.load(tar.extractfile(Path(results_path).name))
        log = container.logs(timestamps=True).decode(errors="replace") if trace else ""
    finally:
        container.remove(force=True)
    return {"total": t_exit - t0, "cpu_s": watch.seconds, "status": status, "results": results,
            "started": started, "finished": finished, "log": log,
            "steps": {"create": t_create - t0, "copy_in": t_copy - t_create,
                      "start": t_start - t_copy, "run": finished - started,
                      "exit": t_exit - finished}}


IMPORT_LINE = re.compile(r"^(\S+) import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_times(log: str) -> dict:
    """Each package's import time in the entry's process (exclusive, as importtime reports
    it: wall clock, its own bookkeeping included), and their total."""
    imports = dict.fromkeys(PACKAGES + ("other",), 0.0)
    for line in log.splitlines():
        found = IMPORT_LINE.match(line)
        if found:
            root = found.group(5).split(".")[0]
            imports[root if root in imports else "other"] += int(found.group(2)) / 1e6
    return {**{k: round(v, 3) for k, v in imports.items() if v},
            "total": round(sum(imports.values()), 3)}


def phase_times(traced: dict) -> dict:
    """The phase trace's steps in order: each one's wall seconds (between the engine's
    timestamps of its mark and the one before; the first from StartedAt, ``exit`` to
    FinishedAt) and the judge process's CPU seconds; ``zygote_and_workers_cpu`` the rest of
    the container's CPU."""
    phases, at, cpu = {}, traced["started"], 0.0
    for line in traced["log"].splitlines():
        stamp, _, text = line.partition(" ")
        if text.startswith("PHASE "):
            _, name, seconds = text.split()
            when = _engine_time(stamp)
            phases[name] = {"wall": round(when - at, 3), "cpu": round(float(seconds) - cpu, 3)}
            at, cpu = when, float(seconds)
    phases["exit"] = {"wall": round(traced["finished"] - at, 3), "cpu": None}
    if traced["cpu_s"] is not None:
        phases["zygote_and_workers_cpu"] = round(traced["cpu_s"] - cpu, 3)
    return phases


def measure(entry: str, runs: int = 5, image: str | None = None, trace: bool = True,
            assignment: str = ASSIGNMENTS[0]) -> dict:
    """``runs`` cold submissions of ``assignment``'s solution on ``entry`` ("prairielearn" or
    "gradescope"), after one unmeasured warm-up (the image's layers in the page cache)."""
    from autograder.running.runners.docker_engine import engine

    if entry not in ENTRIES:
        raise ValueError(f"entry {entry!r}: one of {', '.join(ENTRIES)}")
    image = image or default_image()
    client = engine(timeout=900)
    run_once(client, image, entry, assignment=assignment)
    done = [run_once(client, image, entry, assignment=assignment) for _ in range(runs)]
    samples = [round(d["total"], 3) for d in done]
    phases = {step: round(statistics.median(d["steps"][step] for d in done), 3)
              for step in done[0]["steps"]}
    if trace:
        phases["traced"] = phase_times(run_once(client, image, entry, trace="phases",
                                                assignment=assignment))
        phases["imports"] = import_times(run_once(client, image, entry, trace="imports",
                                                  assignment=assignment)["log"])
    scores = {_score(d["results"]) for d in done}
    return {"entry": entry, "assignment": assignment, "image": image, "runs": runs,
            "median_s": round(statistics.median(samples), 3), "worst_s": max(samples),
            "samples": samples,
            "cpu_s": [round(d["cpu_s"], 3) if d["cpu_s"] is not None else None for d in done],
            "exit_status": sorted({d["status"] for d in done}),
            "score": scores.pop() if len(scores) == 1 else sorted(scores, key=str),
            "phases": phases}


def _score(results: dict) -> float:
    """PrairieLearn's ``score``, or Gradescope's points (its tests' scores, summed)."""
    if "score" in results:
        return results["score"]
    return sum(t.get("score", 0) for t in results.get("tests", []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entry", default=",".join(ENTRIES),
                        help="comma-separated: prairielearn, gradescope")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--image", default=None, help="default: $AUTOGRADER_IMAGE:cpu")
    parser.add_argument("--assignment", default=ASSIGNMENTS[0],
                        help="comma-separated: " + ", ".join(ASSIGNMENTS))
    parser.add_argument("--no-trace", action="store_true", help="skip the traced run")
    args = parser.parse_args(argv)
    for assignment in args.assignment.split(","):
        for entry in args.entry.split(","):
            print(json.dumps(measure(entry, args.runs, args.image, trace=not args.no_trace,
                                     assignment=assignment)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
