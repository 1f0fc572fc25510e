"""Grading one part of a batch: ``autograder grade --shard I/N``.

A submission's shard is a stable hash of its name (its path relative to the submissions
folder), not its place in the sorted list. Why a hash: the N parts of a batch are graded by N
processes that each list the folder themselves (the pods of a Kubernetes Indexed Job, started
minutes apart); with positions, one file more or less in one pod's listing (a late upload)
moves every later file to another shard, so some would be graded twice and others never. With
a hash a file's shard depends on its own name only. The price is balance: shards differ in size
by a few files (binomially) instead of at most one, which is small next to the time per
notebook. Every shard also records a digest of the whole listing it saw, so ``merge`` refuses
shards that did not see the same folder.

Each shard writes ``shard.json`` beside its results: which shard, the run seed (every shard is
given the same one: hidden inputs derived from it agree with a whole run's), the digest of each
assignment's autograder zip, the grader's version and the listing's digest. ``merge`` refuses
shards that differ in any of these.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..files import write_atomic
from ..names import name_bytes

MANIFEST = "shard.json"
#: Bump when the manifest's meaning changes; ``merge`` refuses other versions.
#: 2: ``documents`` lists every result document the shard wrote, with its digest.
MANIFEST_VERSION = 2
_SPEC = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, name: str) -> bool:
        """Whether the submission named ``name`` (relative path) belongs to this shard."""
        return shard_of(name, self.count) == self.index


def parse(spec: str) -> Shard:
    """``"2/5"`` -> ``Shard(2, 5)``; ``ValueError`` (one line) for anything else."""
    match = _SPEC.fullmatch(spec.strip())
    if not match:
        raise ValueError(f"--shard {spec}: expected I/N, e.g. 1/4")
    index, count = int(match[1]), int(match[2])
    if count < 1:
        raise ValueError(f"--shard {spec}: N (the number of shards) must be at least 1")
    if not 1 <= index <= count:
        raise ValueError(f"--shard {spec}: I must be between 1 and N ({count})")
    return Shard(index, count)


def shard_of(name: str, count: int) -> int:
    """The 1-based shard of the submission ``name``: SHA-256 of its name, mod ``count``
    (not Python's ``hash``, which changes between processes)."""
    digest = hashlib.sha256(name_bytes(name)).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def listing_digest(names: list[str]) -> str:
    """A digest of the whole folder's listing (sorted names), the same in every shard."""
    return hashlib.sha256(b"\n".join(name_bytes(n) for n in sorted(names))).hexdigest()


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def documents(out: Path, graded: dict[str, list[str]]) -> dict[str, dict[str, str | None]]:
    """assignment -> submission name -> SHA-256 of its result document under ``out``
    (``None``: it could not be written): what ``merge`` takes from this shard, and nothing
    else."""
    from ..results import result_path

    found: dict[str, dict[str, str | None]] = {}
    for assignment, names in sorted(graded.items()):
        results = out / assignment / "results"
        found[assignment] = {name: file_digest(path) if (path := result_path(results, name))
                             .is_file() else None for name in sorted(names)}
    return found


def manifest(shard: Shard, seed: int, runner: str, all_names: list[str], mine: list[str],
             zips: dict[str, Path], identities: list[str],
             docs: dict[str, dict[str, str | None]] | None = None) -> dict:
    """What ``merge`` checks before joining this shard to the others. ``identities``: what
    each listed file's hidden inputs are drawn for (roster id or path): shards given other
    rosters drew other inputs. ``docs``: ``documents``, the result documents to take."""
    from ... import __version__
    from ..resultdoc import SCHEMA_VERSION

    return {"manifest_version": MANIFEST_VERSION, "shard": str(shard), "seed": seed,
            "runner": runner, "grader_version": __version__,
            "result_schema_version": SCHEMA_VERSION,
            "zips": {name: file_digest(path) for name, path in sorted(zips.items())},
            "listing": listing_digest(all_names), "listed": len(all_names),
            "identities": listing_digest(identities),
            "files": sorted(mine), "documents": docs or {}}


def write_manifest(out: Path, doc: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / MANIFEST, json.dumps(doc, indent=2, sort_keys=True) + "\n")
