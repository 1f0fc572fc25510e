"""What ``autograder grade`` checks before any work (no zip built, no container or worker
started, nothing written): a typo in ``--only`` or ``--question``, a roster that would draw
the wrong hidden inputs or give two students one id, an output folder that cannot be written.
Each problem is ``Refused`` with one line; the command exits with status 2.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import Iterator

from ..outputs.roster import match
from ..submissions import Submission
from .selection import Selection, matches


class Refused(ValueError):
    """A run that must not start: one line saying why and what to do."""


def check_only(subs: list[Submission], names: tuple[str, ...], folder: Path) -> None:
    """Every ``--only`` name must name a submission of the folder."""
    unknown = [name for name in names if not any(matches(s, (name,)) for s in subs)]
    if unknown:
        raise Refused(f"--only {unknown[0]}: no submission in {folder} has that path, file "
                      f"name or stem" + (f" (nor {len(unknown) - 1} more --only name(s))"
                                         if len(unknown) > 1 else ""))


def check_assignment(assignment: str | None, groups: dict[str, list[Submission]],
                     subs: list[Submission], folder: Path) -> None:
    """``-a``'s assignment must be that of one notebook at least: a folder whose notebooks are
    all another assignment's (a typo, the wrong folder) is refused before any work, not an
    empty run that exits 0."""
    if not assignment or groups:
        return
    others: dict[str, int] = {}
    for sub in subs:
        if sub.other:
            others[sub.other] = others.get(sub.other, 0) + 1
    if not others:
        return
    counts = ", ".join(f"{n} for {name[:100]!r}" for name, n in sorted(others.items()))
    hint = (f"grade the folder without -a, or with -a {next(iter(others))}" if len(others) == 1
            else "grade the folder without -a")
    raise Refused(f"-a {assignment}: no notebook in {folder} is for {assignment} ({counts}); "
                  f"{hint}")


def assignment_for(given: str | None, previous: dict, selection: Selection,
                   out: Path) -> tuple[str | None, str | None]:
    """The assignment this run grades (``None``: each notebook's own) and the one its record
    keeps.

    A run that continues the run in ``out`` (``--resume``, ``--only``, ``--question``) without
    ``-a`` grades what that run's ``-a`` chose: else it would take up the folder's notebooks of
    other assignments and write a grades CSV that lists none of them (red-team rt-s3). Given
    another ``-a`` than the recorded one, the output then holds both, and its record says none.
    """
    recorded = previous.get("assignment") if selection.partial else None
    if not isinstance(recorded, str) or not recorded:
        return given, given
    if given is None:
        return recorded, recorded
    return given, (given if given == recorded else None)


def check_question(question: str | None, questions: dict[str, list[str]],
                   written: dict[str, list[str]] | None = None) -> None:
    """``--question`` must name a question of an assignment being graded (``questions``:
    assignment -> its question names, from its autograder zip); a written one (``written``:
    assignment -> its questions graded by hand) is said to be graded by hand."""
    if question is None or any(question in names for names in questions.values()):
        return
    by_hand = sorted(a for a, names in (written or {}).items() if question in names)
    if by_hand:
        raise Refused(f"--question {question}: a written question of {', '.join(by_hand)}, "
                      f"graded by hand, not by the grader: give its points on "
                      f"OUT/<assignment>/written/{question}.html and merge them with "
                      f"`autograder report --written SCORES.csv`")
    known = sorted({q for names in questions.values() for q in names})
    raise Refused(f"--question {question}: no such question in "
                  f"{', '.join(sorted(questions)) or 'the submissions'} ({', '.join(known)})")


def written_names(layout, assignments) -> dict[str, list[str]]:
    """Assignment -> the names of its written questions (none without its master)."""
    from ...authoring.written import from_master

    return {a: [q.name for q in from_master(layout.master(a))] for a in assignments
            if layout.master(a).exists()}


def writable(out: Path) -> None:
    """``out`` can hold the results: a file can be made (and is removed) in it or, when it does
    not exist yet, in the nearest folder above it that does; nothing is left behind."""
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise Refused(f"-o {out}: cannot write there ({exc.strerror or exc})") from None


def roster_for(given: dict[str, str] | None, recorded, selection: Selection,
               out: Path) -> tuple[dict[str, str] | None, str | None]:
    """The roster this run grades with, and a line to say about it (or ``None``).

    A partial run (``--resume``, ``--only``, ``--question``) merges into the run in ``out``: its
    submissions must draw the inputs that run drew, so it uses the roster that run recorded in
    ``grading.json`` when none is given, and refuses another one. ``recorded`` is what
    ``grading.json`` holds: a roster (file -> id; empty: graded without one), or, from older
    graders, only whether there was one.
    """
    if not selection.partial and isinstance(recorded, dict) and recorded and given is None:
        # red-team rt-s3: a full regrade without --roster dropped the class's ids in silence
        return None, (f"note: the run in {out} was graded with a roster ({len(recorded)} "
                      f"row(s)); this run has none: its ids are the files' paths and its "
                      f"hidden inputs are drawn for them (pass --roster to keep the ids)")
    if not selection.partial or recorded is None:
        return given, None
    if isinstance(recorded, bool):  # an older grader recorded no rows: a note, as it did
        if recorded != bool(given):
            return given, (f"note: the run in {out} was graded {'with' if recorded else 'without'}"
                           " a roster; pass the same --roster (or none) to draw the same inputs")
        return given, None
    if not isinstance(recorded, dict):
        return given, None
    if given is None:
        return (recorded or None), (f"using the roster recorded in {out / 'grading.json'} "
                                    f"({len(recorded)} row(s))" if recorded else None)
    if given != recorded:
        was = f"another roster ({len(recorded)} row(s))" if recorded else "no roster"
        raise Refused(f"--roster: the run in {out} was graded with {was}: its regrades would "
                      f"draw other hidden inputs and ids; pass that roster, or none to reuse "
                      f"what {out / 'grading.json'} recorded")
    return given, None


def check_roster(subs: list[Submission], roster: dict[str, str] | None) -> list[str]:
    """The roster's rows (their ``file``) that no submission matched: who did not submit.
    ``Refused`` when one row matches two submissions (one id, one seed for two notebooks)."""
    if not roster:
        return []
    try:
        return match([s.name for s in subs], roster)[1]
    except ValueError as exc:
        raise Refused(f"--roster: {exc}") from None


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """``out`` held by this run alone until the block ends: an ``flock`` on the folder itself
    (no file of ours left in it; the kernel drops the lock with the process, however it ends),
    so that a second run into the same folder is ``Refused`` at once instead of mixing the two
    runs' results (red-team round rt-2: each moved the other's documents aside as stale)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"-o {out}: cannot write there ({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Refused(f"-o {out}: another grading run is writing there now; wait for it "
                          f"to end, or grade into another folder") from None
        yield
    finally:
        os.close(fd)


def same_run(previous: dict, folder: Path, seed: int | None, selection: Selection,
             out: Path, replace: bool = False) -> None:
    """A partial run (``--resume``, ``--only``, ``--question``) merges into the run in ``out``:
    ``Refused`` when it grades another submissions folder (a section's ``hw.ipynb`` would keep
    another section's grade, red-team round rt-2) or draws with another seed (one document,
    two seeds) than that run recorded. A whole run of another folder replaces the run in
    ``out`` only when ``replace`` says so (``--replace``: a new download of the class)."""
    recorded = previous.get("folder_resolved")
    if (not selection.partial and folder.is_file() and isinstance(recorded, str)
            and recorded != str(folder.resolve())):
        # one notebook graded into a class's output would have moved every other grade there
        # aside as stale (red-team round rt-2)
        raise Refused(f"-p {folder}: one notebook, but {out} holds the run of {recorded}; to "
                      f"regrade it there, pass -p {recorded} --only {folder.name}; or grade it "
                      f"into another -o")
    if (not selection.partial and not replace and not folder.is_file()
            and isinstance(recorded, str) and recorded != str(folder.resolve())):
        # another section or assignment graded into a class's output replaced its documents of
        # the same names and moved the rest aside as stale (red-team round rt-s3)
        raise Refused(f"-p {folder}: {out} holds the run of {recorded}; grade {folder} into "
                      f"another -o, or pass --replace if it is a new download of that class "
                      f"(its results replace the run's)")
    if not selection.partial:
        return
    if isinstance(recorded, str) and recorded != str(folder.resolve()):
        raise Refused(f"-p {folder}: the run in {out} graded {recorded}; --resume, --only and "
                      f"--question merge into that run: pass -p {recorded}, or grade {folder} "
                      f"into another -o")
    was = previous.get("seed")
    if seed is not None and isinstance(was, int) and seed != was:
        raise Refused(f"--seed {seed}: the run in {out} was graded with seed {was}; --resume, "
                      f"--only and --question draw its hidden inputs again: drop --seed (or "
                      f"pass {was}), or grade with seed {seed} into another -o")


def same_shard(previous: dict, shard, selection: Selection, out: Path) -> None:
    """A shard grades into a folder of its own: ``Refused`` when ``out`` holds a run of the
    whole folder or of another shard (red-team round rt-s3: ``--shard 1/2 --resume`` into a
    whole run's output moved the other students' documents aside as stale and wrote a grades
    CSV of one shard), and a run of the whole folder that merges into a shard's output."""
    if not previous or "finished" not in previous:
        return  # no run there, or one from before shards were recorded
    was = previous.get("shard")
    now = None if shard is None else str(shard)
    if was == now or (now is None and not selection.partial):
        return  # the same shard again, or a whole run that replaces what is there
    held = f"shard {was}" if was else "a run of the whole folder"
    if now is not None:
        raise Refused(f"--shard {now}: {out} holds {held}; grade each shard into an empty folder "
                      f"of its own, then join them with `autograder merge`")
    raise Refused(f"{out} holds shard {was}: --resume, --only and --question merge into a "
                  f"run of the whole folder; join the shards with `autograder merge` first and "
                  f"grade into the merged folder")


def known_seed(previous: dict, seed: int | None, selection: Selection, out: Path) -> None:
    """A partial run draws the hidden inputs the run in ``out`` drew: ``Refused`` when that
    run's seed is unknown (its ``grading.json`` deleted or unreadable while its result
    documents are there, red-team round rt-s3) and ``--seed`` does not give it."""
    if not selection.partial or seed is not None or previous.get("seed") is not None:
        return
    if holds_documents(out):
        raise Refused(f"{out / 'grading.json'}: missing or unreadable, so the seed of the run "
                      f"in {out} is unknown; pass it with --seed, or grade again without "
                      f"--resume, --only and --question (new hidden inputs for everyone)")


def holds_documents(out: Path) -> bool:
    """Whether ``out`` holds a result document of any assignment."""
    return any(out.glob("*/results/**/*.json"))
