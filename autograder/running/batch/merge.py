"""``autograder merge OUT1 OUT2 ... -o OUT``: join the outputs of ``grade --shard I/N``.

The result documents each shard's manifest lists (``documents``: name and digest) are copied
as they are (byte for byte), and nothing else; ``final_grades.csv`` is written
again from them by the same code and rules as a whole run (``outputs.final_grades``, and the rows
``--resume`` reads back from disk), so the merged output equals a single run's with the same
seed, timings aside. Reports are written afterwards from the merged results (``cli``).

Refused, with one line naming the shard folder and the field, before anything is written:
a folder that is not a finished shard (no ``shard.json``), shards that disagree on the seed,
an assignment's zip, the grader's version or the listing of submissions they saw, a shard
missing or given twice, a submission graded by two shards, a listed document missing or
changed since its shard wrote it, any other file under a shard's ``results/`` (a stale or
foreign document: a reused results volume), and an output folder that already holds
something (nothing is overwritten).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

from ..files import read_json
from ..names import text
from ..outputs import final_grades, grading_json, timings, unplaced
from ..resultdoc import DocumentError, Graded, ResultDoc
from ..results import result_path
from .shards import MANIFEST, MANIFEST_VERSION, file_digest, parse
from .stale import strays

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
    results = _collect(folders, manifests)
    out.mkdir(parents=True, exist_ok=True)
    for assignment, files in sorted(results.items()):
        target = out / assignment
        for name, source in sorted(files.items()):
            dest = result_path(target / "results", name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        for folder in folders:  # the written questions' snapshot: the same in every shard
            snapshot = folder / assignment / "written" / "questions.json"
            if snapshot.exists():
                (target / "written").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(snapshot, target / "written" / "questions.json")
                break
        seconds: dict[str, float] = {}
        for folder in folders:
            seconds.update(timings.read(folder / assignment))
        timings.write(target, seconds)
        possible = _points(folders, assignment)
        rows = [_row(result_path(target / "results", name), name) for name in sorted(files)]
        final_grades.write(target / final_grades.FILE, rows, possible)
        say(f"{assignment}: {len(rows)} submission(s) from {len(folders)} shard(s): wrote "
            f"{target / final_grades.FILE}")
    unplaced.write(out, sorted(entry for folder in folders  # each shard lists its part
                               for entry in unplaced.read(folder / unplaced.FILE)))
    first = grading_json.read(folders[0])
    runners = sorted({m.get("runner") for m in manifests if m.get("runner")})
    grading_json.write(out, seed=manifests[0]["seed"], folder=first.get("folder"),
                       runner="+".join(runners) or first.get("runner"),
                       feedback=first.get("feedback"), roster=first.get("roster"),
                       merged_from=[str(f) for f in folders],
                       folder_resolved=first.get("folder_resolved"), shard=None,
                       assignment=first.get("assignment"), finished=True)


def _collect(folders: list[Path], manifests: list[dict]) -> dict[str, dict[str, Path]]:
    """assignment -> submission name -> its result document: exactly the documents each
    shard's manifest lists, each as the shard wrote it (its digest); refused: a listed
    document missing or altered, any other file under a shard's ``results/`` (a stale or
    foreign document), a name in two shards."""
    found: dict[str, dict[str, Path]] = {}
    owner: dict[tuple[str, str], Path] = {}
    for folder, manifest in zip(folders, manifests):
        listed = _listed(folder, manifest)
        expected: set[Path] = set()
        for assignment, docs in sorted(listed.items()):
            results = folder / assignment / "results"
            for name, digest in sorted(docs.items()):
                try:
                    path = result_path(results, name)
                except ValueError as exc:
                    raise MergeError(f"{folder}: {MANIFEST} lists {exc}") from None
                where = f"{folder}: {assignment}/{text(name)}"
                if digest is None or not path.is_file():
                    raise MergeError(f"{where}: its result document is missing (the shard "
                                     f"could not write it); re-grade the shard")
                if file_digest(path) != digest:
                    raise MergeError(f"{where}: its result document was changed after the "
                                     f"shard wrote it ({MANIFEST} has another digest); "
                                     f"re-grade the shard")
                if (assignment, name) in owner:
                    raise MergeError(f"{where} was also graded by {owner[assignment, name]} "
                                     f"(overlapping shards)")
                _row(path, name)  # one of ours, for this name: checked before anything is written
                owner[assignment, name] = folder
                found.setdefault(assignment, {})[name] = path
                expected.add(path)
        for results in sorted(folder.glob("*/results")):
            extra = strays(results, expected)
            if extra:
                raise MergeError(f"{folder}: {extra[0].relative_to(folder)}: not listed in its "
                                 f"{MANIFEST} (a stale or foreign document; {len(extra)} in "
                                 f"all): move it out of the shard's folder or re-grade the shard")
    return found


def _listed(folder: Path, manifest: dict) -> dict[str, dict[str, str | None]]:
    """The manifest's ``documents``, checked for shape (assignment folders, names, digests)."""
    docs = manifest.get("documents")
    ok = isinstance(docs, dict) and all(
        isinstance(a, str) and a not in ("", ".", "..") and "/" not in a
        and isinstance(d, dict) and all(isinstance(n, str) and (h is None or isinstance(h, str))
                                        for n, h in d.items())
        for a, d in docs.items())
    if not ok:
        raise MergeError(f"{folder}: {MANIFEST} field documents is {_short(docs)}, not "
                         f"assignment -> file -> digest")
    return docs


def _points(folders: list[Path], assignment: str) -> dict[str, float]:
    """Points per question, from the shards' CSVs (equal: the zips are)."""
    for folder in folders:
        if (folder / assignment / final_grades.FILE).exists():
            return final_grades.read(folder / assignment).possible
    return {}


def _row(path: Path, name: str) -> Graded:
    """The CSV row a whole run writes for ``name``'s result document at ``path``."""
    try:
        doc = ResultDoc.read(path)
    except DocumentError as exc:
        raise MergeError(str(exc)) from None
    if doc.file != name:
        raise MergeError(f"{path}: holds the result of {doc.file}, not {name}")
    return doc.row()

