"""Where each assignment's files live in the project tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ASSIGNMENTS = ("autograd-exercises", "autograd-porting")
PROJECT_ENV = "AUTOGRADER_PROJECT"


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


def find_project(given: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The project root the staff command works on, whatever the current folder: ``given``
    (``--project``), else ``$AUTOGRADER_PROJECT``, else the checkout this package was installed
    from (``pip install -e .``: the folder above ``autograder/``), else the current folder.
    ``ValueError`` (one line) when the chosen folder holds no ``assignments/``."""
    package_checkout = Path(__file__).resolve().parent.parent.parent
    candidates = ([(Path(given), "--project")] if given else
                  [(Path(os.environ[PROJECT_ENV]), PROJECT_ENV)] if os.environ.get(PROJECT_ENV)
                  else [(package_checkout, "the installed package's checkout"),
                        (cwd or Path.cwd(), "the current folder")])
    for folder, _ in candidates:
        if (folder / "assignments").is_dir():
            return folder.resolve()
    tried = " nor ".join(f"{source} ({folder})" for folder, source in candidates)
    raise ValueError(f"no autograder project (a folder with assignments/): neither {tried} has "
                     f"one; pass --project or set {PROJECT_ENV}" if len(candidates) > 1 else
                     f"{tried}: not an autograder project (no assignments/ folder)")


def check_assignment(name: str) -> str:
    """``name`` if it is a known assignment, else a ``ValueError`` naming the known ones."""
    if name not in ASSIGNMENTS:
        raise ValueError(f"unknown assignment {name!r}; known: {', '.join(ASSIGNMENTS)}")
    return name
