"""Helpers for tests that work on real notebooks: find answer cells, swap in a variant,
execute a notebook's code in-process, run otter's own public test files, run ``otter run``."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "tests" / "files" / "variants"
CHECK_CALL = re.compile(r"""grader\.check\(\s*["']([\w-]+)["']\s*\)""")


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def solution(assignment: str) -> nbformat.NotebookNode:
    return read(ROOT / "solutions" / f"{assignment}.ipynb")


def template(assignment: str) -> nbformat.NotebookNode:
    return read(ROOT / "student_templates" / assignment / f"{assignment}.ipynb")


def answer_cells(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Question name -> index of its (single) code answer cell: the code cell tagged
    ``otter_answer_cell`` that precedes the question's ``grader.check`` cell."""
    found: dict[str, int] = {}
    pending: int | None = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if "otter_answer_cell" in cell.metadata.get("tags", []):
            pending = i
            continue
        match = CHECK_CALL.search(cell.source)
        if match and pending is not None:
            found[match.group(1)] = pending
            pending = None
    return found


def with_answer(nb: nbformat.NotebookNode, question: str, source: str) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose answer cell for ``question`` holds ``source``."""
    nb = copy.deepcopy(nb)
    cells = answer_cells(nb)
    if question not in cells:
        raise KeyError(f"no answer cell for {question}; found {sorted(cells)}")
    nb.cells[cells[question]].source = source
    return nb


def defined(source: str, name: str) -> Any:
    """What ``source`` (a cell) defines as ``name``, run in a namespace of its own."""
    env: dict[str, Any] = {}
    exec(source, env)
    return env[name]


def solution_with(assignment: str, name: str, source: str) -> nbformat.NotebookNode:
    """The solution notebook with ``source`` appended to the cell that defines ``name``: the
    solution's function replaced by the one ``source`` defines, the rest as it was."""
    nb = solution(assignment)
    cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {name}" in c.source)
    cell.source += "\n\n" + source
    return nb


def namespace(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """Execute the notebook's code cells in one namespace, as a kernel would, skipping otter's
    own cells; a cell that raises is reported on stderr and execution goes on (like otter)."""
    env: dict[str, Any] = {"__name__": "__main__"}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "otter" in _otter_lines(cell.source):
            continue
        try:
            exec(compile(cell.source, f"<cell {i}>", "exec"), env)
        except Exception as exc:  # noqa: BLE001 - a student's cell may raise anything
            print(f"cell {i} raised {type(exc).__name__}: {exc}", file=sys.stderr)
    return env


def _otter_lines(source: str) -> str:
    return "otter" if ("import otter" in source or CHECK_CALL.search(source)
                       or "grader.check_all" in source) else ""


def public_results(assignment: str, question: str, env: dict[str, Any]) -> list[bool]:
    """Pass/fail of each public test case of ``question``, run by otter's own test-file code."""
    from otter.test_files import ExceptionTestFile

    path = ROOT / "student_templates" / assignment / "tests" / f"{question}.py"
    test_file = ExceptionTestFile.from_file(str(path))
    test_file.run(env)
    return [r.passed for r in test_file.test_case_results]


@dataclass(frozen=True)
class Variant:
    """One implementation of one question, kept as a cell under ``tests/files/variants``.

    The file starts with header comments::

        # kind: wrong            (or: correct; or: advised - full points, with advice)
        # public: pass           (or: fail) - do the question's public tests pass?
        # feedback: <a sentence that must appear in the failing hidden check's message>
    """

    assignment: str
    question: str
    name: str
    kind: str
    public: str
    feedback: str
    source: str

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.question}/{self.name}"


def variants() -> list[Variant]:
    found = []
    for path in sorted(VARIANTS.glob("*/*/*.py")):
        text = path.read_text(encoding="utf-8")
        header = dict(re.findall(r"^# (kind|public|feedback): (.*)$", text, flags=re.M))
        found.append(Variant(path.parts[-3], path.parts[-2], path.stem, header.get("kind", ""),
                             header.get("public", ""), header.get("feedback", "").strip(), text))
    return found


def otter_run(notebook: Path, zip_path: Path, out: Path, seed: int | None = None) -> dict:
    """Grade ``notebook`` with stock ``otter run``; return its ``results.json`` as a dict."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if seed is not None:
        env["AUTOGRADER_SEED"] = str(seed)
    proc = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(out),
                           str(notebook)], capture_output=True, text=True, env=env, timeout=600)
    results = out / "results.json"
    if not results.exists():
        raise AssertionError(f"otter run wrote no results (exit {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(results.read_text())


def question_scores(results: dict) -> dict[str, tuple[float, float]]:
    """Question -> (score, max_score) from otter's results.json."""
    return {t["name"]: (float(t["score"]), float(t["max_score"]))
            for t in results["tests"] if "max_score" in t and t.get("max_score") is not None}


def grade_rows(out: Path) -> dict[str, dict[str, dict[str, str]]]:
    """Every assignment's ``final_grades.csv`` rows under the grading output ``out``, by file."""
    import csv

    rows = {}
    for path in sorted(out.glob("*/final_grades.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            rows[path.parent.name] = {r["file"]: r for r in csv.DictReader(f)}
    return rows


def question_output(results: dict, question: str) -> str:
    return next(t.get("output", "") for t in results["tests"] if t["name"] == question)


# A decimal number as feedback prints it (6 significant digits, or fewer, maybe an exponent);
# integers (seeds, counts, points out of) are not matched and so must agree exactly.
_DECIMAL = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _last_unit(number: Decimal) -> Decimal:
    """One unit of the last digit ``number`` was printed with: 0.0448 -> 0.0001, 1e-05 -> 1e-05."""
    return Decimal(1).scaleb(number.as_tuple().exponent)


def same_up_to_float32(got: str, pinned: str) -> bool:
    """Is ``got`` the ``pinned`` text, every decimal number at most one unit of the pinned
    number's last printed digit away? float32 results (the student's value, the judge's own
    reference) differ in their last bits between the kernels torch and MKL pick on a CPU
    (AVX-512, AVX2, none; Intel or AMD), and a value printed to 6, 4 or 2 digits can then end
    one unit apart; every word, integer and the numbers' count and order must still be the
    same. A value that went through a normalisation (a batch-norm layer in training mode, the
    batch's own variance) carries the kernels' difference further: it may also be within
    ``FLOAT32_SPREAD`` of the pinned one, relative (an Intel CPU under forced AVX2 kernels
    printed -0.0300091 for a pinned -0.0300093)."""
    got_words, pinned_words = _DECIMAL.split(got), _DECIMAL.split(pinned)
    if got_words != pinned_words:
        return False
    return all(abs(Decimal(a) - Decimal(b)) <= max(_last_unit(Decimal(b)),
                                                   FLOAT32_SPREAD * abs(Decimal(b)))
               for a, b in zip(_DECIMAL.findall(got), _DECIMAL.findall(pinned)))


#: How far apart, relative, two kernels' float32 results of one computation may print
FLOAT32_SPREAD = Decimal("2e-5")


def judged_sealed(nb: nbformat.NotebookNode, path: Path, assignment: str, zip_path: Path,
                  seed: int = 0) -> Any:
    """``nb`` written to ``path`` and graded by the sealed judge (a worker under a leased uid,
    as a grading run forks it; needs root): its ``ResultDoc``."""
    from autograder.running.judge import uids
    from autograder.running.judge.core import judge
    from autograder.running.judge.tests_zip import load_tests
    from autograder.running.limits import Limits

    nbformat.write(nb, path)
    with uids.lease() as uid:
        return judge(path, path.name, assignment, load_tests(zip_path), seed=seed, uid=uid,
                     limits=Limits(call_timeout=20, submission_timeout=180))


def failed_checks(doc: Any, question: str) -> set[tuple[str, str | None]]:
    """``(check, misconception)`` of every failed check of ``question`` in ``doc``."""
    return {(c.check, c.misconception) for t in doc.questions[question].tests
            for c in t.checks or () if not c.passed}


def lost_elsewhere(doc: Any, question: str) -> set[str]:
    """The questions other than ``question`` that lost points in ``doc``."""
    return {q for q, v in doc.questions.items() if q != question and v.points != v.possible}


def graded_here(notebook: Path, zip_path: Path, seed: int) -> dict[str, tuple[float, float]]:
    """Question -> (points, possible) of ``notebook`` graded in this process as the sealed
    judge grades it: its code cells run by the worker's own code (``Worker.run_cells``: otter
    and IPython lines skipped, a raising cell reported and the next one run), then every test
    case of ``zip_path`` (public and hidden, in otter's order) by the judge's ``run_test``
    with ``seed``, the submission's own seed. As in the judge, a public test's own code runs
    under torch's default modes and each call of the student's code under the notebook's modes
    with autograd on (``Fenced``); a hidden test's checks do the same themselves
    (``harness.run_check``). Run it in a process of its own (``Forks``): the notebook's
    globals and torch modes stay there."""
    import numpy as np
    import torch

    from autograder.harness import checks_modes
    from autograder.running.judge.cells import code_cells
    from autograder.running.judge.core import run_test
    from autograder.running.judge.tests_zip import load_tests
    from autograder.worker.main import Worker

    worker = Worker()
    worker.run_cells(code_cells(notebook))
    values = (torch.Tensor, torch.nn.Module, np.ndarray)  # what the judge reads as values
    fenced = {name: Fenced(value) if callable(value) and not isinstance(value, values)
              else value for name, value in worker.namespace.items()}
    totals: dict[str, tuple[float, float]] = {}
    for spec in load_tests(zip_path):
        if spec.hidden:
            outcome = run_test(spec, Here(worker.namespace), seed)
        else:
            with checks_modes():
                outcome = run_test(spec, Here(fenced), seed)
        points, possible = totals.get(spec.question, (0.0, 0.0))
        totals[spec.question] = (points + outcome.points, possible + spec.points)
    return totals


@dataclass(frozen=True)
class Here:
    """The judge's session (``core.Session``), its namespace in this process."""

    namespace: dict[str, Any]

    def ensure(self) -> dict[str, Any]:
        return self.namespace


@dataclass(frozen=True)
class Fenced:
    """A student's callable as a public test in the judge calls it (``RemoteFunction``): each
    call arranged as the worker arranges it (``arrangements.arranged``), its attributes too."""

    fn: Any

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from autograder.worker.arrangements import arranged

        with arranged(self.fn, {}):
            return self.fn(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "fn":
            raise AttributeError(name)
        value = getattr(self.fn, name)
        return Fenced(value) if callable(value) else value


class Forks:
    """Grades notebooks with ``graded_here``, each in a process forked for it from one parent
    (a spawned process, none of the tests' state) that has graded the solutions once: torch's
    first-call paths, the checks' lazy imports and the zips' parsed tests are paid once, not
    once per notebook (the sealed judge's rehearsed zygote does the same for its workers).
    The parent puts torch's, numpy's and Python's random state back after that rehearsal."""

    def __init__(self, zips: dict[str, Path]):
        import multiprocessing

        self.conn, child = multiprocessing.get_context("spawn").Pipe()
        self.process = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(child, {a: Path(z) for a, z in zips.items()}), daemon=True)
        self.process.start()

    def grade(self, notebook: Path, assignment: str, seed: int,
              timeout: float) -> dict[str, tuple[float, float]]:
        self.conn.send((str(notebook), assignment, seed, int(timeout)))
        if not self.conn.poll(timeout + 30):
            self.close()
            raise AssertionError(f"{notebook.name} was not graded within {timeout:g} s")
        kind, value = self.conn.recv()
        if kind != "ok":
            raise AssertionError(f"{notebook.name}: {value}")
        return value

    def close(self) -> None:
        self.process.kill()
        self.process.join()


def _serve(conn, zips: dict[str, Path]) -> None:
    """The parent of ``Forks``: rehearse, then fork one child per notebook asked for."""
    import pickle
    import random
    import signal
    import traceback

    import numpy as np
    import torch

    from autograder.worker.modes import apply_modes, current_modes

    states = (torch.get_rng_state(), np.random.get_state(), random.getstate(), current_modes())
    for assignment, zip_path in zips.items():
        graded_here(ROOT / "solutions" / f"{assignment}.ipynb", zip_path, 0)
    torch.set_rng_state(states[0])
    np.random.set_state(states[1])
    random.setstate(states[2])
    apply_modes(states[3])
    quiet = os.open(os.devnull, os.O_WRONLY)  # the students' prints
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    while True:
        notebook, assignment, seed, seconds = conn.recv()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            signal.alarm(seconds)  # a notebook that hangs: its process ends, the test fails
            try:
                found = ("ok", graded_here(Path(notebook), zips[assignment], seed))
            except BaseException:  # noqa: BLE001 - reported to the test, which fails
                found = ("error", traceback.format_exc()[-3000:])
            with os.fdopen(write, "wb") as out:
                pickle.dump(found, out)
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as got:
            data = got.read()
        _, status = os.waitpid(pid, 0)
        conn.send(pickle.loads(data) if data else
                  ("error", f"its process died (wait status {status}) before it was graded"))
