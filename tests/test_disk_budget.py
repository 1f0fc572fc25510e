"""The disk budget of a worker under the ``container`` confinement (``judge.disk_budget``),
where the worker's /tmp and working folder are the host's disk: a notebook that floods it is
stopped, told, and its files deleted; the other questions keep their points; growth of the
disk that is not the worker's own costs it nothing.

Small on disk: budgets of 32-64 MiB, floods of at most 256 MiB written as files of 32 MiB,
each deleted within a fraction of a second.
"""

from __future__ import annotations

import glob
import os
import secrets
import threading
import time

import nbformat
import pytest

from autograder.checks.calling import WorkerLost
from autograder.running.judge import disk_budget, uids
from autograder.running.judge.core import judge
from autograder.running.judge.disk_budget import walk_owned
from autograder.running.judge.tests_zip import load_tests
from autograder.running.judge.worker_client import WorkerClient
from autograder.running.limits import Limits, disk_from
from notebooks import answer_cells, solution
from points import EXERCISES

MiB = 2**20
UID = 62999  # a sandbox uid no test leases: only files are made for it here

# 4 files of 32 MiB in /tmp and 4 in its working folder (cwd, HOME): 256 MiB in all
FLOOD = """
import os
chunk = b"x" * 2**20
for i in range(8):
    with open(f"/tmp/agdisk-{TOKEN}-{i}" if i % 2 else f"agdisk-{i}", "wb") as f:
        for _ in range(32):
            f.write(chunk)
print("flood done", os.getcwd())
"""
# q3's function floods the disk when a test calls it (not when its own cell does)
ARMED_Q3 = """

_multipath = multipath_grads


def multipath_grads(x0, y0):
    if ARMED:
        for i in range(8):  # files of 32 MiB: under RLIMIT_FSIZE (64 MiB), 256 MiB in all
            with open(f"/tmp/agdisk-{TOKEN}-call-{i}", "wb") as f:
                f.write(b"y" * 2**25)
    return _multipath(x0, y0)


ARMED = False
"""


def left_by(uid: int, token: str) -> list[str]:
    """What the worker's files left in /tmp: its flood, its scratch working folders."""
    return (glob.glob(f"/tmp/agdisk-{token}-*")
            + [p for p in glob.glob(f"/tmp/autograder-student-{uid}-*")
               if os.lstat(p).st_uid == uid])


@pytest.mark.slow
@pytest.mark.needs_root
def test_a_flood_is_stopped_told_and_deleted_and_other_questions_keep_their_points(
        zips, tmp_path):
    token = secrets.token_hex(4)
    nb = solution("autograd-exercises")
    q3 = answer_cells(nb)["q3_multipath"]
    nb.cells[q3].source += ARMED_Q3.replace("{TOKEN}", token)
    nb.cells.insert(q3 + 1, nbformat.v4.new_code_cell(FLOOD.replace("{TOKEN}", token)))
    nb.cells.append(nbformat.v4.new_code_cell("ARMED = True"))
    path = tmp_path / "flood.ipynb"
    nbformat.write(nb, path)
    limits = Limits(confinement="container", disk_bytes=64 * MiB, call_timeout=20,
                    submission_timeout=120)
    start = time.monotonic()
    with uids.lease() as uid:
        doc = judge(path, path.name, "autograd-exercises",
                    load_tests(zips["autograd-exercises"]), seed=5, uid=uid, limits=limits)
        assert left_by(uid, token) == []  # deleted, in /tmp and in its working folder
    assert time.monotonic() - start < 90
    reason = "it wrote more than 64 MiB to disk"
    # the cell: stopped, marked, told; the notebook's other cells ran again without it
    cell = [p for p in doc.problems if reason in p]
    assert len(cell) == 1 and cell[0].startswith("The cell defining os, chunk "), doc.problems
    assert next(e for e in doc.notebook.cells if e.status == "stopped").reason.startswith(
        reason)
    # the call: q3's tests fail with the reason, every other question keeps its points
    lost = {q: v for q, v in doc.questions.items() if v.points < v.possible}
    assert list(lost) == ["q3_multipath"], {q: v.points for q, v in doc.questions.items()}
    assert all(reason in t.message for t in lost["q3_multipath"].tests if not t.passed)
    assert doc.points == EXERCISES - lost["q3_multipath"].possible + lost["q3_multipath"].points
    assert doc.status == "graded-with-worker-restarts"


@pytest.mark.slow
@pytest.mark.needs_root
def test_prairielearns_entry_takes_the_budget_from_its_environment_and_tells_the_student(
        zips, tmp_path, monkeypatch):
    """The PrairieLearn entry point on this machine (no image: its /grade in a folder here):
    ``AUTOGRADER_DISK_BYTES`` sets the budget, results.json says which cell went over it, and
    the other cells' answers keep every point."""
    import json

    from autograder.running.entry import prairielearn

    token = secrets.token_hex(4)
    nb = solution("autograd-exercises")
    nb.cells.insert(3, nbformat.v4.new_code_cell(FLOOD.replace("{TOKEN}", token)))
    for name, data in {
            "student/flood.ipynb": nbformat.writes(nb).encode(),
            "tests/question.json": json.dumps({"assignment": "autograd-exercises"}).encode(),
            "serverFilesCourse/autograder/autograd-exercises-autograder.zip":
                zips["autograd-exercises"].read_bytes(),
            "data/data.json": json.dumps({"variant_seed": 3}).encode()}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    monkeypatch.setenv("AUTOGRADER_DISK_BYTES", "64M")
    monkeypatch.delenv("AUTOGRADER_SEED", raising=False)
    assert prairielearn.main(tmp_path) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["gradable"] and results["score"] == 1.0, results["message"]
    assert "stopped the notebook's process: it wrote more than 64 MiB to disk" in \
        results["message"]
    assert glob.glob(f"/tmp/agdisk-{token}-*") == []


@pytest.mark.slow
@pytest.mark.needs_root
def test_only_the_workers_own_files_count_and_files_count_too(tmp_path, capfd):
    """Another process filling the same disk (here the test, as root, in /tmp) raises the bar
    and is noted, not blamed on the worker; the worker's own files still count; a flood of
    empty files is stopped by the file budget."""
    limits = Limits(confinement="container", disk_bytes=32 * MiB, disk_files=2000,
                    cell_timeout=60)
    with uids.lease() as uid:
        client = WorkerClient(uid, limits)
        try:
            noise = threading.Thread(target=_write, args=(tmp_path / "noise", 96))
            run = [[0, "import time\nfor _ in range(30):\n    time.sleep(0.1)"]]
            replies = client.stream({"op": "run_cells", "cells": run}, 1, 60)
            noise.start()
            assert "ok" in next(replies), "the worker lost to growth that was not its own"
            noise.join()
            (tmp_path / "noise").unlink()
            assert "its own files hold" in capfd.readouterr().err
            own = "with open('mine', 'wb') as f:\n    for _ in range(48):\n"\
                  "        f.write(b'x' * 2**20)\n"
            with pytest.raises(WorkerLost, match="more than 32 MiB"):
                list(client.stream({"op": "run_cells", "cells": [[1, own]]}, 1, 60))
        finally:
            client.close()
        client = WorkerClient(uid, limits)
        try:
            many = "import os\nos.mkdir('many')\nfor i in range(10**6):\n"\
                   "    open(f'many/{i}', 'w').close()"
            with pytest.raises(WorkerLost, match="more than 2,000 files"):
                list(client.stream({"op": "run_cells", "cells": [[0, many]]}, 1, 60))
        finally:
            client.close()
        assert walk_owned(uid, ["/tmp", "/var/tmp", "/dev/shm"], remove=False).files == 0


def _write(path, mebibytes: int) -> None:
    with open(path, "wb") as f:
        for _ in range(mebibytes):
            f.write(b"n" * MiB)
        f.flush()
        os.fsync(f.fileno())


@pytest.mark.needs_root
def test_the_walk_takes_only_the_uids_entries_and_never_follows_a_link(tmp_path):
    """Only entries of the uid's, in folders it could write; a link is removed, never what it
    points to; a tree too deep or too large to count says so."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("root's")
    shared = tmp_path / "shared"  # like /tmp
    shared.mkdir()
    os.chmod(shared, 0o1777)
    closed = tmp_path / "shared" / "roots"  # root's 0755: the uid cannot have written in it
    closed.mkdir()
    (closed / "planted").write_text("x")
    os.chown(closed / "planted", UID, UID)
    (shared / "roots-file").write_text("root's")
    mine = shared / "mine"
    (mine / "deep").mkdir(parents=True)
    (mine / "deep" / "data").write_bytes(b"x" * 100_000)
    os.symlink(outside / "keep", mine / "to-file")
    os.symlink(outside, mine / "to-folder")
    os.chmod(mine / "deep", 0)  # its own folder, closed even to itself: root enters it
    for path in (mine, mine / "deep", mine / "deep" / "data", mine / "to-file",
                 mine / "to-folder"):
        os.lchown(path, UID, UID)
    counted = walk_owned(UID, [str(shared)], remove=False)
    assert (counted.files, counted.opaque, counted.capped) == (5, 0, "")
    assert counted.bytes >= 100_000
    removed = walk_owned(UID, [str(shared)], remove=True)
    assert removed.removed == 5 and not removed.left
    assert sorted(os.listdir(shared)) == ["roots", "roots-file"]
    assert (closed / "planted").exists() and (outside / "keep").read_text() == "root's"
    # bounds: too deep, too many
    deep = shared / "d"
    deep.mkdir()
    os.chown(deep, UID, UID)
    for _ in range(6):
        deep = deep / "d"
        deep.mkdir()
        os.chown(deep, UID, UID)
    assert walk_owned(UID, [str(shared)], remove=False, max_depth=4).capped == "at 4 folders deep"
    assert walk_owned(UID, [str(shared)], remove=False, max_entries=3).capped == \
        "after 3 entries"
    assert walk_owned(UID, [str(shared)], remove=True).removed == 7
    assert sorted(os.listdir(shared)) == ["roots", "roots-file"]


def test_the_budget_is_set_from_the_environment_and_off_outside_the_container():
    assert disk_from({}) == {}
    assert disk_from({"AUTOGRADER_DISK_BYTES": "512M", "AUTOGRADER_DISK_FILES": "5000"}) == \
        {"disk_bytes": 512 * MiB, "disk_files": 5000}
    assert disk_from({"AUTOGRADER_DISK_BYTES": "0"}) == {"disk_bytes": 0}
    for bad in ("1.5G", "lots", "-1"):
        with pytest.raises(ValueError, match="AUTOGRADER_DISK_BYTES"):
            disk_from({"AUTOGRADER_DISK_BYTES": bad})
    assert (Limits().disk_bytes, Limits().disk_files) == (2**30, 100_000)
    assert disk_budget.size_text(2**30) == "1 GiB" and disk_budget.size_text(3 * MiB // 2) == \
        "1.5 MiB"


def test_room_the_others_freed_is_not_the_workers_to_fill(monkeypatch):
    """Another process's 96 MiB counted and set aside; then its file is deleted, and ext4 frees
    the blocks only when its journal commits, while the worker writes 48 MiB: the disk then
    holds 48 MiB more than at the start, all the worker's. The others' share must not stay at
    those 48 MiB (the worker's 48 MiB passed a 32 MiB budget, a flake of the test above under
    load): once it shrinks by more than an eighth of the budget it is counted again."""
    limits = Limits(confinement="container", disk_bytes=32 * MiB, disk_files=2000)
    budget = disk_budget.DiskBudget(12345, limits, folders=("/tmp",))
    state = {"used": 0, "own": 0}
    monkeypatch.setattr(budget, "usage", lambda: (state["used"], 0))
    monkeypatch.setattr(disk_budget, "walk_owned", lambda uid, roots, remove: disk_budget.Tally(
        bytes=state["own"], files=1 if state["own"] else 0))
    budget.start()
    state["used"] = 96 * MiB  # the others' file, while the worker sleeps
    assert budget.check(force=True) is None and budget.noise[0] == 96 * MiB
    state.update(used=(96 + 20) * MiB, own=20 * MiB)  # deleted, not yet freed; the worker writes
    assert budget.check(force=True) is None
    state.update(used=48 * MiB, own=48 * MiB)  # freed at the commit; the worker has 48 MiB
    assert budget.check(force=True) == disk_budget.over_bytes(limits)


def test_a_baseline_taken_beside_a_half_written_file_moves_when_it_is_deleted(monkeypatch):
    """The flake's sequence: another process has written 30 of its 96 MiB when the worker's
    first request takes the baseline; it finishes (counted and set aside), and its file is
    deleted while the worker writes. Measured from that baseline the worker's 48 MiB would
    read as 18: the disk fell below where it started, so the baseline moves to where the
    worker's own files leave it."""
    limits = Limits(confinement="container", disk_bytes=32 * MiB, disk_files=2000)
    budget = disk_budget.DiskBudget(12345, limits, folders=("/tmp",))
    state = {"used": 30 * MiB, "own": 0}
    monkeypatch.setattr(budget, "usage", lambda: (state["used"], 0))
    monkeypatch.setattr(disk_budget, "walk_owned", lambda uid, roots, remove: disk_budget.Tally(
        bytes=state["own"], files=1 if state["own"] else 0))
    budget.start()  # 30 MiB of the other file already on disk
    state["used"] = 96 * MiB
    assert budget.check(force=True) is None and budget.noise[0] == 66 * MiB
    state.update(used=(96 + 20) * MiB, own=20 * MiB)  # the worker writes 20 MiB
    assert budget.check(force=True) is None
    state.update(used=20 * MiB)  # the 96 MiB freed: the disk 10 MiB below the baseline
    assert budget.check(force=True) is None and budget.baseline[0] == 0
    state.update(used=48 * MiB, own=48 * MiB)  # and 28 MiB more
    assert budget.check(force=True) == disk_budget.over_bytes(limits)
