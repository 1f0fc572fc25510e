"""The notebooks ``throughput.py`` grades, written from the tests' own helpers
(``tests/notebooks.py``: the solutions, the kept wrong variants, answer cells)."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import notebooks  # noqa: E402 - the tests' notebook helpers (variants, answer cells)


def mixed(assignments: tuple[str, ...], n: int, seed: int, folder: Path) -> dict[str, list[str]]:
    """Write ``n`` notebooks under ``folder/<assignment>/`` (split evenly, drawn with ``seed``):
    correct ones, ones with one of the project's wrong variants, ones whose answer cell
    crashes, and one that never finishes (a top-level ``while True``). Returns the kind of
    each."""
    rng = random.Random(seed)
    wrong = [v for v in notebooks.variants() if v.kind == "wrong"]
    kinds: dict[str, list[str]] = {}
    shutil.rmtree(folder, ignore_errors=True)
    for a_index, assignment in enumerate(assignments):
        count = n // len(assignments) + (1 if a_index < n % len(assignments) else 0)
        (folder / assignment).mkdir(parents=True)
        solution = notebooks.solution(assignment)
        questions = sorted(notebooks.answer_cells(solution))
        mine = [v for v in wrong if v.assignment == assignment]
        timeout_at = rng.randrange(count) if a_index == 0 else -1
        for i in range(count):
            roll = rng.random()
            if i == timeout_at:
                kind, nb = "timeout", notebooks.with_answer(
                    solution, rng.choice(questions), "while True:\n    pass\n")
            elif roll < 0.4:
                kind, nb = "correct", solution
            elif roll < 0.85:
                variant = rng.choice(mine)
                kind, nb = "wrong", notebooks.with_answer(solution, variant.question,
                                                          variant.source)
            else:
                kind, nb = "crash", notebooks.with_answer(
                    solution, rng.choice(questions),
                    "raise RuntimeError('a bug in the answer cell')\n")
            name = f"s{rng.randrange(10**6):06d}-{i:03d}.ipynb"
            nbformat.write(nb, folder / assignment / name)
            kinds.setdefault(kind, []).append(f"{assignment}/{name}")
    return kinds


def correct(assignment: str, count: int, folder: Path) -> Path:
    """``count`` copies of ``assignment``'s solution under ``folder/<assignment>/``."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / assignment).mkdir(parents=True)
    nb = notebooks.solution(assignment)
    for i in range(count):
        nbformat.write(nb, folder / assignment / f"correct-{i:03d}.ipynb")
    return folder
