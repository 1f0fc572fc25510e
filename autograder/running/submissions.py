"""Finding and vetting submitted notebooks before anything runs them."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat
import nbformat.reader

from ..authoring.layout import ASSIGNMENTS
from .names import printable, text
from .outputs.unplaced import SKIPPED_FOLDERS, apple_double

MAX_BYTES = 20 * 1024 * 1024  # a real submission is well under 1 MB; refuse before parsing
#: Code cells a notebook may have: the templates have a few dozen. The judge keeps a report
#: per cell until the document is written: 200 000 cells of a 17 MB notebook held 4 GB of its
#: memory, outside every worker's cap (red team rt-s5); the reports' text has a budget of its
#: own (``judge.cells.REPORTS_CHARS``), and this bounds their number
MAX_CODE_CELLS = 10_000


@dataclass(frozen=True)
class Submission:
    """One file found in the submissions folder.

    Attributes:
        path: where it is.
        name: its path relative to the folder as text (``names.text``: printable, odd bytes
            escaped), used as the ``file`` column and everywhere the grader names it.
        assignment: the assignment it belongs to, or ``None`` when it could not be told.
        problem: why it cannot be graded, or ``None``.
        seed: the seed its hidden inputs are drawn from (``batch`` derives it from the run's
            seed and the submission's identity); ``None``: the runner's own seed.
        other: the assignment it is for, when that is not the one graded (``-a``): it is no
            submission of that one (no row, no 0 in its gradebook); ``outputs.unplaced``.
        sha256: the hash of the file's bytes as vetted (``None``: they could not be read), kept
            in its result document: a partial run grades a file again when it has changed
            since (``batch.selection``).
        note: what staff are told about how it was placed (its assignment told by its cells,
            its metadata naming none: ``named_by_cells``), or ``None``.
    """

    path: Path
    name: str
    assignment: str | None
    problem: str | None = None
    seed: int | None = None
    other: str | None = None
    sha256: str | None = None
    note: str | None = None


def seed_of(sub: Submission, run_seed: int) -> int:
    """The seed ``sub``'s hidden inputs are drawn from: its own, else the run's."""
    return run_seed if sub.seed is None else sub.seed


def find(folder: Path, assignment: str | None = None) -> list[Submission]:
    """Every ``.ipynb`` under ``folder`` (or ``folder`` itself when it is one notebook), vetted;
    problems become ``Submission.problem``.

    Every entry named ``*.ipynb`` gets exactly one ``Submission``, whatever it is (a link, a
    FIFO, a folder), except macOS's metadata (``apple_double``, ``SKIPPED_FOLDERS``), which
    ``outputs.unplaced`` lists. Links to folders are not followed (``unplaced`` lists them too)
    and a folder that cannot be listed becomes a row of its own.
    """
    if folder.is_file():  # staff named one notebook (``-p mine.ipynb``)
        return [vet(folder, text(folder.name), assignment)]
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such file or folder of submissions")
    found: list[Submission] = []

    def unlistable(exc: OSError) -> None:
        where = Path(exc.filename or folder)
        name = text(where.relative_to(folder).as_posix()) + "/" if where != folder else "./"
        found.append(Submission(where, name, assignment, f"{name}: this folder could not be "
                                f"listed ({exc.strerror or exc}); its notebooks were not graded"))

    # os.walk, not Path.rglob: it never descends into a link to a folder (followlinks=False),
    # so a link loop or a link to / cannot stall or flood the walk, and onerror reports an
    # unreadable folder instead of raising
    for top, dirs, files in os.walk(folder, onerror=unlistable, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        for entry in sorted(dirs + files):
            if entry.endswith(".ipynb") and not apple_double(entry):
                path = Path(top) / entry
                found.append(vet(path, text(path.relative_to(folder).as_posix()), assignment))
    return sorted(found, key=lambda s: s.name)


def duplicate_names(subs: list[Submission]) -> dict[str, list[str]]:
    """Base name -> the submissions sharing it, where more than one does (``a/x.ipynb`` and
    ``b/x.ipynb``): both are graded under their full paths, and staff are told."""
    return _sharing(subs, lambda sub: text(sub.path.name))


def identical(subs: list[Submission]) -> list[list[str]]:
    """Groups of two or more submissions whose bytes are the same (``sha256``): a student's
    resubmission beside the first (``hw.ipynb``, ``hw (1).ipynb``) or one notebook handed in
    twice. Each is still graded on its own; staff are told (red-team round rt-2)."""
    return list(_sharing(subs, lambda sub: sub.sha256).values())


def _sharing(subs: list[Submission], key) -> dict:
    """``key`` -> the names of the submissions sharing it, where two or more do (a ``None``
    key is no key)."""
    groups: dict = {}
    for sub in subs:
        if (k := key(sub)) is not None:
            groups.setdefault(k, []).append(sub.name)
    return {k: names for k, names in groups.items() if len(names) > 1}


def vet(path: Path, name: str, assignment: str | None) -> Submission:
    """Check that ``path`` is a readable nbformat-4 notebook for a known assignment.

    Never raises and never blocks: whatever ``path`` is or holds (a FIFO, a link to
    ``/dev/zero``, JSON nested 100 000 deep), the answer is a ``Submission``, with the problem
    in words when it cannot be graded.
    """
    try:
        return _vet(path, name, assignment)
    except RecursionError:
        problem = "not a notebook: its JSON is nested too deeply to read"
    except MemoryError:
        problem = "too large to read into memory"
    except Exception as exc:  # noqa: BLE001 - one strange file never stops the batch
        problem = f"could not be read ({type(exc).__name__}: {str(exc)[:200]})"
    return Submission(path, name, assignment, f"{name}: {problem}")


def read_notebook_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``, at most ``MAX_BYTES + 1`` of them.

    Raises:
        NotRegularFile: ``path`` is a link, FIFO, device, socket or folder (never followed,
            opened for long or read).
        OSError: it cannot be opened or read.
    """
    kind = _kind(os.lstat(path).st_mode)
    if kind:
        raise NotRegularFile(kind)
    # O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO after the lstat above is
    # refused or opened without waiting for a writer; fstat of the open descriptor then says
    # what was really opened (the race between lstat and open is closed here, not above).
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                     | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFile("a symbolic link") from None
        raise
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind:
            raise NotRegularFile(kind)
        # at most the cap plus one byte, whatever stat said (a file can grow while we read)
        chunks, left = [], MAX_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class NotRegularFile(Exception):
    """A submission that is not a regular file; ``str()`` says what it is."""


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return words
    return "not a regular file"


def _named(nb: dict) -> str | None:
    """The otter ``assignment_name`` in the notebook's metadata, if it is a string."""
    metadata = nb.get("metadata")
    meta = metadata.get("otter", {}) if isinstance(metadata, dict) else {}
    found = meta.get("assignment_name") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def _vet(path: Path, name: str, assignment: str | None) -> Submission:
    digest = None

    def bad(problem: str, found: str | None = None) -> Submission:
        return Submission(path, name, assignment or found, f"{name}: {problem}", sha256=digest)

    try:
        data = read_notebook_bytes(path)
    except NotRegularFile as exc:
        return bad(f"is {exc}, not a regular file; it was not opened or followed "
                   "(submit the notebook file itself)")
    except OSError as exc:
        return bad(f"cannot be read ({exc.strerror or exc})")
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > MAX_BYTES:
        return bad(f"file is over {MAX_BYTES // 2**20} MB; a notebook over "
                   f"{MAX_BYTES // 2**20} MB is refused (clear its outputs and resubmit)")
    try:
        text = data.decode("utf-8")
        nb = json.loads(text)
    except UnicodeDecodeError as exc:
        return bad(f"not UTF-8 text (byte {exc.start}); a notebook is a UTF-8 JSON file")
    except json.JSONDecodeError as exc:
        return bad(f"not a notebook: invalid JSON at line {exc.lineno} column {exc.colno}")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return bad("not a notebook: no list of cells")
    if nb.get("nbformat") != 4:
        return bad(f"nbformat {repr(nb.get('nbformat'))[:20]} is not supported; "
                   "save it as nbformat 4")
    broken = next((i for i, c in enumerate(nb["cells"]) if not cell_ok(c)), None)
    if broken is not None:
        return bad(f"not a notebook: cell {broken + 1} has no cell_type or no text source")
    code = sum(1 for c in nb["cells"] if c["cell_type"] == "code")
    if code > MAX_CODE_CELLS:  # before nbformat reads them all; a row of its assignment's
        return bad(f"has {code} code cells; a notebook of more than {MAX_CODE_CELLS} is "
                   "refused (the assignment's template has a few dozen): merge or delete "
                   "cells and resubmit", _named(nb))
    # what the judge reads it with (judge.cells.code_cells: nbformat.reads) must not fail there;
    # reader.reads is the part of it that raises (parse, version, conversion) without the
    # schema validation that only logs (and takes seconds on a notebook of 5000 cells)
    try:
        nbformat.reader.reads(text)
    except Exception as exc:  # noqa: BLE001 - nbformat's own errors, whatever their class
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return bad(f"not a notebook nbformat can read: {first[:200]}")
    found = _named(nb)
    if assignment and found and found != assignment:
        return Submission(path, name, assignment, f"{name}: this notebook is for "
                          f"{found[:100]!r}, not {assignment!r} (-a); grade it without -a, "
                          f"or with -a {found[:100]}", other=found, sha256=digest)
    note = None
    if not assignment and not found and (found := named_by_cells(nb["cells"])):
        # a notebook whose metadata lost its otter entry (a "clear metadata" extension, cells
        # copied into a new notebook) still opens its assignment's notebook in its first cell:
        # graded as that one, as otter grades any notebook under the zip it is given, never
        # a 0 for a file that holds the answers
        note = (f"{name}: no otter assignment_name in its metadata; graded as {found}, the "
                f'notebook its cells open (otter.Notebook("{found}.ipynb"))')
    chosen = assignment or found
    if chosen not in ASSIGNMENTS:
        # one the notebook names but no assignment has (red-team round rt-1: a path) is said
        # as such, shown as text, never used as a folder
        why = (f"its otter assignment_name {printable(found, lines=False)[:100]!r} is none of "
               f"{', '.join(sorted(ASSIGNMENTS))}" if found else
               "no otter assignment_name in the notebook's metadata")
        return bad(f"cannot tell the assignment: {why}; pass -a ASSIGNMENT",
                   found if found in ASSIGNMENTS else None)
    return Submission(path, name, chosen, sha256=digest, note=note)


#: ``otter.Notebook("<assignment>.ipynb")``, the line otter assign puts in a student notebook's
#: first cell (locked there: not editable, not deletable)
_OPENED = re.compile(r"""otter\s*\.\s*Notebook\s*\(\s*(?:nb_path\s*=\s*)?"""
                     r"""["']([\w.-]+)\.ipynb["']""")


def named_by_cells(cells: list) -> str | None:
    """The assignment the code cells' ``otter.Notebook("<assignment>.ipynb")`` lines name, when
    they name exactly one known assignment; else ``None``."""
    named = set()
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = source if isinstance(source, str) else "".join(source)
            named.update(m for m in _OPENED.findall(source) if m in ASSIGNMENTS)
    return next(iter(named)) if len(named) == 1 else None


def cell_ok(cell) -> bool:
    """A cell the judge can read: a cell_type, and a source that is text or lines of text."""
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
        return False
    source = cell.get("source", "")
    return isinstance(source, str) or (isinstance(source, list)
                                       and all(isinstance(s, str) for s in source))
