"""The notebook's code cells as the judge reads and names them: the cells themselves
(``code_cells``), what a cell defines (``defined_names``, read with ``ast``, never run), how
feedback names it (``cell_name``), and the worker's report on one cell, cleaned
(``clean_cell_entry``) and named (``named_entry``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import nbformat

from ..resultdoc import CellReport
from ..submissions import cell_ok, read_notebook_bytes
from .reports import worker_text

#: Sources longer than this are named by their first line only (never parsed).
MAX_PARSED_SOURCE = 200_000


def defined_names(source: str) -> list[str]:
    """The top-level names a cell defines (functions, classes, assignments, imports), read
    with ``ast`` (parsed, never run); [] when it does not parse or is too long."""
    if len(source) > MAX_PARSED_SOURCE:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return list(dict.fromkeys(names))[:20]


def first_line(source: str) -> str:
    """The cell's first non-blank line, cut to 80 characters."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= 80 else line[:77] + "..."


def cell_name(index: int, source: str) -> str:
    """How feedback names a cell: by what it defines, else by its first line (Jupyter shows
    no cell numbers), with its position as a last resort."""
    names = [n for n in defined_names(source) if not n.startswith("_")]
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return f"the cell defining {shown}"
    line = first_line(source)
    return f"the cell starting `{line}`" if line else f"code cell {index + 1}"


def named_entry(entry: dict, source: str) -> CellReport:
    """A cell report entry with what the cell defines, its first line and its name."""
    return CellReport.from_dict({**entry, "defines": defined_names(source),
                                 "first_line": first_line(source),
                                 "name": cell_name(entry["index"], source)})


def code_cells(path: Path) -> list[tuple[int, str]]:
    """``(index, source)`` of every code cell of the notebook at ``path``, read as vetted:
    never through a link or a FIFO swapped in since (``submissions.read_notebook_bytes``).
    An nbformat-4 notebook whose cells all have a type and a text source is read as JSON, its
    sources joined as nbformat joins them, without nbformat's schema validation (it only
    logs, and costs milliseconds per notebook); anything else as ``nbformat.reads`` reads it."""
    text = read_notebook_bytes(path).decode("utf-8")
    try:
        nb = json.loads(text)
    except ValueError:
        nb = None
    cells = nb.get("cells") if isinstance(nb, dict) and nb.get("nbformat") == 4 else None
    if isinstance(cells, list) and all(cell_ok(c) and "source" in c for c in cells):
        return [(i, _joined(c["source"])) for i, c in enumerate(cells)
                if c["cell_type"] == "code"]
    nb = nbformat.reads(text, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _joined(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def clean_cell_entry(index: int, entry: dict, short: bool = False) -> dict:
    """Only the fields we expect, as strings, from the worker's report on one cell; ``short``:
    no notes, and an error's type and message cut to 200 characters, no traceback (a
    submission whose reports have used their budget, ``REPORTS_CHARS``)."""
    notes = entry.get("notes") if isinstance(entry.get("notes"), list) else []
    clean: dict[str, Any] = {"index": index, "status": worker_text(entry.get("status"), 20),
                             "notes": [] if short else [worker_text(n, 300) for n in notes[:20]]}
    error = entry.get("error")
    if isinstance(error, dict):
        clean["error"] = {k: "" if short and k == "traceback" else
                          worker_text(error.get(k), 200 if short else 4000)
                          for k in ("type", "message", "traceback")}
    return clean


#: Characters of cell reports one submission's judge keeps in full; past them each cell's
#: report is short (``clean_cell_entry``): the judge's memory is outside every worker's cap
#: (red team rt-s5 held 4 GB of it with 200 000 cells, each raising a 5000-character error)
REPORTS_CHARS = 4_000_000


def entry_chars(entry: dict) -> int:
    """The characters of text a cleaned cell report holds."""
    error = entry.get("error") or {}
    return sum(map(len, entry.get("notes", ()))) + sum(map(len, error.values()))
