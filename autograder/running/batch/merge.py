"""``autograder merge OUT1 OUT2 ... -o OUT``: join the outputs of ``grade --shard I/N``.

The result documents are copied as they are (byte for byte); ``final_grades.csv`` is written
again from them by the same code and rules as a whole run (``grades_csv``, and the rows
``--resume`` reads back from disk), so the merged output equals a single run's with the same
seed, timings aside. Reports are written afterwards from the merged results (``cli``).

Refused, with one line naming the shard folder and the field, before anything is written:
a folder that is not a finished shard (no ``shard.json``), shards that disagree on the seed,
an assignment's zip, the grader's version or the listing of submissions they saw, a shard
missing or given twice, a submission graded by two shards, and an output folder that already
holds something (nothing is overwritten).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

from ...reporting.documents import load_grades
from . import grades_csv, unplaced
from ..files import write_atomic
from ..results import Graded
from ..resultdoc import DocumentError, ResultDoc
from .selection import read_json, write_timings
from .shards import MANIFEST, MANIFEST_VERSION, parse

#: Fields every shard of one run must agree on, in the order they are checked.
AGREED = ("manifest_version", "seed", "grader_version", "result_schema_version", "listing",
          "zips", "identities")
#: What a shard that disagrees on a field was (else: graded by a different grader version).
DISAGREES = {"seed": "graded with a different seed",
             "zips": "graded with different autograder zips",
             "listing": "saw a different folder of submissions",
             "identities": "was given a different roster, so other hidden inputs"}


class MergeError(ValueError):
    """Shards that cannot be joined: one line naming the folder and the field."""


def read_manifest(folder: Path) -> dict:
    path = folder / MANIFEST
    if not folder.is_dir():
        raise MergeError(f"{folder}: no such folder")
    doc = read_json(path)
    if doc is None:
        raise MergeError(f"{folder}: no readable {MANIFEST} (not the output of "
                         f"`autograder grade --shard`, or that run did not finish)")
    if doc.get("manifest_version") != MANIFEST_VERSION:
        raise MergeError(f"{folder}: {MANIFEST} field manifest_version is "
                         f"{doc.get('manifest_version')!r}, this grader reads "
                         f"{MANIFEST_VERSION}")
    return doc


def check(folders: list[Path]) -> list[dict]:
    """Every shard's manifest, after checking that they make one whole run."""
    manifests = [read_manifest(f) for f in folders]
    first, base = manifests[0], folders[0]
    for folder, doc in zip(folders[1:], manifests[1:]):
        for field in AGREED:
            if doc.get(field) != first.get(field):
                what = DISAGREES.get(field, "graded by a different grader version")
                raise MergeError(f"{folder}: {MANIFEST} field {field} is "
                                 f"{_short(doc.get(field))}, {base} has "
                                 f"{_short(first.get(field))} ({what}; re-grade it)")
    seen: dict[int, Path] = {}
    count = None
    for folder, doc in zip(folders, manifests):
        try:
            shard = parse(str(doc.get("shard")))
        except ValueError:
            raise MergeError(f"{folder}: {MANIFEST} field shard is {doc.get('shard')!r}, "
                             f"not I/N") from None
        if count is not None and shard.count != count:
            raise MergeError(f"{folder}: {MANIFEST} field shard is {shard}, the others are "
                             f"of {count}")
        count = shard.count
        if shard.index in seen:
            raise MergeError(f"{folder}: {MANIFEST} field shard: {shard} is also "
                             f"{seen[shard.index]}")
        seen[shard.index] = folder
    missing = [str(i) for i in range(1, (count or 0) + 1) if i not in seen]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} of {count} missing: give every "
                         f"shard's output folder")
    return manifests


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def merge(folders: list[Path], out: Path, say: Callable[[str], None] = print) -> None:
    """Join the shard outputs ``folders`` into ``out`` (new or empty)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(f"-o {out}: exists and is not an empty folder (nothing is "
                         f"overwritten; choose a new one)")
    if any(out.resolve() == f.resolve() for f in folders):
        raise MergeError(f"-o {out}: is one of the shards")
    manifests = check(folders)
    results = _collect(folders)
    out.mkdir(parents=True, exist_ok=True)
    for assignment, files in sorted(results.items()):
        target = out / assignment
        for name, source in sorted(files.items()):
            dest = target / "results" / f"{name}.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        seconds: dict[str, float] = {}
        for folder in folders:
            timings = read_json(folder / assignment / "timings.json") or {}
            seconds.update({k: v for k, v in timings.items() if isinstance(v, (int, float))})
        write_timings(target / "timings.json", seconds)
        possible = _points(folders, assignment)
        rows = [_row(target / "results" / f"{name}.json") for name in sorted(files)]
        grades_csv.write(target / "final_grades.csv", rows, possible)
        say(f"{assignment}: {len(rows)} submission(s) from {len(folders)} shard(s): wrote "
            f"{target / 'final_grades.csv'}")
    unplaced.write(out, sorted(entry for folder in folders  # each shard lists its part
                               for entry in unplaced.read(folder / unplaced.FILE)))
    first = read_json(folders[0] / "grading.json") or {}
    runners = sorted({m.get("runner") for m in manifests if m.get("runner")})
    write_atomic(out / "grading.json", json.dumps(
        {"seed": manifests[0]["seed"], "folder": first.get("folder"),
         "runner": "+".join(runners) or first.get("runner"),
         "feedback": first.get("feedback"), "roster": first.get("roster"),
         "merged_from": [str(f) for f in folders]}, indent=2) + "\n")


def _collect(folders: list[Path]) -> dict[str, dict[str, Path]]:
    """assignment -> submission name -> its result document, refusing a name in two shards."""
    found: dict[str, dict[str, Path]] = {}
    owner: dict[tuple[str, str], Path] = {}
    for folder in folders:
        for csv_path in sorted(folder.glob("*/final_grades.csv")):
            assignment = csv_path.parent.name
            results = csv_path.parent / "results"
            for path in sorted(results.rglob("*.json")):
                name = path.relative_to(results).as_posix()[: -len(".json")]
                if (assignment, name) in owner:
                    raise MergeError(f"{folder}: {assignment}/{name} was also graded by "
                                     f"{owner[assignment, name]} (overlapping shards)")
                owner[assignment, name] = folder
                found.setdefault(assignment, {})[name] = path
    return found


def _points(folders: list[Path], assignment: str) -> dict[str, float]:
    """Points per question, from the shards' CSVs (equal: the zips are)."""
    for folder in folders:
        if (folder / assignment / "final_grades.csv").exists():
            return load_grades(folder / assignment).possible
    return {}


def _row(path: Path) -> Graded:
    """The CSV row a whole run writes for the result document at ``path``."""
    try:
        return ResultDoc.read(path).row()
    except DocumentError as exc:
        raise MergeError(str(exc)) from None
