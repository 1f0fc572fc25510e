"""The points a master declares, checked before ``otter assign`` runs: a question's ``points:``
must equal the sum of its tests' (otter stops on a mismatch with a long traceback that does not
name the question), and a written (``manual``) question's prompt must tell students its points
(the template shows no points otherwise)."""

from __future__ import annotations

import re

import nbformat
import yaml

_CONFIG = re.compile(r'"""\s*# BEGIN TEST CONFIG\n(.*?)"""\s*# END TEST CONFIG', re.S)


def _yaml(text: str) -> dict:
    try:
        found = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return found if isinstance(found, dict) else {}


def questions(nb: nbformat.NotebookNode) -> list[dict]:
    """Each question of a master: its config (``name``, ``points``, ``manual``), its tests'
    points (``None`` for a test that gives none) and its prompts' text."""
    found, current = [], None
    for cell in nb.cells:
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type == "raw" and source.lstrip().startswith("# BEGIN QUESTION"):
            current = {**_yaml(source.split("\n", 1)[1] if "\n" in source else ""),
                       "tests": [], "prompt": ""}
            found.append(current)
        elif cell.cell_type == "raw" and source.lstrip().startswith("# END QUESTION"):
            current = None
        elif current is not None and cell.cell_type == "code":
            config = _CONFIG.search(source)
            if config:
                current["tests"].append(_yaml(config.group(1)).get("points"))
        elif current is not None and cell.cell_type == "markdown":
            current["prompt"] += source + "\n"
    return found


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """One line per question whose points are inconsistent, naming it and the numbers."""
    said = []
    for q in questions(nb):
        name, points, tests = q.get("name", "?"), q.get("points"), q["tests"]
        if not isinstance(points, (int, float)):
            continue
        if q.get("manual"):
            if not re.search(rf"\b{points:g} points?\b", q["prompt"]):
                said.append(f"question {name} (written, {points:g} points): its prompt does not "
                            f"say so; write e.g. '**Written ({points:g} points, graded by "
                            f"hand).**'")
        elif tests and all(isinstance(t, (int, float)) for t in tests) \
                and abs(sum(tests) - points) > 1e-9:
            said.append(f"question {name}: points: {points:g} in its BEGIN QUESTION cell, but "
                        f"its tests' points sum to {sum(tests):g} "
                        f"({' + '.join(f'{t:g}' for t in tests)}); make them equal")
    return said
