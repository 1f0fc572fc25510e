"""Reading the result documents a grading run left in ``OUT/<assignment>/results/`` (the
other files of a run are read where they are written: ``running.outputs``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..running.resultdoc import ResultDoc


def load_results(folder: Path) -> list[ResultDoc]:
    """The result documents under ``folder/results``, sorted by file name (``iter_results``
    in a list: only for callers that need them all at once)."""
    return list(iter_results(folder))


def iter_results(folder: Path) -> Iterator[ResultDoc]:
    """The result documents under ``folder/results``, sorted by file name, read one at a time
    (a class's documents are never all in memory).

    A file that is not a result document of this grader is an error naming it
    (``ResultDoc.read``).
    """
    results = folder / "results"
    # a document's path is results/<file>.json: sorting paths by <file> sorts by file name
    paths = sorted(results.rglob("*.json"), key=lambda p: p.relative_to(results).as_posix())
    for path in paths:
        yield ResultDoc.read(path)


def stem(file: str) -> str:
    """``"autograd-exercises/alan-turing.ipynb"`` -> ``"autograd-exercises/alan-turing"``."""
    return file[: -len(".ipynb")] if file.endswith(".ipynb") else file
