"""The budgets a result document is cut to (``capped``) and where it is written
(``result_path``), with no torch in sight (the Docker runner's host side imports this and must
stay light); the document itself is ``resultdoc.ResultDoc``, its row ``resultdoc.Graded``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .names import out_path


def result_path(results: Path, name: str) -> Path:
    """``out/<a>/results/<name>.json``, mirroring the submission's folders (no collisions),
    every part within ``NAME_MAX`` (``names.out_path``)."""
    return out_path(results, name, ".json")


#: The most one submission's result document may take once written (UTF-8 JSON). Feedback
#: files are rendered from it and stay about this size too. A real document is 10-50 KB.
MAX_DOCUMENT_BYTES = 1 << 20
#: Budgets inside it: one string (a message, a traceback), the cells kept from the notebook's
#: report (serialized), the captured output, and entries of the list of problems.
MAX_TEXT = 8000
MAX_CELLS_BYTES = 256 * 1024
# above the 64 KiB a worker captures (``Limits.output_bytes``) plus the note it appends on how
# much it dropped, so that note survives
MAX_OUTPUT = 72 * 1024
MAX_PROBLEMS = 50
#: The longest grading status a row of ``final_grades.csv`` carries.
MAX_STATUS = 2000


def _dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def capped(doc: dict) -> dict:
    """``doc`` within the output budget, whatever the notebook did (5000 failing cells, a
    megabyte per message); what was cut is said in ``doc["cut"]``, one sentence each.

    Keeps, in order of worth: the points, every test's message (each cut to ``MAX_TEXT``
    characters), then the notebook's cell report, the problems and the output.
    """
    cut: list[str] = list(doc.get("cut", [])) if isinstance(doc.get("cut"), list) else []
    output = doc.get("output")
    doc = _cap_strings({k: v for k, v in doc.items() if k != "output"}, MAX_TEXT)
    if output is not None:
        doc["output"] = _cap_strings(output, MAX_OUTPUT)
        if isinstance(output, str) and len(output) > MAX_OUTPUT:
            cut.append(f"... {len(output) - MAX_OUTPUT} more characters of output cut")
    problems = doc.get("problems")
    if isinstance(problems, list) and len(problems) > MAX_PROBLEMS:
        cut.append(f"... {len(problems) - MAX_PROBLEMS} more problems cut")
        doc["problems"] = problems[:MAX_PROBLEMS]
    notebook = doc.get("notebook")
    if isinstance(notebook, dict) and isinstance(notebook.get("cells"), list):
        kept, used = [], 0
        for cell in notebook["cells"]:
            used += len(json.dumps(cell, ensure_ascii=False))
            if used > MAX_CELLS_BYTES:
                break
            kept.append(cell)
        rest = notebook["cells"][len(kept):]
        if rest:
            errors = sum(1 for c in rest if isinstance(c, dict) and (c.get("error")
                                                                    or c.get("reason")))
            cut.append(f"... {errors} more cell errors cut (the report keeps its first "
                       f"{len(kept)} cells; {len(rest)} more are left out)")
            doc["notebook"] = {**notebook, "cells": kept}
    if cut:
        doc["cut"] = cut
    text = 1000  # still too big (a judge that wrote thousands of tests): shorter strings
    while len(_dumps(doc).encode()) > MAX_DOCUMENT_BYTES and text >= 10:
        doc = _cap_strings({k: v for k, v in doc.items() if k not in ("notebook", "output")},
                           text)
        doc["cut"] = cut + [f"the notebook's cell report and output were cut, and every "
                            f"text to {text} characters, to stay under "
                            f"{MAX_DOCUMENT_BYTES // 1024} KB"]
        text //= 10
    return doc


#: A lone UTF-16 surrogate: Python strings may hold one (a JSON escape, surrogate-escaped
#: bytes), UTF-8 has no form for it
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\udcff``, six
    characters): a student's error message, written answer or output that held one made the
    result document impossible to write in UTF-8, a grader error for a right notebook and
    exit status 3 for the run (red team rt-s5)."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _cap_strings(value, limit: int):
    """A copy of ``value`` with every string over ``limit`` characters cut to ``limit``,
    saying so (so that capping twice, in the container and on the host, changes nothing),
    lone surrogates written as escapes (``without_surrogates``), and anything JSON cannot
    hold written as its text."""
    if isinstance(value, str):
        value = without_surrogates(value)
        if len(value) <= limit:
            return value
        note = f" [... {len(value)} characters, cut]"
        return value[: max(0, limit - len(note))] + note
    if isinstance(value, dict):
        return {without_surrogates(k) if isinstance(k, str) else k: _cap_strings(v, limit)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cap_strings(v, limit) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    # what JSON has no form for (a complex number a student's answer carried into evidence,
    # red-team round rt-1): its text, so that one answer never stops the writing of the
    # document, nor of the batch's others
    return _cap_strings(str(value), limit)
