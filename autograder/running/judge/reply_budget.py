"""What one reply of a worker may cost the judge, decided on its bytes before it is parsed:
its length, its number of values and containers, and what ``json.loads`` would allocate for it
(docs/decoding-budgets.md). The worker is the student's process, so its replies are untrusted.
"""

from __future__ import annotations

# One line of the worker's, read before anything is parsed: the largest value the decoding
# budgets admit (16 MiB of tensor storage, 21.3 MiB as base64) fits; an answer to any question
# is under 100 kB (docs/decoding-budgets.md).
MAX_REPLY_BYTES = 32 * 2**20
# What parsing one reply may build, counted on its bytes before ``json.loads``: every JSON value
# but the first of its list or object follows a comma, so commas bound the numbers and strings,
# and ``[``/``{`` the lists and objects (both counted inside strings too: an over-count only).
# ``wire.Budget`` then bounds what is built from it.
MAX_REPLY_VALUES = 3_000_000
MAX_REPLY_CONTAINERS = 600_000
# And what those values and the strings' characters cost together (``parse_cost``, an upper
# bound of what ``json.loads`` allocates, measured in tests/test_wire_budgets.py): a reply
# that would cost more is refused unparsed. Parsed replies are never held together: a request
# answered by several lines (``stream``) has each decoded before the next is read.
MAX_REPLY_MEMORY = 128 * 2**20
PARSE_TEXT_COST = 2  # per byte: the text ``json.loads`` decodes the line to, and its strings
# per byte of a line with a ``\u`` escape: one escape makes its whole string UCS-4 (4 bytes a
# character, the attack in docs/decoding-budgets.md), built in pieces that are joined
PARSE_WIDE_COST = 8
PARSE_VALUE_COST = 64  # per comma: an object header (a str's is 49-76 bytes) and its slot
PARSE_CONTAINER_COST = 96  # per ``[`` or ``{``: an empty dict is 64 bytes, plus gc and slot
PARSE_BASE_COST = 2**20  # the scanner's own, and an int of up to 4,300 digits (Python's cap)


def parse_cost(line: bytes, values: int, containers: int) -> int:
    """An upper bound of the bytes ``json.loads(line)`` allocates, for an ASCII ``line`` with
    ``values`` commas and ``containers`` brackets and braces."""
    text = PARSE_WIDE_COST if b"\\u" in line else PARSE_TEXT_COST
    return (PARSE_BASE_COST + len(line) * text + (values + 1) * PARSE_VALUE_COST
            + containers * PARSE_CONTAINER_COST)
