"""``OUT/<assignment>/timings.json``: seconds per submission (file -> wall-clock seconds),
kept out of the result documents on purpose (those are deterministic)."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import read_json, write_atomic

FILE = "timings.json"


def read(folder: Path) -> dict[str, float]:
    """Seconds per submission from ``folder/timings.json`` ({} when there is none)."""
    return {k: v for k, v in (read_json(folder / FILE) or {}).items()
            if isinstance(v, (int, float))}


def write(folder: Path, seconds: dict[str, float]) -> None:
    """Merge ``seconds`` (file -> wall-clock seconds) into ``folder/timings.json``."""
    old = read(folder)
    old.update({k: round(v, 3) for k, v in seconds.items()})
    write_atomic(folder / FILE, json.dumps(dict(sorted(old.items())), indent=2) + "\n")
