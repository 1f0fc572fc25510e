"""``make assign``: run ``otter assign`` and keep only what students and graders should get.

otter writes ``student/`` (template and public tests), ``autograder/`` (the zip and a notebook
holding the solutions) under a build folder. We copy the student files to
``student_templates/<assignment>/``, derive ``solutions/<assignment>.ipynb`` from otter's
autograder notebook, and give the zip a stable name, with the written questions' names and
points added to it (``written.LISTING``: the platforms' entry points have the zip, not the
master). Everything written is normalised
(cell ids, outputs, execution counts) so that a fresh run reproduces the committed files byte
for byte.
"""

from __future__ import annotations

import fcntl
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

from . import points, written
from .layout import Layout

#: otter's placeholder for a written answer; the solution notebook keeps the answer instead.
WRITTEN_PLACEHOLDER = "_Type your answer here, replacing this text._"
ANSWER_TAG = "otter_answer_cell"
SOLUTION_TAG = "otter_assign_solution_cell"


class AssignError(RuntimeError):
    """``otter assign`` failed, e.g. because a solution did not pass its own tests."""


def run_otter_assign(master: Path, out_dir: Path) -> None:
    """Run ``otter assign`` with its own ``run_tests`` on; raise ``AssignError`` on failure."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "otter", "assign", master.name, str(out_dir)],
        # a session of its own: a Ctrl-C meant for `autograder grade` (which finishes the
        # zip, then stops) does not kill it midway; subprocess.run kills it when we stop
        cwd=master.parent, capture_output=True, text=True, start_new_session=True,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
        raise AssignError(f"otter assign {master} failed (exit {proc.returncode}):\n{tail}")


def normalize(nb: nbformat.NotebookNode, prefix: str) -> nbformat.NotebookNode:
    """Deterministic cell ids, no outputs or execution counts: stable across runs."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:03d}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def solution_from_autograder(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook a perfect student submits: otter's autograder notebook, with each written
    answer in place of the placeholder cell and otter's solution tag removed; the staff's
    rubric cells (``written.is_rubric``) are left out: no student submits them."""
    from .written import is_rubric

    cells = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if SOLUTION_TAG in tags and is_rubric(cell):
            continue
        if cell.cell_type == "markdown" and ANSWER_TAG in tags and \
                cell.source.strip() == WRITTEN_PLACEHOLDER:
            continue
        if SOLUTION_TAG in tags:
            cell.metadata["tags"] = [ANSWER_TAG if t == SOLUTION_TAG else t for t in tags]
        cells.append(cell)
    nb.cells = cells
    return nb


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        nbformat.write(nb, f)


def assign(assignment: str, layout: Layout, *, templates: Path | None = None,
           solution: Path | None = None) -> Path:
    """Build one assignment; return the autograder zip's path.

    Args:
        assignment: the assignment's name.
        layout: project paths.
        templates: where to write the student template folder (default: the committed one).
        solution: where to write the solution notebook (default: the committed one).
    """
    out, master = layout.otter_output(assignment), layout.master(assignment)
    wrong = points.problems(nbformat.read(master, as_version=4))
    if wrong:  # before otter, whose own error is a long traceback naming no question
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        raise AssignError(f"{master}: {wrong[0]}{more}")
    run_otter_assign(master, out)

    templates = templates or layout.templates(assignment)
    if templates.exists():
        shutil.rmtree(templates)
    (templates / "tests").mkdir(parents=True)
    student = nbformat.read(out / "student" / f"{assignment}.ipynb", as_version=4)
    write_notebook(normalize(student, assignment), templates / f"{assignment}.ipynb")
    for test in sorted((out / "student" / "tests").glob("*.py")):
        shutil.copyfile(test, templates / "tests" / test.name)

    graded = nbformat.read(out / "autograder" / f"{assignment}.ipynb", as_version=4)
    write_notebook(normalize(solution_from_autograder(graded), assignment),
                   solution or layout.solution(assignment))

    zips = sorted((out / "autograder").glob(f"{assignment}-autograder_*.zip"))
    if len(zips) != 1:
        raise AssignError(f"expected one autograder zip in {out / 'autograder'}, found {len(zips)}")
    partial = layout.zip(assignment).with_suffix(".zip.partial")
    shutil.copyfile(zips[0], partial)
    with zipfile.ZipFile(partial, "a") as zf:  # the written questions: names and points only
        zf.writestr(zipfile.ZipInfo(written.LISTING, date_time=(1980, 1, 1, 0, 0, 0)),
                    written.listing(written.from_master(master)))
    os.replace(partial, layout.zip(assignment))  # a reader never sees half a zip
    return layout.zip(assignment)


def differences(assignment: str, layout: Layout,
                fresh: tuple[Path, Path] | None = None) -> list[str]:
    """Files whose committed version differs from a fresh ``otter assign`` (empty: in sync).
    ``fresh``: the template folder and solution notebook of an assign already run (the
    tests run one per assignment and compare against it); default: run one here."""
    if fresh is not None:
        return _differences(assignment, layout, *fresh)
    with tempfile.TemporaryDirectory() as tmp:
        fresh_templates, fresh_solution = Path(tmp) / "templates", Path(tmp) / "solution.ipynb"
        scratch = Layout(layout.root, Path(tmp) / "build")
        assign(assignment, scratch, templates=fresh_templates, solution=fresh_solution)
        return _differences(assignment, layout, fresh_templates, fresh_solution)


def _differences(assignment: str, layout: Layout, fresh_templates: Path,
                 fresh_solution: Path) -> list[str]:
    committed = layout.templates(assignment)
    diffs = _tree_differences(committed, fresh_templates, f"student_templates/{assignment}")
    if not layout.solution(assignment).exists() or \
            not filecmp.cmp(layout.solution(assignment), fresh_solution, shallow=False):
        diffs.append(f"solutions/{assignment}.ipynb")
    return diffs


def _tree_differences(committed: Path, fresh: Path, label: str) -> list[str]:
    names = {p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file()} \
        if committed.exists() else set()
    names |= {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
    return [f"{label}/{n}" for n in sorted(names)
            if not (committed / n).is_file() or not (fresh / n).is_file()
            or not filecmp.cmp(committed / n, fresh / n, shallow=False)]


def ensure_zip(assignment: str, layout: Layout) -> Path:
    """The assignment's autograder zip, built (without touching committed files) if missing
    or older than its master."""
    zip_path, master = layout.zip(assignment), layout.master(assignment)

    def stale() -> bool:  # without the master (a pod given the zips) the zip is what there is
        return not zip_path.exists() or (master.exists() and
                                          zip_path.stat().st_mtime < master.stat().st_mtime)

    if stale():
        zip_path.parent.mkdir(parents=True, exist_ok=True)
        # two graders (or test workers) starting at once on a fresh checkout would run otter
        # assign into the same folder: one builds, the other waits and finds it built
        with open(zip_path.parent / ".assign.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if stale():
                # stderr: with --json, stdout holds the summary and nothing else
                print(f"{assignment}: building the autograder zip (otter assign) ...",
                      file=sys.stderr, flush=True)
                with tempfile.TemporaryDirectory() as tmp:
                    assign(assignment, layout, templates=Path(tmp) / "templates",
                           solution=Path(tmp) / "solution.ipynb")
    return layout.zip(assignment)
