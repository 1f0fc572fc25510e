"""A name the tests look up, told apart from the one the notebook defined instead: a typo
(``square_grad`` for ``square_grads``, ``countSaved`` for ``count_saved``) or a look-alike
character (a Cyrillic ``е`` typed for a Latin ``e``, which Python keeps apart), so that "not
defined" does not leave a student who did write the function guessing.

Small and pure: ``near_name`` picks the candidate, ``difference`` says how it differs."""

from __future__ import annotations

import difflib
import unicodedata
from typing import Iterable

#: How alike (``difflib``'s ratio, case and underscores aside) a defined name must be to be
#: told as the one meant: ``square_grad`` for ``square_grads`` is 0.96, ``export_to_numpy``
#: for ``export_numpy`` 0.89, ``predictions`` for ``predict`` 0.78 (not told).
ALIKE = 0.85


def _folded(name: str) -> str:
    return name.casefold().replace("_", "")


def _likeness(wanted: str, name: str) -> float:
    if len(name) == len(wanted) and all(a == b or not b.isascii() for a, b in zip(wanted, name)):
        return 1.0  # only look-alike characters differ
    return difflib.SequenceMatcher(None, _folded(wanted), _folded(name)).ratio()


def near_name(wanted: str, defined: Iterable[str], taken: Iterable[str] = ()) -> str | None:
    """The defined name most like ``wanted`` (at least ``ALIKE``), or None. ``taken``: names
    the tests read themselves (``MyOp`` is no misspelt ``my_op``)."""
    skip = {wanted, *taken}
    scored = [(_likeness(wanted, name), name) for name in dict.fromkeys(defined)
              if name not in skip]
    best = max(scored, key=lambda pair: pair[0], default=(0.0, ""))
    return best[1] if best[0] >= ALIKE else None


def _character(c: str) -> str:
    code = f"U+{ord(c):04X}"
    return f"'{c}' ({code} {unicodedata.name(c, 'unnamed')})" if not c.isascii() else f"'{c}'"


def difference(wanted: str, found: str) -> str | None:
    """How ``found`` differs from ``wanted`` when only look-alike characters do, by position and
    Unicode name (``"character 10 is 'е' (U+0435 CYRILLIC SMALL LETTER IE), not 'e'"``); None
    for a plain misspelling, which shows by itself."""
    if len(found) != len(wanted):
        return None
    odd = [(i, a, b) for i, (a, b) in enumerate(zip(wanted, found)) if a != b]
    if not odd or any(b.isascii() for _, _, b in odd):
        return None
    return "; ".join(f"character {i + 1} is {_character(b)}, not '{a}'" for i, a, b in odd[:3])
