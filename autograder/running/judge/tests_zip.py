"""The otter test cases of an autograder zip, as the sealed judge runs them. Reading them
needs neither torch nor the checks (a test's body imports them when it runs): the ``otter``
runner reads its points here without either."""

from __future__ import annotations

import functools
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TestSpec:
    """One otter test case, as the judge runs it."""

    question: str
    name: str
    hidden: bool
    points: float
    body: Any  # otter's ``test_case`` object; ``call_func(env)`` runs it



def load_tests(zip_path: Path) -> list[TestSpec]:
    """Every test case of every question in ``zip_path``, in otter's order (file name, then
    position), with the points otter resolves for it. The zip is the staff's own build output:
    it is trusted, unlike anything a submission sends."""
    return list(tests_of_zip(Path(zip_path).read_bytes()))


@functools.lru_cache(maxsize=8)
def tests_of_zip(data: bytes) -> tuple[TestSpec, ...]:
    """``load_tests`` of a zip given as bytes, kept for the next job with the same zip (the
    ``docker-fork`` judge serves every submission of a run: ~5 ms of otter's parsing each)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return tuple(_specs({member: zf.read(member).decode("utf-8")
                             for member in zf.namelist()
                             if member.startswith("tests/") and member.endswith(".py")}))


def load_test_folder(folder: Path) -> list[TestSpec]:
    """The same from an unpacked zip's ``tests/`` folder (``/autograder/source/tests``)."""
    return _specs({f"tests/{p.name}": p.read_text(encoding="utf-8")
                   for p in Path(folder).glob("*.py")})


def _specs(files: dict[str, str]) -> list[TestSpec]:
    from otter.test_files import ExceptionTestFile

    specs = []
    for member in sorted(files):
        test_file = ExceptionTestFile.from_string(files[member], member)
        for tc in test_file.test_cases:
            specs.append(TestSpec(test_file.name, tc.name, bool(tc.hidden),
                                  float(tc.points or 0.0), tc.body))
    return specs


def points_per_question(tests: list[TestSpec]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for spec in tests:
        totals[spec.question] = totals.get(spec.question, 0.0) + spec.points
    return totals
