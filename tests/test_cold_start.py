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
