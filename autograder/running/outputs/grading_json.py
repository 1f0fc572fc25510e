"""``OUT/grading.json``: what a grading run was given (its seed, folder, runner, feedback
detail, roster and shard), written before any submission is graded so that a stopped run can
be resumed with the same seed and roster, with ``finished`` false until the run ends (a run
stopped by a signal, a kill or a lost terminal leaves it false: ``report`` refuses to export
its mix of old and new grades); ``autograder merge`` writes the merged run's, and the reports
read the feedback detail, the roster and the seed (the pseudonyms' key) from it.
``autograder report --feedback`` records the detail it was given."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import read_json, write_atomic

FILE = "grading.json"
#: How a run's record says each submission's seed is drawn (``checks.seeding``).
SEEDS = "per submission: sha256(run seed, roster id or path)"


def write(out: Path, *, seed: int, folder: str | None, runner: str | None,
          feedback: str | None, roster: dict[str, str] | None, **more) -> None:
    """``out/grading.json``: these fields in this order, then ``more`` (``seeds`` for a run,
    ``merged_from`` for a merge)."""
    write_atomic(out / FILE, json.dumps(
        {"seed": seed, "folder": folder, "runner": runner, "feedback": feedback,
         "roster": roster, **more}, indent=2) + "\n")


def update(out: Path, **fields) -> None:
    """Set ``fields`` in the record of the run in ``out`` (which exists), the rest kept."""
    run = read(out)
    run.update(fields)
    write_atomic(out / FILE, json.dumps(run, indent=2) + "\n")


def stopped(run: dict) -> bool:
    """Whether the run that wrote the record did not finish (stopped, killed or still
    running); a record from before ``finished`` was kept counts as finished."""
    return run.get("finished") is False


def read(out: Path) -> dict:
    """What the run in ``out`` recorded (``{}`` without a readable record)."""
    return read_json(out / FILE) or {}


def seed(run: dict) -> int | None:
    """The seed a record holds, if any."""
    try:
        return int(run["seed"])
    except (ValueError, KeyError, TypeError):
        return None


def roster(run: dict) -> dict[str, str] | None:
    """The roster a record holds (file -> id), or ``None`` (none, or graded without one)."""
    found = run.get("roster")
    if not isinstance(found, dict) or not found:
        return None
    return {str(k): str(v) for k, v in found.items()}
