"""The grading image's entry point for a pod or a batch job: grade one shard of a folder of
submissions inside this one container, where there is no Docker and no root outside it.

    python -m autograder.running.pod_entry        # settings from the environment, below

It is ``autograder grade --shard I/N --seed S`` run inside the container: the same batch code
(``batch.grade_folder``), the same result documents, CSV and ``shard.json``; the judge runs here
as root (with only the capabilities the ``docker`` runner gives its containers: SETUID,
SETGID, SETPCAP, KILL) and every notebook's code in a worker under a leased unprivileged uid,
confined as in the ``docker`` runner's containers (``sandbox`` mode ``"container"``: rlimits,
no capabilities, ``no_new_privs``, seccomp). Join the shards with ``autograder merge``.

Environment (``deploy/kubernetes/`` sets it; docs/beyond-one-machine.md):

- ``JOB_COMPLETION_INDEX``: the 0-based index Kubernetes gives each pod of an Indexed Job,
  or ``AUTOGRADER_SHARD`` (1-based) elsewhere; ``AUTOGRADER_SHARDS``: how many (the Job's
  ``completions``).
- ``AUTOGRADER_SEED``: the run's seed, the same for every shard (required).
- ``AUTOGRADER_SUBMISSIONS`` (``/grading/submissions``), ``AUTOGRADER_ZIPS``
  (``/grading/zips``, laid out like the project's ``build/``:
  ``<assignment>/<assignment>-autograder.zip``), ``AUTOGRADER_RESULTS``
  (``/grading/results``; this shard writes ``shard-I-of-N/`` in it).
- ``AUTOGRADER_JOBS`` (1), ``AUTOGRADER_TIMEOUT`` (30), ``AUTOGRADER_SUBMISSION_TIMEOUT`` (300).

Isolation inside one container differs from one container per submission in two ways, both
handled here: every submission's files are in the container, so the folders must sit under a
root-only folder (``/grading`` is 0700 root in the image; a setting that points elsewhere is
refused), and submissions graded one after another share ``/tmp``, so everything the
previous uid left there is deleted before the next notebook runs (``scrub``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Iterator

from . import uids
from .judge import judge
from .results import Graded, graded, write_document
from .sandbox import Limits, SandboxError
from .sealed import SealedRunner
from .submissions import Submission

GRADING = Path("/grading")
DEFAULTS = {"AUTOGRADER_SUBMISSIONS": "/grading/submissions",
            "AUTOGRADER_ZIPS": "/grading/zips", "AUTOGRADER_RESULTS": "/grading/results"}
#: Writable places every uid can reach, emptied of a uid's files around each submission.
SHARED_SCRATCH = ("/tmp", "/dev/shm", "/student")


class PodError(ValueError):
    """A setting or mount that cannot work: one line, before anything is graded."""


def scrub(uid: int, roots: tuple[str, ...] = SHARED_SCRATCH) -> None:
    """Delete every file and folder ``uid`` owns under ``roots``, as ``uid`` (the judge has no
    CAP_DAC_OVERRIDE, and should not: it cannot enter a student's 0700 folder, the student
    uid can). By hand, not ``shutil.rmtree``: only ``uid``'s entries, never another's."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; covered by the pod tests
        code = 0
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for root in roots:
                for top, dirs, files in os.walk(root, topdown=False):
                    for name in files + dirs:
                        path = os.path.join(top, name)
                        try:
                            if os.lstat(path).st_uid != uid:
                                continue
                            if name in dirs and not os.path.islink(path):
                                os.rmdir(path)
                            else:
                                os.unlink(path)
                        except OSError:
                            code = 1
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.waitpid(pid, 0)


class UidPool:
    """The sandbox uids this pod hands out, one per submission being graded.

    Not ``uids.lease``'s 61000-61999: without user namespaces a container's uids are the
    node's, and a runner on the node cleaning up its leased uid (``kill -1`` as that uid)
    would reach this pod's worker; the process rlimit counts per uid node-wide too. So pods
    take 62000-62999 (as the Gradescope entry point does), each shard its own block:
    ``first`` = 62000 + (shard index x jobs) mod 1000, so the pods of one Job never share one.
    """

    def __init__(self, first: int = 62000, count: int = 1):
        self.free = [62000 + (first - 62000 + i) % 1000 for i in range(count)]
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def lease(self) -> Iterator[int]:
        with self.lock:
            uid = self.free.pop(0)
        try:
            uids.kill_uid(uid)  # in this container's pid namespace only
            yield uid
        finally:
            uids.kill_uid(uid)
            with self.lock:
                self.free.append(uid)


POOL = UidPool()  # main() sizes it for the shard and its jobs


class PodRunner(SealedRunner):
    """``SealedRunner`` inside the grading container: the same judge and documents, workers
    confined the container way, each submission's leftovers scrubbed before the next."""

    def __init__(self, zip_path: Path, assignment: str, seed: int, results: Path,
                 limits: Limits | None = None):
        limits = limits or Limits(confinement="container")
        if limits.confinement != "container":
            raise SandboxError("the pod runner confines workers the container way")
        super().__init__(zip_path, assignment, seed, results, limits)

    def __call__(self, sub: Submission) -> Graded:
        try:
            with POOL.lease() as uid:
                scrub(uid)
                try:
                    doc = judge(sub.path, sub.name, self.assignment, self.tests,
                                seed=self.seed, uid=uid, limits=self.limits)
                finally:
                    uids.kill_uid(uid)
                    scrub(uid)
        except SandboxError as exc:
            doc = {"file": sub.name, "status": "grader-error", "error": str(exc), "questions": {}}
        except Exception as exc:  # noqa: BLE001 - one broken notebook never stops the batch
            doc = {"file": sub.name, "status": "grader-error",
                   "error": f"{type(exc).__name__}: {exc}", "questions": {}}
        write_document(self.results, doc)
        return graded(doc)


def sealed_off(path: Path) -> bool:
    """Whether some folder on ``path``'s way (itself included) is root's and closed to
    everyone else, so that no student uid can reach ``path``."""
    path = Path(os.path.abspath(path))
    for folder in [path, *path.parents]:
        try:
            info = os.stat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o077:
            return True
    return False


def settings(env: dict[str, str]) -> dict:
    """The shard, seed, folders and limits from ``env``; ``PodError`` naming the variable."""
    from .shards import Shard

    def number(name: str, default: str, kind=int):
        text = env.get(name, default)
        try:
            value = kind(text)
        except ValueError:
            raise PodError(f"{name}={text}: not a number") from None
        if value < (0 if name == "JOB_COMPLETION_INDEX" else 1):
            raise PodError(f"{name}={text}: out of range")
        return value

    if not env.get("AUTOGRADER_SEED"):
        raise PodError("AUTOGRADER_SEED is not set: every shard of a run needs the same seed")
    count = number("AUTOGRADER_SHARDS", "1")
    if env.get("JOB_COMPLETION_INDEX") is not None:
        index = number("JOB_COMPLETION_INDEX", "0") + 1
    else:
        index = number("AUTOGRADER_SHARD", "1")
    if index > count:
        raise PodError(f"shard {index} of AUTOGRADER_SHARDS={count}: the Job's completions "
                       f"and AUTOGRADER_SHARDS differ")
    folders = {k: Path(env.get(k) or v) for k, v in DEFAULTS.items()}
    for name, path in folders.items():
        if not path.is_dir():
            raise PodError(f"{name}={path}: no such folder (is its volume mounted?)")
        if not sealed_off(path):
            raise PodError(f"{name}={path}: student code could reach it (mount it under "
                           f"{GRADING}, which is root-only in the grading image)")
    seconds = number("AUTOGRADER_TIMEOUT", "30", float)
    return {"shard": Shard(index, count), "seed": number("AUTOGRADER_SEED", "0"),
            "jobs": number("AUTOGRADER_JOBS", "1"),
            "submissions": folders["AUTOGRADER_SUBMISSIONS"],
            "zips": folders["AUTOGRADER_ZIPS"], "results": folders["AUTOGRADER_RESULTS"],
            "limits": Limits(call_timeout=seconds, cell_timeout=4 * seconds,
                             submission_timeout=number("AUTOGRADER_SUBMISSION_TIMEOUT", "300",
                                                       float),
                             confinement="container")}


def prepare_scratch() -> None:
    """``/tmp`` (an emptyDir: 0777) sticky, so one uid cannot delete another's files."""
    for root in SHARED_SCRATCH:
        try:
            if os.stat(root).st_uid == 0:
                os.chmod(root, 0o1777)
        except OSError:
            continue


def main(env: dict[str, str] | None = None) -> int:
    from ..authoring.layout import Layout
    from .batch import grade_folder
    from .progress import choose

    env = dict(os.environ if env is None else env)
    if os.geteuid() != 0:
        print("error: the pod runner's judge must run as root in its container (runAsUser: "
              "0) to hand each notebook to an unprivileged uid", file=sys.stderr)
        return 2
    try:
        s = settings(env)
    except PodError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prepare_scratch()
    shard = s["shard"]
    global POOL
    POOL = UidPool(62000 + (shard.index - 1) * s["jobs"], s["jobs"])
    out = s["results"] / f"shard-{shard.index}-of-{shard.count}"
    # the zips folder is laid out as a build folder; there is no project (no masters) here
    layout = Layout(root=GRADING, build=s["zips"])
    return grade_folder(s["submissions"], layout, assignment=None, out=out, seed=s["seed"],
                        runner="pod", jobs=s["jobs"], limits=s["limits"],
                        display=choose(machine=False), shard=shard)


if __name__ == "__main__":
    sys.exit(main())
