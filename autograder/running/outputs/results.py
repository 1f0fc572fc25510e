"""``OUT/<assignment>/results/``: one result document per submission, written by the batch
(``ResultDoc.write`` at ``running.results.result_path``) and read back here, one at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..resultdoc import ResultDoc


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
