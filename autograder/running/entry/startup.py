"""The first and last steps of a grading container that grades one submission (PrairieLearn's
and Gradescope's entry points): a cold container's time is mostly imports and teardown, not
grading (benchmarks/cold_start.py).

- ``cold_start``: before anything of the submission is read, torch is imported once and the
  worker zygote forked from this process (``zygotes.fork_here``, as ``container.run`` does), so
  the judge and the notebook's workers share one ``import torch`` instead of paying for a
  second one, and the optimizer machinery, in a zygote of their own. A fork inherits this
  process's memory: the environment block it started with (``/proc/self/environ``) is zeroed
  first, and with ``AUTOGRADER_SEED`` set (staff regrading) there is no fork at all (the judge
  then starts the zygote as a new process, which holds nothing of the seed). otter's and its
  subpackages' ``__init__`` (pandas, nbconvert) are skipped: the judge uses only
  ``otter.test_files`` and ``AutograderConfig``.
- Before the fork, ``cold_start`` also defers three of torch's heavy lazy imports
  (``deferred_torch``: ``torch._dynamo``, which ``Optimizer.step`` imports, about 1 s of CPU;
  ``torch.fx.experimental.symbolic_shapes``, which ``backward(gradient)`` imports; sympy,
  which the meta device's kernels import for a type test, about 0.27 s) to the first use that
  needs more than their eager answers. A cold submission otherwise paid them in the judge
  and in the worker, on the student's wait.
- ``exit_now``: once the results are written, the exit handlers run and the process ends
  without tearing the interpreter down (a few tenths of a second for torch's modules).
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import os
import sys
import traceback
from typing import NoReturn

from ...seed_env import SEED_VARIABLE  # standard library only: nothing of the checks

#: Packages whose ``__init__`` the judge never needs: otter's API (pandas, nbconvert) and
#: ``otter.run``'s runners (pandas again) around ``AutograderConfig``.
UNUSED_INITS = ("otter", "otter.run", "otter.run.run_autograder")
# /proc/<pid>/stat fields 50 and 51 (1-based; counted after the command name's ")")
ENV_START, ENV_END = 50 - 3, 51 - 3


def forget_environment_block() -> bool:
    """Move this process's environment to the heap (``os.environ`` keeps every variable) and
    zero the block it started with, which ``/proc/self/environ`` shows in it and in every
    process forked from it. False where the block could not be found."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rpartition(")")[2].split()
        start, end = int(fields[ENV_START]), int(fields[ENV_END])
    except (OSError, IndexError, ValueError):
        return False
    if not 0 < start < end:
        return False
    variables = dict(os.environ)
    os.environ.clear()  # unsetenv: libc's pointers into the block are gone
    os.environ.update(variables)  # setenv copies each one to the heap
    ctypes.memset(start, 0, end - start)
    return True


def skip_inits(names: tuple[str, ...] = UNUSED_INITS) -> None:
    """Make ``import a.b.c`` skip the ``__init__`` of the packages ``names`` (outermost
    first): each gets its module object, not executed. Only in a one-job process, where
    nothing needs those packages' own names."""
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.submodule_search_locations is None:
            return
        sys.modules[name] = importlib.util.module_from_spec(spec)  # not executed
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, sys.modules[name])


def warm_imports() -> None:
    """Defer torch's heavy lazy imports (``deferred_torch``), starting no thread: a fork made
    afterwards has the stand-ins."""
    from ...worker import deferred_torch

    deferred_torch.install()


def cold_start() -> None:
    """Fork the zygote with torch imported (its heavy lazy imports deferred), from a clean
    environment block and without a seed in the environment; skip otter's unused
    ``__init__``. Never raises: without
    a forked zygote, the judge starts one as a new process when it first needs a worker
    (``zygotes.shared``), with its own environment."""
    # one intra-op thread, as every other way of grading runs (the docker runners' and
    # PrairieLearn's environment, the sealed workers'): set before torch is imported, which
    # reads it once, and so inherited by the zygote and its workers. Left unset, torch took
    # a thread per CPU in the judge and in every worker, whose OpenMP threads spun against each
    # other on the container's 2 CPUs: a cold Gradescope porting submission took 9 s of CPU
    # instead of 4 (2026-12-04-throughput.md), and float32 sums may round otherwise
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        if not os.environ.get(SEED_VARIABLE, "").strip() and forget_environment_block():
            from ..judge.zygotes import fork_here

            warm_imports()
            fork_here("container")
        skip_inits()
    except Exception:  # noqa: BLE001 - the entry point still writes a result
        traceback.print_exc()


def exit_now(status: int) -> NoReturn:
    """Run the exit handlers (the zygote is closed), flush, and end with ``status`` without
    the interpreter's teardown."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(status)
