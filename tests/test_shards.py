"""``autograder grade --shard I/N`` and ``autograder merge``: the parts of a batch, graded apart
and joined, equal one whole run (timings aside); shards that are not parts of one run are
refused with one line naming the folder and the field."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebooks import ROOT, grade_rows

CLI = [sys.executable, "-m", "autograder"]
SEED = 20261130
ASSIGNMENT = "autograd-exercises"


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


# -- the partition ---------------------------------------------------------------------------

@given(st.lists(st.text(min_size=1, max_size=30), unique=True, max_size=40),
       st.integers(1, 7))
def test_every_submission_is_in_exactly_one_shard(names, count):
    from autograder.running.batch.shards import Shard

    for name in names:
        owners = [i for i in range(1, count + 1) if Shard(i, count).holds(name)]
        assert len(owners) == 1, (name, owners)


def test_a_submissions_shard_depends_on_its_name_only():
    """Stable across processes and listings: a late upload moves no other file."""
    from autograder.running.batch.shards import shard_of

    names = [f"student-{i}.ipynb" for i in range(50)]
    before = {n: shard_of(n, 4) for n in names}
    after = {n: shard_of(n, 4) for n in names + ["late.ipynb"]}
    assert all(after[n] == before[n] for n in names)
    # Python's hash() would differ per process; this is SHA-256
    code = "from autograder.running.batch.shards import shard_of; print(shard_of('a/b.ipynb', 5))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": str(s)}).stdout
            for s in (1, 2)}
    assert outs == {f"{shard_of('a/b.ipynb', 5)}\n"}
    assert sorted(set(before.values())) == [1, 2, 3, 4]  # 50 names do reach every shard


@pytest.mark.parametrize("spec, said", [
    ("3/2", "between 1 and N"), ("0/2", "between 1 and N"), ("1-2", "expected I/N"),
])
def test_bad_shard_is_a_one_line_error(spec, said, tmp_path):
    proc = run("grade", "-p", "submissions", "-o", str(tmp_path / "o"), "--seed", "1",
               "--shard", spec, check=False)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_shard_without_seed_is_refused(tmp_path):
    proc = run("grade", "-p", "submissions", "-o", str(tmp_path / "o"), "--shard", "1/2",
               check=False)
    assert proc.returncode == 2 and "--shard needs --seed" in proc.stderr, proc.stderr


# -- merge's refusals (manifests written as `grade --shard` writes them) ----------------------

def fake_shard(folder: Path, index: int, count: int, **changes) -> Path:
    from autograder.running.batch.shards import Shard, manifest, write_manifest

    zip_path = folder.parent / "a.zip"
    zip_path.write_bytes(b"zip")
    doc = manifest(Shard(index, count), SEED, "sealed", ["a.ipynb", "b.ipynb"], [],
                   {"autograd-exercises": zip_path}, ["path:a.ipynb", "path:b.ipynb"])
    doc.update(changes)
    write_manifest(folder, doc)
    return folder


@pytest.mark.parametrize("change, field", [
    ({"seed": SEED + 1}, "field seed"),
    ({"zips": {"autograd-exercises": "0" * 64}}, "field zips"),
    ({"grader_version": "0.0.1"}, "field grader_version"),
    ({"listing": "f" * 64}, "field listing"),
    ({"identities": "e" * 64}, "field identities"),  # another roster: other per-student seeds
])
def test_merge_refuses_shards_of_different_runs(tmp_path, change, field):
    one = fake_shard(tmp_path / "s1", 1, 2)
    two = fake_shard(tmp_path / "s2", 2, 2, **change)
    proc = run("merge", str(one), str(two), "-o", str(tmp_path / "m"), check=False)
    assert proc.returncode == 2, proc.stderr
    assert field in proc.stderr and str(two) in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_merge_refuses_a_missing_or_repeated_shard_and_a_folder_that_is_no_shard(tmp_path):
    one = fake_shard(tmp_path / "s1", 1, 3)
    two = fake_shard(tmp_path / "s2", 2, 3)
    proc = run("merge", str(one), str(two), "-o", str(tmp_path / "m"), check=False)
    assert proc.returncode == 2 and "shard(s) 3 of 3 missing" in proc.stderr, proc.stderr
    again = fake_shard(tmp_path / "again", 1, 3)
    proc = run("merge", str(one), str(again), str(two), "-o", str(tmp_path / "m"), check=False)
    assert proc.returncode == 2 and "1/3 is also" in proc.stderr, proc.stderr
    (tmp_path / "plain").mkdir()
    proc = run("merge", str(one), str(tmp_path / "plain"), "-o", str(tmp_path / "m"),
               check=False)
    assert proc.returncode == 2 and f"{tmp_path / 'plain'}: no readable shard.json" in \
        proc.stderr, proc.stderr


def test_merge_refuses_a_roster_other_than_the_shards_recorded(tmp_path):
    """The shards drew each student's hidden inputs for their recorded roster; merge --roster
    with another would have exported the merged grades under other ids (report refuses it,
    merge did not)."""
    from autograder.running.outputs import grading_json

    one, two = fake_shard(tmp_path / "s1", 1, 2), fake_shard(tmp_path / "s2", 2, 2)
    for shard in (one, two):
        grading_json.write(shard, seed=SEED, folder="subs", runner="sealed", feedback="full",
                           roster={"a.ipynb": "1001", "b.ipynb": "1002"})
    other = tmp_path / "other.csv"
    other.write_text("file,student_id\na.ipynb,2001\nb.ipynb,2002\n")
    proc = run("merge", str(one), str(two), "-o", str(tmp_path / "m"), "--roster", str(other),
               check=False)
    assert proc.returncode == 2, proc.stderr
    assert "was graded with another roster" in proc.stderr and str(one) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_merge_never_writes_into_a_folder_that_holds_something(tmp_path):
    one, two = fake_shard(tmp_path / "s1", 1, 2), fake_shard(tmp_path / "s2", 2, 2)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "keep.txt").write_text("mine")
    proc = run("merge", str(one), str(two), "-o", str(tmp_path / "m"), check=False)
    assert proc.returncode == 2 and "not an empty folder" in proc.stderr, proc.stderr
    assert (tmp_path / "m" / "keep.txt").read_text() == "mine"


# -- the real thing: the sample submissions, graded whole and in two shards ------------------

def comparable(out: Path) -> dict[str, bytes]:
    """What must be byte-identical whole and merged: grades, result documents and exports
    (timings.json, the class report's timing figure and grading.json aside)."""
    files = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and (rel.endswith(("final_grades.csv", "canvas_gradebook.csv",
                                             "results.jsonl", "unplaced.csv"))
                               or "/results/" in f"/{rel}"):
            files[rel] = path.read_bytes()
    return files


def assert_same_outputs(merged: Path, single: Path, graded: int) -> None:
    want, got = comparable(single), comparable(merged)
    assert sorted(got) == sorted(want)
    assert any(k.endswith("final_grades.csv") for k in want) and \
        sum("/results/" in k for k in want) == graded
    for rel in want:
        assert got[rel] == want[rel], rel
    for report in single.glob("*/report/class_report.html"):
        assert (merged / report.relative_to(single)).is_file()
    for feedback in single.glob("*/feedback/**/*.md"):
        assert (merged / feedback.relative_to(single)).is_file()


# Four submissions, two of each assignment, that SHA-256 puts two in each shard of 2: each
# shard then grades both assignments (all ten samples would prove the same, at twice the
# cost). Name in the folder -> the sample copied there: real answers for each assignment
# (alan-turing's and john-von-neumann's with mistakes, hidden inputs drawn from their seeds),
# and the untouched porting template under a name SHA-256 puts in shard 2. The answered
# porting samples that land there (barbara-liskov, katherine-johnson) cost about 3 CPU-s
# more than the template in each of the two runs that grade them, for nothing more proven.
SHARDED = {name: name for name in ("autograd-exercises/ada-lovelace.ipynb",
                                   "autograd-exercises/alan-turing.ipynb",
                                   "autograd-porting/john-von-neumann.ipynb")} | {
    "autograd-porting/untouched-template-again.ipynb": "autograd-porting/untouched-template.ipynb"}


@pytest.mark.extended
@pytest.mark.slow
@pytest.mark.needs_root
def test_two_shards_merged_equal_one_whole_run(tmp_path):
    """Do shards 1/2 and 2/2 of the sample submissions, merged, give byte for byte the grades,
    result documents and exports of one run with the same seed; and is a shard graded with
    another seed refused?"""
    subs = tmp_path / "submissions"
    for name, sample in SHARDED.items():
        (subs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "submissions" / sample, subs / name)
    common = ["--seed", str(SEED), "--runner", "sealed", "--jobs", "2"]
    run("grade", "-p", str(subs), "-o", str(tmp_path / "single"), *common)
    shards = []
    for i in (1, 2):
        shards.append(tmp_path / f"shard{i}")
        run("grade", "-p", str(subs), "-o", str(shards[-1]), *common, "--shard", f"{i}/2")
        assert not list(shards[-1].glob("*/report")), "a shard writes no reports"
    manifests = [json.loads((s / "shard.json").read_text()) for s in shards]
    assert [m["seed"] for m in manifests] == [SEED, SEED]
    assert sorted(manifests[0]["files"] + manifests[1]["files"]) == sorted(SHARDED)
    for manifest in manifests:  # each shard holds a notebook of each assignment
        assert {f.split("/")[0] for f in manifest["files"]} == {"autograd-exercises",
                                                                "autograd-porting"}, manifest
    run("merge", str(shards[1]), str(shards[0]), "-o", str(tmp_path / "merged"))
    assert_same_outputs(tmp_path / "merged", tmp_path / "single", graded=len(SHARDED))

    other = tmp_path / "other-seed"
    shutil.copytree(shards[1], other)
    doc = json.loads((other / "shard.json").read_text())
    (other / "shard.json").write_text(json.dumps({**doc, "seed": SEED + 1}))
    proc = run("merge", str(shards[0]), str(other), "-o", str(tmp_path / "m2"), check=False)
    assert proc.returncode == 2 and f"{other}: shard.json field seed" in proc.stderr, \
        proc.stderr


@pytest.mark.needs_root
def test_a_shard_with_no_submissions_succeeds_and_says_so(tmp_path):
    """An Indexed Job may have more pods than a folder has files for one of them: that shard
    grades nothing, exits 0 and still writes its manifest (merge then needs it)."""
    from autograder.running.batch.shards import shard_of

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(ROOT / "submissions" / "autograd-exercises" / "ada-lovelace.ipynb", folder)
    empty = 3 - shard_of("ada-lovelace.ipynb", 2)
    run("grade", "-p", str(folder), "-o", str(tmp_path / "o"), "--seed", "1", "--runner",
        "sealed", "--shard", f"{empty}/2")
    doc = json.loads((tmp_path / "o" / "shard.json").read_text())
    assert doc["files"] == [] and doc["listed"] == 1 and doc["shard"] == f"{empty}/2"
    assert not list((tmp_path / "o").glob("*/final_grades.csv"))


# -- merge takes exactly the documents its manifests list ------------------------------------

# the tests of ``two_shards``: one xdist worker builds it once
TWO_SHARDS = pytest.mark.xdist_group("two-shards")
REJECTED = [f"{c}.ipynb" for c in "abcdefgh"]  # "{": each a row and a document; nothing runs
MUTATIONS = ("planted", "foreign", "missing", "altered", "other-assignment")


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory) -> list[Path]:
    """Shards 1/2 and 2/2 of a folder of rejected files, the first graded into a reused
    output folder that still held a document of another run (moved aside, not merged)."""
    from autograder.running.resultdoc import ResultDoc

    base = tmp_path_factory.mktemp("shards")
    (base / "in").mkdir()
    for name in REJECTED:
        (base / "in" / name).write_text("{")
    outs = [base / "shard1", base / "shard2"]
    ResultDoc.rejected("zz.ipynb", "zz.ipynb: from an earlier run", assignment=ASSIGNMENT
                       ).write(outs[0] / ASSIGNMENT / "results")
    for i, out in enumerate(outs, 1):  # --runner otter: nothing to start for rejected files
        run("grade", "-a", ASSIGNMENT, "-p", str(base / "in"), "-o", str(out), "--seed",
            str(SEED), "--shard", f"{i}/2", "--runner", "otter")
    assert all(json.loads((o / "shard.json").read_text())["files"] for o in outs)
    assert list((outs[0] / ASSIGNMENT / "stale").rglob("zz.ipynb.json"))
    return outs


def tamper(shards: list[Path], mutation: str, which: int) -> Path:
    """Change shard ``which`` the way ``mutation`` says; the folder changed."""
    from autograder.running.resultdoc import Question, ResultDoc

    target = shards[which]
    results = target / ASSIGNMENT / "results"
    mine = sorted(results.glob("*.json"))
    if mutation == "planted":  # a file in no listing
        ResultDoc.rejected("zz.ipynb", "zz.ipynb: planted", assignment=ASSIGNMENT
                           ).write(results)
    elif mutation == "foreign":  # a second document for a student the other shard graded
        other = sorted((shards[1 - which] / ASSIGNMENT / "results").glob("*.json"))[0]
        shutil.copyfile(other, results / other.name)
    elif mutation == "missing":
        mine[0].unlink()
    elif mutation == "altered":  # 22 points planted in a valid document
        doc = ResultDoc.read(mine[0])
        doc = ResultDoc.graded(doc.file, {"q1": Question(22.0, 22.0)}, assignment=ASSIGNMENT,
                               seed=1)
        doc.write(results)
    else:
        ResultDoc.rejected("x.ipynb", "x.ipynb: elsewhere", assignment="autograd-porting"
                           ).write(target / "autograd-porting" / "results")
    return target


@TWO_SHARDS
def test_merge_takes_exactly_the_listed_documents(two_shards, tmp_path):
    from autograder.running.batch.merge import merge

    merge(two_shards, tmp_path / "m", say=lambda _: None)
    rows = grade_rows(tmp_path / "m")[ASSIGNMENT]
    assert sorted(rows) == sorted(["points-per-question", *REJECTED])


@TWO_SHARDS
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutation=st.sampled_from(MUTATIONS), which=st.integers(0, 1))
def test_merge_refuses_any_other_document_in_one_line(two_shards, tmp_path_factory, mutation,
                                                      which):
    from autograder.running.batch.merge import MergeError, merge

    base = tmp_path_factory.mktemp("tampered")
    copies = [Path(shutil.copytree(s, base / s.name)) for s in two_shards]
    changed = tamper(copies, mutation, which)
    with pytest.raises(MergeError) as refused:
        merge(copies, base / "m", say=lambda _: None)
    message = str(refused.value)
    assert str(changed) in message and "\n" not in message, (mutation, message)
    assert not (base / "m").exists()


@TWO_SHARDS
def test_the_cli_refuses_a_planted_document_and_writes_nothing(two_shards, tmp_path):
    copies = [Path(shutil.copytree(s, tmp_path / s.name)) for s in two_shards]
    tamper(copies, "planted", 1)
    proc = run("merge", *map(str, copies), "-o", str(tmp_path / "m"), check=False)
    assert proc.returncode == 2 and "not listed in its shard.json" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "m").exists()
