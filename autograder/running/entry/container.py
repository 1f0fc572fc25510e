"""The grading image's entry point: the trusted judge for one notebook, inside its container.

The host (``runners.docker``, ``runners.docker_fork``) sends one job on stdin as JSON: the
notebook and the autograder zip (base64), the seed, the limits. They are written under the judge's private tmpfs
(``$TMPDIR``, mode 0700, root-only); the notebook's code runs in a worker as the unprivileged
uid (``sandbox`` mode ``"container"``). The result document goes back on stdout as one JSON
line after ``RESULT_MARKER`` (``container_protocol``): the worker's output is a pipe to the
judge, so student code cannot write there. Nothing is pickled either way.

    python -m autograder.running.entry.container < job.json
    python -m autograder.running.entry.container --install-worker /opt/agworker  # image build
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, TextIO

from ..container_protocol import MAX_JOB_BYTES, answer_line, job_error
from ..judge.uids import STUDENT_UIDS  # the host leases one (``uids.lease``) per container
from ..resultdoc import ResultDoc
from .startup import skip_inits, warm_imports


def grade_job(job: dict, work: Path, confinement: str = "container", join_pid: int = 0,
              join_pidfd: int = -1, later: list | None = None, worker=None) -> ResultDoc:
    """Grade the job's notebook; return the result document (never raises for the student's
    doing; a broken job is the grader's error). ``join_pid``: the container the workers join
    (confinement ``"join"``, the judge service), held by ``join_pidfd``. ``later``: where the
    last worker goes, stopped, for the caller to close after answering (``core.judge``).
    ``worker``: one confined ahead of the job for its uid and limits, used first."""
    from ..judge.core import judge
    from ..judge.tests_zip import tests_of_zip

    if job.get("require_cuda"):
        import torch

        if not torch.cuda.is_available():  # never a silent CPU run of a GPU grading job
            return job_error(job, "a GPU was requested but torch sees no CUDA device in the "
                                  "container (is the NVIDIA container toolkit installed?)")
    notebook = work / "submission.ipynb"
    notebook.write_bytes(base64.b64decode(job["notebook"]))
    tests = list(tests_of_zip(base64.b64decode(job["zip"])))
    return judge(notebook, job["name"], job["assignment"], tests,
                 seed=int(job["seed"]), uid=job_uid(job),
                 limits=job_limits(job, confinement, join_pid, join_pidfd), worker=worker,
                 later=later)


def job_limits(job: dict, confinement: str, join_pid: int = 0, join_pidfd: int = -1):
    """The ``Limits`` a job's workers run under."""
    from ..limits import Limits

    return Limits(**{**job.get("limits", {}), "confinement": confinement,
                     "join_pid": join_pid, "join_pidfd": join_pidfd})


def job_uid(job: dict) -> int:
    """The uid a job's workers run as: one of ``STUDENT_UIDS``, else ``ValueError``."""
    uid = int(job.get("uid", STUDENT_UIDS[0]))
    if uid not in STUDENT_UIDS:  # never root or a system account for student code
        raise ValueError(f"uid {uid} is not a sandbox uid")
    return uid


def run(stdin: BinaryIO, stdout: TextIO, zygote: bool = True) -> int:
    """Read one job, grade it, print the result line. Exit status 0 unless the job was
    unreadable (the result line says why either way).

    First, before the job is read (so while the container may still be waiting for it), the
    worker zygote is forked from this process with torch imported: the judge and the
    notebook's workers share one ``import torch``, with its heavy lazy imports deferred
    (``startup.warm_imports``)."""
    if zygote:
        from ..judge.zygotes import fork_here

        warm_imports()
        fork_here("container")
    skip_inits()
    raw = stdin.read(MAX_JOB_BYTES + 1)
    job: dict = {}
    try:
        if len(raw) > MAX_JOB_BYTES:
            raise ValueError("the job is larger than the grader accepts")
        job = json.loads(raw)
        with tempfile.TemporaryDirectory(prefix="judge-") as work:
            doc = grade_job(job, Path(work))
        status = 0
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        doc, status = job_error(job, f"unreadable grading job: {type(exc).__name__}: {exc}"), 2
    except Exception as exc:  # noqa: BLE001 - the host must always get a result line
        doc, status = job_error(job, f"{type(exc).__name__}: {exc}"), 0
    stdout.write(answer_line(doc))
    stdout.flush()
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder.running.entry.container", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install-worker", metavar="DIR",
                        help="write the worker's code to DIR (image build step) and exit")
    args = parser.parse_args(argv)
    if args.install_worker:
        from ..judge.sandbox import install_worker

        install_worker(Path(args.install_worker))
        return 0
    return run(sys.stdin.buffer, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
