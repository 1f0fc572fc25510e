"""Turning a notebook's code cells into plain Python the worker can run.

IPython syntax has no meaning outside a kernel: ``%magic`` and ``!shell`` lines are skipped with
a note naming the cell and line (the grader runs plain Python with no shell). otter's own
cells (``import otter``, ``grader = otter.Notebook(...)``, ``grader.check(...)``) are skipped:
checks run in the judge, not in the student's process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OTTER_LINE = re.compile(r"^\s*(import otter\b|grader\s*=\s*otter\.|grader\.(check|check_all|export|"
                        r"to_pdf)\b|from otter\b)")
MAGIC_LINE = re.compile(r"^\s*(%%?|!)\S")


@dataclass(frozen=True)
class Cell:
    """A code cell ready to run.

    Attributes:
        index: its position among the notebook's cells (0-based), for messages.
        source: the Python source with skipped lines blanked (line numbers are kept).
        notes: one sentence per skipped line, for the student's feedback.
    """

    index: int
    source: str
    notes: tuple[str, ...] = ()


def prepare(index: int, source: str) -> Cell:
    """Blank otter and IPython-only lines of one cell, keeping line numbers."""
    lines, notes = [], []
    cell_magic = source.lstrip().startswith("%%")
    for number, line in enumerate(source.split("\n"), 1):
        if cell_magic:
            lines.append("")
            continue
        if OTTER_LINE.match(line):
            lines.append(_blank(line))
        elif MAGIC_LINE.match(line):
            kind = "shell command" if line.lstrip().startswith("!") else "IPython magic"
            notes.append(f"cell {index + 1}, line {number}: the {kind} `{line.strip()[:60]}` was "
                         "skipped; the grader runs plain Python (no magics, no shell)")
            lines.append(_blank(line))
        else:
            lines.append(line)
    if cell_magic:
        notes.append(f"cell {index + 1}: the cell magic `{source.strip().splitlines()[0][:60]}` "
                     "was skipped with its whole cell; the grader runs plain Python")
    return Cell(index, "\n".join(lines), tuple(notes))


def _blank(line: str) -> str:
    """``pass`` at the line's indentation, so that a skipped line inside a block stays valid."""
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}pass"
