"""The grading container's first steps (``entry.startup``), each in a fresh interpreter: the
environment block a fork inherits is zeroed, otter's unused ``__init__``s are skipped."""

from __future__ import annotations

import os
import subprocess
import sys

from notebooks import ROOT


def _python(code: str, **env: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=120,
                          env={**os.environ, **env}).stdout.strip()


def _one_thread_unless_set(code: str) -> None:
    """``code`` prints torch's thread count: 1 with ``OMP_NUM_THREADS`` unset, and the
    value staff set otherwise."""
    unset = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=120, env=unset).stdout.strip()
    assert out == "1"
    if (os.cpu_count() or 1) > 1:
        assert _python(code, OMP_NUM_THREADS="2") == "2"


def test_the_environment_block_is_zeroed_and_the_environment_kept():
    """Is ``/proc/self/environ`` (what a forked worker would read) empty afterwards, in this
    process and in a child forked from it, while ``os.environ`` and libc still see the
    variable?"""
    out = _python(
        "import os\n"
        "from autograder.running.entry.startup import forget_environment_block as forget\n"
        "assert forget()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    block = open('/proc/self/environ', 'rb').read()\n"
        "    os._exit(0 if block.strip(b'\\0') == b'' else 1)\n"
        "assert os.waitpid(pid, 0)[1] == 0\n"
        "import ctypes\n"
        "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
        "print(open('/proc/self/environ', 'rb').read().strip(b'\\0'), os.environ['AG_X'],"
        " libc.getenv(b'AG_X').decode())", AG_X="secret-918273645")
    assert out == "b'' secret-918273645 secret-918273645"


def test_the_judge_reads_otters_tests_and_config_without_pandas_or_nbconvert():
    out = _python(
        "import sys\n"
        "from autograder.running.entry.startup import skip_inits\n"
        "skip_inits()\n"
        "from otter.test_files import GradingResults\n"
        "from otter.run.run_autograder.autograder_config import AutograderConfig\n"
        "print(sorted(m for m in ('pandas', 'nbconvert') if m in sys.modules),"
        " AutograderConfig({}).assignment_name)")
    assert out.startswith("[] ")


def test_grading_a_cold_submission_loads_none_of_the_deferred_modules():
    """With torch's heavy imports deferred (``deferred_torch``), grading each solution (cells
    and every hidden check, one fresh process) loads none of ``torch._dynamo``,
    ``symbolic_shapes`` and sympy: their stand-ins answer everything the grading path asks
    (a torch upgrade or a new check that asks more fails here, naming it); ``cold_start``
    forks the zygote with the three stand-ins in place."""
    for assignment in ("autograd-exercises", "autograd-porting"):
        out = _python(
            "import sys, torch\n"
            "from autograder.worker import deferred_torch\n"
            "asked = []\n"
            "real = deferred_torch._real\n"
            "deferred_torch._real = lambda name: asked.append(name) or real(name)\n"
            "assert deferred_torch.install()\n"
            "sys.path[:0] = ['benchmarks', 'tests']\n"
            "from floor import one_notebook\n"
            "from notebooks import solution\n"
            f"assert one_notebook({assignment!r}, solution({assignment!r}), 1)[3] == 0\n"
            "print(sorted(set(asked)), [type(sys.modules[m]).__name__ for m in\n"
            "                           deferred_torch.DEFERRED])")
        assert out == "[] ['Deferred', 'Deferred', 'Deferred']", \
            f"{assignment}: the real modules were loaded: {out}"
    out = _python(
        "import sys\n"
        "from autograder.running.entry.startup import cold_start\n"
        "cold_start()\n"
        "from autograder.running.judge import zygotes\n"
        "print(zygotes._SHARED['container'].pid > 0,\n"
        "      [type(sys.modules[m]).__name__ for m in\n"
        "       ('torch._dynamo', 'torch.fx.experimental.symbolic_shapes', 'sympy')])")
    assert out == "True ['Deferred', 'Deferred', 'Deferred']"


def test_a_grading_container_runs_torch_on_one_thread_unless_staff_chose_otherwise():
    """Gradescope's ``run_autograder`` starts the entry with no ``OMP_NUM_THREADS``: torch
    took a thread per CPU then, in the judge and in every forked worker, and their OpenMP
    threads spun against each other (a cold porting submission twice the CPU). The entry
    sets one thread before torch is imported, as every other way of grading runs, and
    keeps a value staff set."""
    code = ("from autograder.running.entry.startup import cold_start\n"
            "cold_start()\n"
            "import torch\n"
            "print(torch.get_num_threads())")
    _one_thread_unless_set(code)


def test_the_command_line_grades_on_one_torch_thread_unless_staff_chose_otherwise():
    """``autograder``'s judge computes references while a worker runs: one intra-op thread,
    as the workers and containers have, unless ``OMP_NUM_THREADS`` is set."""
    code = ("import sys\n"
            "from autograder import cli\n"
            "def main():\n"
            "    import torch\n"
            "    print(torch.get_num_threads())\n"
            "    return 0\n"
            "cli.main = main\n"
            "cli.run()")
    _one_thread_unless_set(code)


def test_a_docker_runner_container_defers_the_heavy_imports_while_it_waits():
    """The ``docker`` runner starts each container ahead of its job: the entry defers torch's
    heavy imports before forking the zygote (while it waits for the job)."""
    code = ("import io, sys\n"
            "from autograder.running.entry import container\n"
            "status = container.run(io.BytesIO(b'{}'), io.StringIO())\n"
            "print(status, [type(sys.modules[m]).__name__ for m in\n"
            "               ('torch._dynamo', 'torch.fx.experimental.symbolic_shapes', 'sympy')])")
    assert _python(code) == "2 ['Deferred', 'Deferred', 'Deferred']"
