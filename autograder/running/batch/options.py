"""What ``autograder grade`` is asked to do, as one frozen object: the command line (``cli``)
and the pod's entry point (``entry.pod``) build it, ``folder.grade_folder`` reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...authoring.layout import Layout
from ..limits import Limits
from .selection import Selection
from .shards import Shard


@dataclass(frozen=True)
class Options:
    """One grading run's settings.

    Attributes:
        folder: the submissions: a folder (searched recursively) or one notebook.
        layout: where the masters and the autograder zips are.
        out: the results folder.
        assignment: grade only this assignment's notebooks (``None``: each notebook's own,
            from its otter metadata).
        seed: the run's seed (``None``: what ``grading.json`` recorded for a partial run,
            else a fresh one).
        runner: a runner's name (``registry.RUNNERS``) or ``auto``.
        jobs: submissions graded at once (``None``: the runner's default).
        limits: what each worker may use; the runner may adjust them (CUDA).
        selection: the part of the batch to grade (``--resume``, ``--only``, ``--question``).
        roster: file -> student id (``None``: none given; a partial run then uses the roster
            ``grading.json`` recorded).
        feedback: how much feedback shows (``None``: what ``grading.json`` recorded, else
            ``full``).
        shard: grade only this part of the folder and write ``shard.json`` last (``None``:
            all of it).
        replace: a whole run of another folder than the one whose run ``out`` holds replaces
            that run (``--replace``: a new download of the class); without it, refused.
    """

    folder: Path
    layout: Layout
    out: Path
    assignment: str | None = None
    seed: int | None = None
    runner: str = "sealed"
    jobs: int | None = None
    limits: Limits = field(default_factory=Limits)
    selection: Selection = field(default_factory=Selection)
    roster: dict[str, str] | None = None
    feedback: str | None = None
    shard: Shard | None = None
    replace: bool = False
