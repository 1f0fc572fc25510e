"""deploy/kubernetes/: the manifests pass the Kubernetes schema, and the grade Job's pods, run
as containers of the grading image exactly as the manifest describes them (kube_sim), then
merged, give the grades of one whole run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import kube_sim
from notebooks import ROOT, grade_rows
from test_docker import SEED, sealed_graded  # noqa: F401 - a fixture: one sealed run

DEPLOY = ROOT / "deploy" / "kubernetes"
CLI = [sys.executable, "-m", "autograder"]
needs_image = pytest.mark.needs_docker  # the engine and the CPU image


def manifests() -> list[Path]:
    return sorted(DEPLOY.glob("*.yaml"))


@pytest.mark.parametrize("path", manifests(), ids=lambda p: p.name)
def test_manifest_passes_the_kubernetes_schema(path):
    """kubernetes-validate's bundled schemas (offline), strict: an unknown or misspelt field
    fails, as does a wrong type."""
    import kubernetes_validate

    version = kubernetes_validate.latest_version()
    for doc in kube_sim.load(path):
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_catches_a_misspelt_field():
    import kubernetes_validate

    job = kube_sim.load(DEPLOY / "grade-job.yaml")[0]
    job["spec"]["template"]["spec"]["containers"][0]["securityContex"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, kubernetes_validate.latest_version(), strict=True)


def _translate(job: dict, tmp_path: Path):
    policies = kube_sim.load(DEPLOY / "network-policy.yaml")
    claims = {c: tmp_path / c for c in ("autograder-submissions", "autograder-zips",
                                        "autograder-results")}
    from autograder.running.runners.docker_engine import IMAGES

    images = {"autograder-grader:cpu": IMAGES["cpu"], "autograder-grader:cuda": IMAGES["cuda"]}
    return kube_sim.translate(job, policies, claims, images)


@pytest.mark.parametrize("where, key, value", [
    ("pod", "hostPID", True),
    ("container", "stdin", True),
    ("securityContext", "privileged", False),
])
def test_the_simulation_refuses_a_field_it_does_not_simulate(tmp_path, where, key, value):
    job = kube_sim.load(DEPLOY / "grade-job.yaml")[0]
    pod = job["spec"]["template"]["spec"]
    target = {"pod": pod, "container": pod["containers"][0],
              "securityContext": pod["containers"][0]["securityContext"]}[where]
    target[key] = value
    with pytest.raises(kube_sim.Unsimulated, match=key):
        _translate(job, tmp_path)


def test_the_simulation_refuses_a_pod_with_network(tmp_path):
    job = kube_sim.load(DEPLOY / "grade-job.yaml")[0]
    job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] = "other"
    with pytest.raises(kube_sim.Unsimulated, match="NetworkPolicy"):
        _translate(job, tmp_path)


def test_the_gpu_variant_asks_for_one_gpu_and_the_cuda_image(tmp_path):
    """Not run here (no GPU, no cluster): its pods translate, with a GPU each."""
    pods, _ = _translate(kube_sim.load(DEPLOY / "grade-job-gpu.yaml")[0], tmp_path)
    assert pods[0].image.endswith(":cuda")
    assert pods[0].options["device_requests"][0]["Count"] == 1
    cpu_pods, _ = _translate(kube_sim.load(DEPLOY / "grade-job.yaml")[0], tmp_path)
    assert pods[0].options["cap_add"] == cpu_pods[0].options["cap_add"]


def test_shards_env_matches_completions():
    for name in ("grade-job.yaml", "grade-job-gpu.yaml"):
        job = kube_sim.load(DEPLOY / name)[0]
        env = {e["name"]: e["value"]
               for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert int(env["AUTOGRADER_SHARDS"]) == job["spec"]["completions"]
    merge = kube_sim.load(DEPLOY / "merge-job.yaml")[0]
    command = merge["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert f"-of-{job['spec']['completions']} " in command


def run_pod(client, pod: kube_sim.Pod) -> tuple[int, str, float]:
    options = dict(pod.options)
    command = options.pop("command")
    start = time.monotonic()
    container = client.containers.create(pod.image, command, **options)
    try:
        container.start()
        code = container.wait(timeout=1800)["StatusCode"]
        return code, container.logs().decode(errors="replace"), time.monotonic() - start
    finally:
        container.remove(force=True)


@pytest.mark.extended
@pytest.mark.slow
@needs_image
@pytest.mark.needs_root
def test_the_jobs_pods_as_containers_then_merged_give_a_whole_runs_grades(tmp_path, request):
    """The grade Job's pods, each a shard, as containers, then the merge Job: the grades of
    one whole sealed run with the Job's seed (the samples and the solutions, test_docker.py's
    ``sealed_graded``; the solutions are not in the Job's folder)."""
    from autograder.authoring.layout import ASSIGNMENTS, Layout
    from autograder.running.batch.folder import ensure_zip
    from autograder.running.runners.docker_engine import engine

    job = kube_sim.load(DEPLOY / "grade-job.yaml")[0]
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    seed = env["AUTOGRADER_SEED"]
    assert seed == str(SEED)  # the seed sealed_graded was graded with
    whole = request.getfixturevalue("sealed_graded")
    shutil.copytree(ROOT / "submissions", tmp_path / "autograder-submissions")
    for assignment in ASSIGNMENTS:
        zip_path = ensure_zip(assignment, Layout.at(ROOT))
        (tmp_path / "autograder-zips" / assignment).mkdir(parents=True)
        shutil.copy(zip_path, tmp_path / "autograder-zips" / assignment / zip_path.name)
    (tmp_path / "autograder-results").mkdir()
    pods, parallelism = _translate(job, tmp_path)
    assert len(pods) == 2 and parallelism == 2
    client = engine()
    start = time.monotonic()
    with ThreadPoolExecutor(parallelism) as pool:
        outcomes = list(pool.map(lambda p: run_pod(client, p), pods))
    wall = time.monotonic() - start
    for pod, (code, logs, _) in zip(pods, outcomes):
        assert code == 0, f"pod {pod.index}: {logs[-3000:]}"
    results = tmp_path / "autograder-results"
    shards = sorted(results.glob("shard-*-of-2"))
    assert [s.name for s in shards] == ["shard-1-of-2", "shard-2-of-2"]

    merge_job = kube_sim.load(DEPLOY / "merge-job.yaml")[0]
    merge_pods, _ = _translate(merge_job, tmp_path)
    code, logs, merge_seconds = run_pod(client, merge_pods[0])
    assert code == 0, logs[-3000:]
    merged = results / "merged"
    proc = subprocess.run([*CLI, "report", "-o", str(merged)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)  # the documented step after the merge Job
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (merged / "autograd-exercises" / "report" / "class_report.html").is_file()

    single = {a: {f: row for f, row in rows.items() if not f.startswith("solutions/")}
              for a, rows in grade_rows(whole).items()}
    assert grade_rows(merged) == single
    assert sum(len(r) for r in single.values()) == 12  # 10 notebooks, 2 points rows
    for path in sorted(whole.glob("*/results/**/*.json")):
        if "solutions" in path.relative_to(whole).parts:
            continue
        twin = merged / path.relative_to(whole)
        assert json.loads(twin.read_text())["questions"] == \
            json.loads(path.read_text())["questions"], path.name
    print(f"\nsimulated Job: {len(pods)} pods, parallelism {parallelism}: {wall:.1f} s "
          f"(pods {', '.join(f'{o[2]:.1f}' for o in outcomes)} s); merge Job "
          f"{merge_seconds:.1f} s")


def test_pod_entry_refuses_settings_that_cannot_work(tmp_path):
    """One line naming the variable: no seed, a shard past the count, a folder the student
    uid could reach (not under a root-only folder)."""
    from autograder.running.entry.pod import PodError, settings

    sealed = tmp_path / "sealed"
    for name in ("s", "z", "r"):
        (sealed / name).mkdir(parents=True)
    os.chmod(sealed, 0o700)
    good = {"AUTOGRADER_SEED": "5", "AUTOGRADER_SHARDS": "2", "JOB_COMPLETION_INDEX": "1",
            "AUTOGRADER_SUBMISSIONS": str(sealed / "s"), "AUTOGRADER_ZIPS": str(sealed / "z"),
            "AUTOGRADER_RESULTS": str(sealed / "r")}
    if os.geteuid() == 0:
        s = settings(good)
        assert (str(s.shard), s.seed, s.limits.confinement) == ("2/2", 5, "container")
    for change, said in (({"AUTOGRADER_SEED": ""}, "AUTOGRADER_SEED is not set"),
                         ({"JOB_COMPLETION_INDEX": "2"}, "shard 3 of AUTOGRADER_SHARDS=2"),
                         ({"AUTOGRADER_SHARDS": "x"}, "AUTOGRADER_SHARDS=x: not a number"),
                         ({"AUTOGRADER_ZIPS": "OPEN"}, "student code could reach it")):
        open_folder = tempfile.mkdtemp(dir="/tmp")  # /tmp and / are open to every uid
        os.chmod(open_folder, 0o755)
        try:
            change = {k: open_folder if v == "OPEN" else v for k, v in change.items()}
            with pytest.raises(PodError, match=said):
                settings({**good, **change})
        finally:
            os.rmdir(open_folder)


@pytest.mark.needs_root
def test_scrub_deletes_the_uids_files_and_nothing_else():
    """Between two submissions in one pod: what the last uid left in the shared scratch
    folders (its 0700 folder included, which the judge itself cannot enter) goes; another
    uid's file stays."""
    from autograder.running.runners.pod import scrub

    root = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(root, 0o1777)
        private = root / "autograder-student-62999-x"
        (private / "deep").mkdir(parents=True)
        (private / "deep" / "model.pt").write_bytes(b"weights")
        (root / "numpy.py").write_text("raise SystemExit")
        (root / "other.txt").write_text("someone else's")
        for path in (private, private / "deep", private / "deep" / "model.pt",
                     root / "numpy.py"):
            os.chown(path, 62999, 62999)
        os.chmod(private, 0o700)
        os.chown(root / "other.txt", 62998, 62998)
        scrub(62999, roots=(str(root),))
        assert sorted(p.name for p in root.iterdir()) == ["other.txt"]
    finally:
        shutil.rmtree(root)


@needs_image
def test_a_sandbox_uid_cannot_reach_the_grading_folders_in_the_image(tmp_path):
    """The pods mount the class under /grading, root-only in the image: a student uid cannot
    list it even when the volume itself is open to all."""
    from autograder.running.runners.docker_engine import IMAGES, engine

    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "other-student.ipynb").write_text("{}")
    os.chmod(tmp_path, 0o755)
    os.chmod(tmp_path / "open", 0o777)
    code = ("import os\nfor p in ('/grading', '/grading/submissions/other-student.ipynb'):\n"
            "    try:\n        open(p).close() if '.' in p else os.listdir(p); print('READ', p)\n"
            "    except PermissionError:\n        print('DENIED', p)\n")
    out = engine().containers.run(
        IMAGES["cpu"], ["python", "-c", code], user="62000", network_mode="none", remove=True,
        volumes={str(tmp_path / "open"): {"bind": "/grading/submissions", "mode": "ro"}})
    assert out.decode().split() == ["DENIED", "/grading", "DENIED",
                                    "/grading/submissions/other-student.ipynb"]
