"""The one environment variable that reproduces a grade, and its one reader. Standard library
only: the grading container's first steps read it before anything else of the package (the
checks, numpy) is imported (``running.entry.startup``)."""

from __future__ import annotations

from typing import Mapping

#: The environment variable that reproduces a grade: the seed to draw the hidden inputs from.
SEED_VARIABLE = "AUTOGRADER_SEED"


def seed_from(env: Mapping[str, str]) -> int | None:
    """The seed ``env`` sets (``AUTOGRADER_SEED``), or ``None`` when it sets none (unset or
    blank); the one reading of that variable (the entry points pass ``os.environ``).

    Raises:
        ValueError: one line, when it is set to something other than an integer.
    """
    text = env.get(SEED_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{SEED_VARIABLE} must be an integer, got {text!r}") from None
