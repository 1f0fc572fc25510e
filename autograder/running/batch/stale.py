"""Outputs of an earlier run that this one does not own: moved aside, never reported.

Grading again into the same output folder after a student renamed or removed a file leaves
that file's result document from the last run under ``results/``; the reports read every
document there. After each assignment's CSV is written, every file under its ``results/``
that is not the document of a submission listed in this run is moved to
``OUT/<a>/stale/<time>/results/`` (nothing is deleted: it may be the only copy of a grade), and
the run says so in one line. Feedback is rendered from the documents; a feedback file no
document renders (a renamed file's, or a note staff left there) is moved to
``OUT/<a>/stale/<time>/feedback/`` when the feedback is written again
(``reporting.feedback_files.write_all``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def strays(folder: Path, keep: set[Path]) -> list[Path]:
    """Every file under ``folder`` (links and all, never followed) that is not in ``keep``."""
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        found += [Path(top) / f for f in files]
        found += [Path(top) / d for d in dirs if (Path(top) / d).is_symlink()]
    return sorted(p for p in found if p not in keep)


def move_aside(assignment_out: Path, keep: set[Path],
               part: str = "results") -> tuple[int, Path | None]:
    """Move every file under ``assignment_out/<part>`` not in ``keep`` (the paths of this
    run's documents, or of its feedback files) to ``assignment_out/stale/<UTC time>/<part>/``;
    how many, and where."""
    root = assignment_out / part
    moved = strays(root, keep)
    if not moved:
        return 0, None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = assignment_out / "stale" / stamp
    n = 1
    while target.exists():  # two runs in one second: a folder of its own each
        n += 1
        target = assignment_out / "stale" / f"{stamp}-{n}"
    for path in moved:
        dest = target / part / path.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
    remove_empty(root)
    return len(moved), target


def remove_empty(folder: Path) -> None:
    """Remove the empty folders under ``folder`` (not ``folder`` itself), deepest first."""
    for top, _, _ in os.walk(folder, topdown=False, followlinks=False):
        if Path(top) != folder:
            try:
                os.rmdir(top)  # fails, and is left, when it holds anything
            except OSError:
                pass
