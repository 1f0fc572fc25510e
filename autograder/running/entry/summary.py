"""What a platform's student reads above the tests (PrairieLearn's ``message``, Gradescope's
top-level ``output``), one sentence each: the auto-graded points and the written questions
graded by hand later, the cells that raised, and what went wrong with the notebook's process;
and, for a file not graded, what to submit instead (``refused``).
"""

from __future__ import annotations

from ..resultdoc import CellReport, ResultDoc, as_sentence
from ..submissions import Submission

#: Cells that raised named one by one; the rest are counted.
MAX_CELLS = 3
#: Characters of a cell's exception message shown (its first line).
MAX_ERROR = 200


def points_line(doc: ResultDoc, written: list[tuple[str, float]]) -> str:
    """``"17 of 21 points."``; with written questions, the points said to be the auto-graded
    ones and the written ones named, with their points, as graded by hand later."""
    earned, possible = doc.points, sum(q.possible for q in doc.questions.values())
    if not written:
        return f"{earned:g} of {possible:g} points."
    names = [name for name, _ in written]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    points = sum(p for _, p in written)
    verb = "is" if len(names) == 1 else "are"
    return (f"{earned:g} of {possible:g} auto-graded points; {listed} ({points:g} "
            f"point{'' if points == 1 else 's'}) {verb} graded by hand, later.")


def raised(cell: CellReport) -> str:
    """``"The cell defining load raised ValueError: my data file is missing."``: the cell as
    the judge names it, the exception's type and the first line of its message."""
    name = cell.name or f"code cell {cell.index + 1}"
    kind = (cell.error.type if cell.error else None) or "an exception"
    lines = ((cell.error.message if cell.error else None) or "").strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > MAX_ERROR:
        first = first[:MAX_ERROR] + "..."
    return as_sentence(f"{name} raised {kind}" + (f": {first}" if first else ""))


def raised_cells(doc: ResultDoc) -> list[str]:
    """One sentence per cell that raised (at most ``MAX_CELLS``, then how many more): the
    tests that needed what it defines failed because of it."""
    cells = [c for c in (doc.notebook.cells if doc.notebook else ()) if c.error]
    said = [raised(c) for c in cells[:MAX_CELLS]]
    if len(cells) > MAX_CELLS:
        more = len(cells) - MAX_CELLS
        said.append(f"{more} more cell{'s' if more > 1 else ''} raised too.")
    return said


def summary(doc: ResultDoc, written: list[tuple[str, float]]) -> list[str]:
    """The sentences above a graded submission's tests, in the order a student acts on them."""
    return [points_line(doc, written), *raised_cells(doc),
            *(as_sentence(p) for p in doc.problems if p.strip())]


def refused(sub: Submission, assignment: str, place: str, again: str) -> str:
    """Why a platform refuses the vetted ``sub``, with what to submit instead: never the
    command line's advice (``-a``), which a student on ``place`` ("question", "assignment")
    cannot follow. ``again``: "submit" or "resubmit"."""
    if sub.other:  # a notebook of another assignment
        return (f"Your file {sub.name} is the {sub.other[:100]} notebook, but this {place} "
                f"wants the {assignment} notebook: {again} your {assignment}.ipynb instead.")
    return (f"Your file {sub.problem}. Save the notebook from Jupyter (File > Save) and "
            f"{again} the .ipynb file.")
