"""The written questions of an assignment (otter's ``manual: true``), read from its master.

Each one is a ``# BEGIN QUESTION`` block whose config says ``manual: true``: its markdown cells
before ``# BEGIN SOLUTION`` are the prompt, the solution block's markdown cells the model
answer, and a solution-block markdown cell starting with ``**Rubric`` the rubric the staff
wrote for the graders. otter assign drops every solution-block cell from the student notebook,
so the rubric never reaches students (``assign`` also keeps it out of ``solutions/``, the
notebook a perfect student submits). ``step:`` in the question config (otter ignores keys it
does not know) sets the points step of the grading page (default 0.5).

Grading snapshots them (``running.outputs.written_questions``), so a run's reports never
depend on a master edited since. The autograder zip lists their names and points
(``LISTING``, written by ``assign``; never the prompt, model answer or rubric), so that the
platforms' entry points, which have the zip and not the master, can tell a student which
questions are graded by hand later.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

RUBRIC_MARK = "**Rubric"
#: The file in the autograder zip listing the written questions: ``[{"name", "points"}]``.
LISTING = "written.json"
DEFAULT_STEP = 0.5


@dataclass(frozen=True)
class WrittenQuestion:
    """One question graded by hand.

    Attributes:
        name: otter's question name (``q1_written``).
        points: the most a grader may give.
        step: the points step the grading page offers.
        prompt: the question as students read it (Markdown).
        solution: the model answer (Markdown; may be empty).
        rubric: what the staff wrote for the graders (Markdown; may be empty).
    """

    name: str
    points: float
    step: float
    prompt: str
    solution: str
    rubric: str


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _boundary(cell: dict, word: str) -> bool:
    return cell.get("cell_type") == "raw" and _source(cell).strip().startswith(word)


def is_rubric(cell: dict) -> bool:
    """Whether ``cell`` is a rubric cell (markdown starting with ``**Rubric``)."""
    return cell.get("cell_type") == "markdown" and _source(cell).lstrip().startswith(RUBRIC_MARK)


def from_master(master: Path) -> list[WrittenQuestion]:
    """The written questions of the master notebook ``master``, in notebook order."""
    cells = json.loads(master.read_text(encoding="utf-8"))["cells"]
    found, config, parts, block = [], None, None, None
    for cell in cells:
        if _boundary(cell, "# BEGIN QUESTION"):
            text = _source(cell).strip().removeprefix("# BEGIN QUESTION")
            config = yaml.safe_load(text) or {}
            parts, block = {"prompt": [], "solution": [], "rubric": []}, "prompt"
        elif config is None:
            continue
        elif _boundary(cell, "# END QUESTION"):
            if config.get("manual"):
                found.append(WrittenQuestion(
                    str(config["name"]), float(config.get("points", 1)),
                    float(config.get("step", DEFAULT_STEP)),
                    *("\n\n".join(parts[k]).strip() for k in ("prompt", "solution", "rubric"))))
            config = None
        elif _boundary(cell, "# BEGIN SOLUTION"):
            block = "solution"
        elif _boundary(cell, "# END SOLUTION") or _boundary(cell, "# BEGIN TESTS"):
            block = None
        elif cell.get("cell_type") == "markdown" and block:
            parts["rubric" if block == "solution" and is_rubric(cell) else block].append(
                _source(cell))
    return found


def listing(questions: list[WrittenQuestion]) -> str:
    """``LISTING``'s text for ``questions``: each one's name and points only."""
    return json.dumps([{"name": q.name, "points": q.points} for q in questions], indent=1) + "\n"


def listed(text: str | bytes | None) -> list[tuple[str, float]]:
    """``(name, points)`` of each written question in a ``LISTING`` text; ``[]`` for none, a
    zip made before it listed them, or a listing that is not one (never raises)."""
    try:
        found = json.loads(text) if text else []
        return [(str(q["name"]), float(q["points"])) for q in found]
    except (ValueError, TypeError, KeyError):
        return []
