"""Where each assignment's files live in the project tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")


@dataclass(frozen=True)
class Layout:
    """Paths for one project checkout.

    Attributes:
        root: the project root (the folder holding ``assignments/``).
        build: where build outputs go (autograder zips, otter's raw output); never committed.
    """

    root: Path
    build: Path

    @classmethod
    def at(cls, root: Path | str, build: Path | str | None = None) -> "Layout":
        root = Path(root).resolve()
        return cls(root, Path(build).resolve() if build else root / "build")

    def master(self, assignment: str) -> Path:
        return self.root / "assignments" / assignment / f"{assignment}.ipynb"

    def templates(self, assignment: str) -> Path:
        return self.root / "student_templates" / assignment

    def solution(self, assignment: str) -> Path:
        return self.root / "solutions" / f"{assignment}.ipynb"

    def otter_output(self, assignment: str) -> Path:
        return self.build / assignment / "otter-assign"

    def zip(self, assignment: str) -> Path:
        return self.build / assignment / f"{assignment}-autograder.zip"


def check_assignment(name: str) -> str:
    """``name`` if it is a known assignment, else a ``ValueError`` naming the known ones."""
    if name not in ASSIGNMENTS:
        raise ValueError(f"unknown assignment {name!r}; known: {', '.join(ASSIGNMENTS)}")
    return name
