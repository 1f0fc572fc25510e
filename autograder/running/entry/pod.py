"""The grading image's entry point for a pod or a batch job: grade one shard of a folder of
submissions inside this one container, where there is no Docker and no root outside it.

    python -m autograder.running.entry.pod        # settings from the environment, below

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
- ``AUTOGRADER_JOBS`` (1), ``AUTOGRADER_TIMEOUT`` (30), ``AUTOGRADER_SUBMISSION_TIMEOUT`` (300),
  ``AUTOGRADER_DISK_BYTES`` (1G), ``AUTOGRADER_DISK_FILES`` (100000): each worker's disk budget
  (``judge.disk_budget``).

Isolation inside one container differs from one container per submission in two ways, both
handled here: every submission's files are in the container, so the folders must sit under a
root-only folder (``/grading`` is 0700 root in the image; a setting that points elsewhere is
refused), and submissions graded one after another share ``/tmp``, so everything the
previous uid left there is deleted before the next notebook runs (``scrub``).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..limits import Limits, disk_from

if TYPE_CHECKING:  # imported in ``settings``: the first run only checks the environment
    from ..batch.options import Options

GRADING = Path("/grading")
DEFAULTS = {"AUTOGRADER_SUBMISSIONS": "/grading/submissions",
            "AUTOGRADER_ZIPS": "/grading/zips", "AUTOGRADER_RESULTS": "/grading/results"}


class PodError(ValueError):
    """A setting or mount that cannot work: one line, before anything is graded."""


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


def settings(env: dict[str, str]) -> Options:
    """The batch's options from ``env`` (the shard, seed, folders, jobs and limits; the
    ``pod`` runner); ``PodError`` naming the variable."""
    from ...authoring.layout import Layout
    from ...seed_env import seed_from
    from ..batch.options import Options
    from ..batch.shards import Shard

    def number(name: str, default: str, kind=int):
        text = env.get(name, default)
        try:
            value = kind(text)
        except ValueError:
            raise PodError(f"{name}={text}: not a number") from None
        if value < (0 if name == "JOB_COMPLETION_INDEX" else 1):
            raise PodError(f"{name}={text}: out of range")
        return value

    try:
        seed = seed_from(env)
    except ValueError as exc:
        raise PodError(str(exc)) from None
    if seed is None:
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
    try:
        disk = disk_from(env)
    except ValueError as exc:
        raise PodError(str(exc)) from None
    return Options(
        folder=folders["AUTOGRADER_SUBMISSIONS"],
        # the zips folder is laid out as a build folder; there is no project (no masters) here
        layout=Layout(root=GRADING, build=folders["AUTOGRADER_ZIPS"]),
        out=folders["AUTOGRADER_RESULTS"] / f"shard-{index}-of-{count}", seed=seed,
        runner="pod", jobs=number("AUTOGRADER_JOBS", "1"),
        limits=Limits.timed(seconds, number("AUTOGRADER_SUBMISSION_TIMEOUT", "300", float),
                            confinement="container", **disk),
        shard=Shard(index, count))


def prepare_scratch() -> None:
    """``/tmp`` (an emptyDir: 0777) sticky, so one uid cannot delete another's files."""
    from ..runners.pod import SHARED_SCRATCH

    for root in SHARED_SCRATCH:
        try:
            if os.stat(root).st_uid == 0:
                os.chmod(root, 0o1777)
        except OSError:
            continue


SEED_FD = "AUTOGRADER_SEED_FD"  # the re-executed judge's copy of the seed (a pipe)


def _hide_seed(env: dict[str, str]) -> None:
    """Run this entry point again without ``AUTOGRADER_SEED`` in its environment, the seed
    in a pipe instead: the worker zygote is forked from the judge (as in the ``docker``
    runner's containers: one ``import torch`` for both), and a forked worker could read the
    judge's original environment in ``/proc/self/environ``."""
    read, write = os.pipe()
    os.write(write, env["AUTOGRADER_SEED"].encode())
    os.close(write)
    os.set_inheritable(read, True)
    clean = {k: v for k, v in env.items() if k != "AUTOGRADER_SEED"}
    os.execve(sys.executable, [sys.executable, "-m", "autograder.running.entry.pod"],
              {**clean, SEED_FD: str(read)})


def main(env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    if os.geteuid() != 0:
        print("error: the pod runner's judge must run as root in its container (runAsUser: "
              "0) to hand each notebook to an unprivileged uid", file=sys.stderr)
        return 2
    hidden = env.pop(SEED_FD, None)
    if hidden is not None:  # the second run (_hide_seed): fork the zygote, then read the seed
        from ..judge.zygotes import fork_here

        fork_here("container", rehearse=True)
        # read after the fork: the zygote's and workers' memory never holds the seed (the
        # pipe is empty and closed by the time a worker could read it)
        with os.fdopen(int(hidden), "rb") as f:
            env["AUTOGRADER_SEED"] = f.read().decode()
    try:
        options = settings(env)
    except PodError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if hidden is None:
        _hide_seed(env)  # never returns
    from ..batch.folder import grade_folder
    from ..batch.progress import choose
    from ..runners import pod as pod_runner

    prepare_scratch()
    pod_runner.POOL = pod_runner.UidPool((options.shard.index - 1) * options.jobs,
                                         options.jobs)
    return grade_folder(options, choose(machine=False))


if __name__ == "__main__":
    sys.exit(main())
